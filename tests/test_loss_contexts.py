"""A loss runs traced wherever it runs: removing its own `@tf.function`
(TFR301) keeps every other context it is traced in (the `compile` that hands
it to `fit`, the train step that differentiates it), so every other hazard in
it is still found and fixed in the same `fix`, and `check` on the result is
clean. A decorated loss nothing traces otherwise keeps its decorator."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tfrewrite.api import check_source
from tfrewrite.facts.index import build_index
from tfrewrite.facts.project import compute_facts
from tfrewrite.facts.traced_function import OWN_DECORATOR
from tfrewrite.pipeline.engine import InputFile, RunOptions, run
from tfrewrite.pipeline.fix_rounds import _reindex
from tfrewrite.rules import RULE_CODES


def _d(text: str) -> str:
    return textwrap.dedent(text).lstrip()


# One hazard of each kind in decorated losses: a tensor `if`/`elif` ladder,
# NumPy maths on a tensor, a `print` under a tensor `if`.
LOSSES = _d(
    """
    import numpy as np
    import tensorflow as tf


    @tf.function
    def banded(y_true, y_pred):
        err = tf.reduce_mean(tf.abs(y_true - y_pred))
        if err < 0.2:
            return err
        elif err < 0.5:
            return err * 2.0
        else:
            return err * 3.0


    @tf.function
    def summed(y_true, y_pred):
        return np.mean(tf.reduce_sum(tf.square(y_true - y_pred), axis=-1))


    @tf.function
    def loud(y_true, y_pred):
        err = tf.reduce_mean(tf.square(y_true - y_pred))
        if err > 1.0:
            print("large", err)
        return err


    @tf.function
    def jittered(y_true, y_pred):
        err = tf.reduce_mean(tf.square(y_true - y_pred))
        if err > 1.0:
            err = err + np.random.normal(0.0, 0.01)
        return err
    """
)

COMPILE = _d(
    """
    import keras

    from losses import banded, jittered, loud, summed

    model = keras.Sequential([keras.layers.Dense(3)])
    model.compile(optimizer="sgd", loss=banded, metrics=[summed, loud, jittered])
    """
)

STEP = _d(
    """
    import tensorflow as tf

    from losses import banded, jittered, loud, summed


    def train(model, optimizer, batches):
        for x, y in batches:
            with tf.GradientTape() as tape:
                pred = model(x, training=True)
                loss = banded(y, pred) + summed(y, pred) + loud(y, pred) + jittered(y, pred)
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
    """
)


def _project(tmp_path: Path, files: dict[str, str], fix: bool, unsafe: bool = False):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    inputs = [InputFile(str(tmp_path / name)) for name in files]
    options = RunOptions(rule_codes=RULE_CODES, root=str(tmp_path), fix=fix, unsafe_fixes=unsafe)
    return run(inputs, options, jobs=1)


def _fixed(result, name: str) -> str:
    [text] = [r.fixed_source for r in result.files if Path(r.path).name == name]
    return text


def _decorator_lines(source: str) -> set[int]:
    return {n for n, line in enumerate(source.splitlines(), 1) if line == "@tf.function"}


def _waits_for_a_decorator(findings, source: str) -> list[str]:
    """Findings said to be fixed by removing a loss's decorator: none are,
    the loss stays traced."""
    return [
        f.message
        for f in findings
        for line in _decorator_lines(source)
        if f"until the fix on line {line} " in f.message
    ]


def test_a_compiled_loss_keeps_its_context_once_its_decorator_goes(tmp_path):
    files = {"losses.py": LOSSES, "train.py": COMPILE}
    checked = _project(tmp_path, files, fix=False)
    codes = sorted(f.code for f in checked.findings)
    assert codes == [
        *["TFR101"] * 4,
        *["TFR102", "TFR103", "TFR104"],
        *["TFR301"] * 4,
    ]
    assert _waits_for_a_decorator(checked.findings, LOSSES) == []
    # Safe fixes: `tf.print` where Keras may compile with XLA is unsafe, so
    # the print and the `if` around it stay, and stay reported.
    safe = _project(tmp_path, files, fix=True)
    text = _fixed(safe, "losses.py")
    assert "@tf.function" not in text
    assert "np.mean" not in text and "tf.reduce_mean(tf.reduce_sum(" in text
    assert "if err < 0.2" not in text and "elif" not in text
    assert "np.random" not in text and "err = tf.cond(" in text
    assert sorted(f.code for f in safe.findings) == ["TFR101", "TFR103"]
    (tmp_path / "losses.py").write_text(LOSSES)
    fixed = _project(tmp_path, files, fix=True, unsafe=True)
    text = _fixed(fixed, "losses.py")
    assert "if err" not in text and "tf.print(" in text
    assert fixed.findings == []
    again = _project(tmp_path, {"losses.py": text, "train.py": COMPILE}, fix=False)
    assert again.findings == []


def test_a_loss_differentiated_in_an_eager_loop_is_fixed_whole(tmp_path):
    """The loop is extracted into a traced step only by an unsafe fix. The
    loss's hazards are fixed either way; its decorator goes with the
    extraction, and stays while the loop runs eagerly (removed alone, it
    would leave the loss eager too: slower, not faster)."""
    for unsafe in (False, True):
        fixed = _project(tmp_path, {"losses.py": LOSSES, "train.py": STEP}, True, unsafe)
        text = _fixed(fixed, "losses.py")
        assert "if err" not in text and "np.mean" not in text and "tf.print(" in text
        assert "np.random" not in text
        leftover = [f for f in fixed.findings if f.path.endswith("losses.py")]
        if unsafe:
            assert "@tf.function" not in text
            assert leftover == []
        else:
            assert "@tf.function" in text
            assert [f.code for f in leftover] == ["TFR301"] * len(leftover) and leftover
            assert all(
                f.fix and "runs eagerly until the loop's step" in f.fix.message for f in leftover
            )


def test_a_loss_checked_without_its_training_code_keeps_its_decorator():
    """Nothing checked with it differentiates or compiles the loss: no step
    would trace it, so the decorator stays, and its hazards are fixed as the
    traced code it is."""
    findings = check_source(LOSSES)
    assert "TFR301" not in {f.code for f in findings}
    assert _waits_for_a_decorator(findings, LOSSES) == []


def test_an_eval_function_with_loss_parameters_keeps_its_decorator():
    source = _d(
        """
        import tensorflow as tf

        @tf.function
        def eval_step(y_true, y_pred):
            return tf.reduce_mean(tf.abs(y_true - y_pred))

        def evaluate(batches):
            return [eval_step(y, p) for y, p in batches]
        """
    )
    assert check_source(source, select=["TFR301"]) == []


def test_contexts_list_every_reason_and_the_step_a_loss_runs_in():
    losses = build_index(LOSSES, "losses.py", "losses")
    train = build_index(STEP, "train.py", "train")
    traced = compute_facts([losses, train]).for_path("losses.py")
    assert traced["banded"].contexts == (OWN_DECORATOR, "runs in the eager loop of `train`")
    rest = traced["banded"].without_own_decorator()
    assert rest is not None and rest.reason == "runs in the eager loop of `train`"
    alone = compute_facts([build_index(LOSSES, "losses.py", "losses")]).for_path("losses.py")
    assert alone["banded"].without_own_decorator() is None


def test_reindex_keeps_an_undecorated_loss_and_what_it_calls_traced():
    source = LOSSES + _d(
        """


        def scaled(x):
            print("scaling")
            return x * 2.0


        @tf.function
        def doubled(y_true, y_pred):
            return tf.reduce_mean(scaled(y_true - y_pred))


        def step(model, optimizer, x, y):
            with tf.GradientTape() as tape:
                loss = doubled(y, model(x))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
        """
    )
    index = build_index(source, "m.py", "m")
    traced = compute_facts([index]).for_path("m.py")
    _, now = _reindex(source.replace("@tf.function\ndef doubled", "def doubled"), index, traced)
    assert now["doubled"].reason == "runs in the train step `step`"
    assert "scaled" in now


def test_fixing_a_losses_module_alone_then_the_project_keeps_its_options(tmp_path):
    """`fix losses.py` alone sees no step for the loss: its `jit_compile`
    decorator stays; `fix` on the project then moves it, options and all,
    and a second `fix` changes nothing."""
    (tmp_path / "losses.py").write_text(
        _d(
            """
            import tensorflow as tf


            @tf.function(jit_compile=True)
            def dice(labels, preds):
                return tf.reduce_mean(tf.square(labels - preds))
            """
        )
    )
    (tmp_path / "train.py").write_text(
        _d(
            """
            import tensorflow as tf

            from losses import dice


            def train_step(model, optimizer, x, y):
                with tf.GradientTape() as tape:
                    loss = dice(y, model(x, training=True))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))


            def fit(model, optimizer, batches):
                for x, y in batches:
                    train_step(model, optimizer, x, y)
            """
        )
    )
    options = RunOptions(rule_codes=RULE_CODES, root=str(tmp_path), fix=True, unsafe_fixes=True)
    alone = run([InputFile(str(tmp_path / "losses.py"))], options, jobs=1)
    assert alone.fixes_applied == [] and alone.findings == []
    files = [InputFile(str(tmp_path / n)) for n in ("losses.py", "train.py")]
    fixed = run(files, options, jobs=1)
    assert sorted(f.code for f in fixed.fixes_applied) == ["TFR301", "TFR302"]
    assert "@tf.function(jit_compile=True" in _fixed(fixed, "train.py")
    assert "@tf.function" not in _fixed(fixed, "losses.py")
    for result in fixed.files:
        Path(result.path).write_text(result.fixed_source)
    again = run(files, options, jobs=1)
    assert again.fixes_applied == [] and again.findings == []


def test_a_loss_handed_to_a_wrapper_keeps_that_context():
    """A library loss handed to a Keras wrapper class runs where the wrapper
    runs it (in `fit`): its decorator is redundant, and the tensor `if` in it
    is converted in the same fix."""
    source = _d(
        """
        import tensorflow as tf


        @tf.function
        def pinball(y_true, y_pred):
            err = tf.reduce_mean(y_true - y_pred)
            if err > 0:
                return err * 0.9
            return -err * 0.1


        class Pinball(tf.keras.losses.Loss):
            def __init__(self):
                super().__init__()
                self.fn = pinball

            def call(self, y_true, y_pred):
                return self.fn(y_true, y_pred)
        """
    )
    index = build_index(source, "m.py", "m")
    traced = compute_facts([index]).for_path("m.py")["pinball"]
    assert traced.contexts == (
        OWN_DECORATOR,
        "called from traced `Pinball.call`",
        "bound to `self.fn` at line 15 of m.py",
    )
    findings = check_source(source)
    assert sorted(f.code for f in findings) == ["TFR101", "TFR301"]
    from tfrewrite.api import fix_source

    fixed = fix_source(source)
    assert "@tf.function" not in fixed and "if err" not in fixed and "tf.cond(" in fixed
    assert check_source(fixed) == []


def test_a_loss_a_factory_returns_runs_where_the_step_calls_it():
    """`loss_fn = make_loss(...)` in `main`, called by the decorated step
    nested there: the function `make_loss` returns runs traced, so the tensor
    `if` in it is a hazard (it was not seen before)."""
    source = _d(
        """
        import tensorflow as tf


        def make_loss(scale):
            def scaled_loss(hr, sr):
                err = tf.reduce_mean(tf.abs(hr - sr))
                if err > 1.0:
                    return err * scale
                return err

            return scaled_loss


        def main(model, optimizer, data):
            loss_fn = make_loss(2.0)

            @tf.function
            def train_step(x, y):
                with tf.GradientTape() as tape:
                    loss = loss_fn(y, model(x, training=True))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))

            for x, y in data:
                train_step(x, y)
        """
    )
    index = build_index(source, "m.py", "m")
    assert index.functions["make_loss"].returns == ["make_loss.scaled_loss"]
    traced = compute_facts([index]).for_path("m.py")
    assert traced["make_loss.scaled_loss"].reason == "called from traced `main.train_step`"
    assert [f.code for f in check_source(source, select=["TFR101"])] == ["TFR101"]


def test_a_step_decorated_in_one_file_brings_its_callees_fixes_in_another(tmp_path):
    """`train.py`'s loop step is decorated by TFR302; the helper it calls in
    `report.py` is checked as the traced code it will be and fixed in the same
    run, so a second `fix` changes nothing."""
    files = {
        "report.py": _d(
            """
            import tensorflow as tf


            def report(loss):
                print("loss", loss)
                return loss
            """
        ),
        "train.py": _d(
            """
            import tensorflow as tf

            from report import report


            def train_step(model, optimizer, x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
                return report(loss)


            def fit(model, optimizer, batches):
                for x, y in batches:
                    train_step(model, optimizer, x, y)
            """
        ),
    }
    fixed = _project(tmp_path, files, fix=True, unsafe=True)
    assert "tf.print(" in _fixed(fixed, "report.py")
    assert "@tf.function" in _fixed(fixed, "train.py")
    for result in fixed.files:
        Path(result.path).write_text(result.fixed_source)
    names = [InputFile(str(tmp_path / n)) for n in files]
    options = RunOptions(rule_codes=RULE_CODES, root=str(tmp_path), fix=True, unsafe_fixes=True)
    assert run(names, options, jobs=1).fixes_applied == []


@pytest.mark.parametrize(
    ("name", "measures"),
    [
        ("compute_accuracy", True),
        ("iouMetric", True),
        ("train_acc", True),
        ("mean_scores", True),
        ("_assymetric_focal_tversky_loss", False),  # "metric" inside a word
        ("accumulate_loss", False),
        ("focal_loss", False),
    ],
)
def test_a_name_measures_by_its_words_not_its_letters(name: str, measures: bool) -> None:
    from tfrewrite.facts.project import names_a_measure

    assert names_a_measure(name) is measures


def test_a_decorated_loss_whose_name_holds_metric_inside_a_word_is_a_loss() -> None:
    source = textwrap.dedent(
        """
        import tensorflow as tf


        @tf.function
        def assymetric_focal_loss(y_true, y_pred, *, gamma):
            return tf.reduce_mean(tf.pow(tf.abs(y_true - y_pred), gamma))


        class AssymetricFocal(tf.keras.losses.Loss):
            def call(self, y_true, y_pred):
                return assymetric_focal_loss(y_true, y_pred, gamma=0.5)
        """
    )
    assert [f.code for f in check_source(source, select=["TFR301"])] == ["TFR301"]
