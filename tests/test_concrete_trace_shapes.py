"""TFR107 where a trace may see an unknown dimension, not where every trace
sees whole shapes: a model's `call` run only by a step a Python loop calls
(traced once TFR302 decorates it, with each batch's shape) reads the batch
size it is given. Once a module of the project hands a model to Keras
(`fit`, `predict`, `build`), or imports the model's module and does, Keras
traces `call` with the batch dimension open."""

from __future__ import annotations

from pathlib import Path

from tests.concrete_shapes import MODEL_AND_LOOP
from tests.projects import check_project

CODES = ("TFR107", "TFR302")


def _found(tmp_path: Path, files: dict[str, str]) -> list[tuple[str, int, str]]:
    findings = check_project(tmp_path, files, CODES)
    return sorted((Path(f.path).name, f.start.line, f.code) for f in findings)


def test_a_model_only_a_looped_step_runs(tmp_path: Path) -> None:
    assert _found(tmp_path, {"train.py": MODEL_AND_LOOP}) == [("train.py", 19, "TFR302")]


def test_the_step_decorated_by_fix_reads_whole_shapes_too(tmp_path: Path) -> None:
    """After `fix` the step is a `tf.function` the loop calls: still none."""
    source = MODEL_AND_LOOP.replace("\ndef train_step", "\n@tf.function\ndef train_step")
    assert _found(tmp_path, {"train.py": source}) == []


def test_a_plain_python_fit_is_no_keras_loop(tmp_path: Path) -> None:
    source = (
        MODEL_AND_LOOP
        + """

class Vocab:
    def fit(self, lines):
        self.words = sorted({w for line in lines for w in line.split()})


vocab = Vocab()
vocab.fit(["a b", "b c"])
"""
    )
    assert _found(tmp_path, {"train.py": source}) == [("train.py", 19, "TFR302")]


def test_fit_in_the_module_traces_call_with_an_open_batch(tmp_path: Path) -> None:
    source = (
        MODEL_AND_LOOP
        + """

model.compile(optimizer="sgd", loss="mse")
"""
    )
    found = _found(tmp_path, {"train.py": source})
    assert ("train.py", 11, "TFR107") in found


def test_fit_in_a_module_importing_the_model(tmp_path: Path) -> None:
    script = """
        import tensorflow as tf
        from models import Decoder

        net = Decoder()
        net.predict(tf.ones((5, 3)))
    """
    found = _found(tmp_path, {"models.py": MODEL_AND_LOOP, "serve.py": script})
    assert ("models.py", 11, "TFR107") in found


def test_a_relaxed_or_signed_step_may_see_an_open_batch(tmp_path: Path) -> None:
    for decorator in (
        "@tf.function(reduce_retracing=True)",
        "@tf.function(input_signature=[tf.TensorSpec([None, 3]), tf.TensorSpec([None, 2])])",
    ):
        source = MODEL_AND_LOOP.replace("\ndef train_step", f"\n{decorator}\ndef train_step")
        assert ("train.py", 11, "TFR107") in _found(tmp_path, {"train.py": source}), decorator
