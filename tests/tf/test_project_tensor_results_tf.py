"""TFR103 on the result of another module's function, under TensorFlow:
traced, the original prints once, at trace time, and a symbolic tensor; the
rewrite traced prints each call's value, as the original does eagerly."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.test_project_tensor_results import _write
from tests.tf.fdcapture import capture_fds

from tfrewrite.pipeline.engine import RunOptions, run

from .equivalence import import_from

pytestmark = pytest.mark.tensorflow


def _trainer(root, name: str):
    train = import_from(root, "train", ("losses",))
    import tensorflow as tf

    tf.keras.utils.set_random_seed(3)
    model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
    model.build((None, 2))
    return train.Trainer(model, tf.keras.optimizers.SGD(0.1))


def _gap_lines(step, batches) -> list[str]:
    with capture_fds() as out:
        for x, y in batches:
            step(x, y)
    return [line for line in out.stdout_lines() if line.startswith("gap")]


def test_the_rewrite_prints_the_gap_every_call_as_eagerly(tmp_path) -> None:
    import tensorflow as tf

    files = _write(tmp_path)
    batches = [(tf.fill([2, 2], float(i)), tf.ones([2, 2])) for i in range(3)]
    original = _trainer(tmp_path, "original")
    undecorated = type(original).step.python_function
    eager = _gap_lines(lambda x, y: undecorated(original, x, y), batches)
    traced = _gap_lines(original.step, batches)
    assert len(eager) == 3 and len(traced) == 1 and "Tensor(" in traced[0]
    fixed_run = run(files, RunOptions(rule_codes=("TFR103",), root=str(tmp_path), fix=True), jobs=1)
    for result in fixed_run.files:
        if result.fixed_source is not None:
            Path(result.path).write_text(result.fixed_source)
    assert 'tf.print("gap", gap' in (tmp_path / "train.py").read_text()
    fixed = _trainer(tmp_path, "fixed")
    printed = [_value(line) for line in _gap_lines(fixed.step, batches)]
    assert printed == pytest.approx([_value(line) for line in eager], rel=1e-5)


def _value(line: str) -> float:
    """The number a `gap` line shows: `gap -1` (`tf.print`) or `gap
    tf.Tensor(-1.0, shape=(), dtype=float32)` (`print` of an eager tensor)."""
    return float(line.removeprefix("gap ").removeprefix("tf.Tensor(").split(",")[0])
