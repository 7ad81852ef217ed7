"""Before/after tests for the training-loop rules (TFR301-TFR307), including
the cross-module cases that only a project run (`engine.run`) can see."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tfrewrite.analysis.index import build_index
from tfrewrite.analysis.project import compute_facts
from tfrewrite.api import check_source, fix_source
from tfrewrite.engine import InputFile, RunOptions, run
from tfrewrite.rules import RULES_BY_CODE

TFR3 = ("TFR301", "TFR302", "TFR303", "TFR304", "TFR305", "TFR306", "TFR307")


def _d(text: str) -> str:
    return textwrap.dedent(text).lstrip()


def _codes(source: str, select=("TFR3",)) -> list[str]:
    return [f.code for f in check_source(_d(source), select=list(select))]


def _project(tmp_path: Path, files: dict[str, str], fix: bool = True, unsafe: bool = False):
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_d(text))
    inputs = [InputFile(str(tmp_path / name)) for name in files]
    options = RunOptions(rule_codes=TFR3, root=str(tmp_path), fix=fix, unsafe_fixes=unsafe)
    return run(inputs, options, jobs=1)


LOSSES = """
    import tensorflow as tf


    @tf.function(jit_compile=True)
    def dice(labels, preds):
        return tf.reduce_mean(tf.square(labels - preds))


    @tf.function
    def normalize(images):
        return images / 255.0
"""

TRAIN = """
    import tensorflow as tf

    from pkg.losses import dice


    def train_step(model, optimizer, x, y):
        with tf.GradientTape() as tape:
            loss = dice(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss


    def fit(model, optimizer, dataset):
        for x, y in dataset.batch(32):
            train_step(model, optimizer, x, y)
"""


# -- pass 1 / project facts --------------------------------------------------------------


def test_index_records_losses_differentiated_in_a_tape():
    index = build_index(_d(TRAIN), "pkg/train.py", "pkg.train")
    assert index.opens_gradient_tape
    assert [(t.callee, t.function) for t in index.tape_losses] == [
        ("pkg.losses.dice", "train_step")
    ]


def test_two_argument_call_not_differentiated_is_not_a_loss():
    source = """
        import tensorflow as tf

        def step(x, w):
            with tf.GradientTape() as tape:
                h = dense(x, w)
                loss = tf.reduce_sum(h)
            return tape.gradient(loss, w)
    """
    assert build_index(_d(source), "m.py", "m").tape_losses == []


def test_project_facts_mark_a_decorated_loss_used_in_another_module(tmp_path):
    losses = build_index(_d(LOSSES), "pkg/losses.py", "pkg.losses")
    train = build_index(_d(TRAIN), "pkg/train.py", "pkg.train")
    facts = compute_facts([losses, train])
    assert facts.for_path("pkg/losses.py")["dice"].is_loss
    assert not facts.for_path("pkg/losses.py")["normalize"].is_loss
    assert train.loss_decorator_options == {"pkg.losses.dice": {"jit_compile": "True"}}


# -- TFR301 / TFR302 across modules ----------------------------------------------------------


def test_decorator_moves_from_a_loss_in_one_module_to_the_step_in_another(tmp_path):
    result = _project(tmp_path, {"pkg/losses.py": LOSSES, "pkg/train.py": TRAIN})
    fixed = {Path(r.path).name: r.fixed_source for r in result.files}
    assert fixed["losses.py"] == _d(LOSSES).replace("@tf.function(jit_compile=True)\n", "")
    assert (
        "@tf.function(jit_compile=True, reduce_retracing=True)\ndef train_step("
        in fixed["train.py"]
    )
    assert sorted(f.code for f in result.fixes_applied) == ["TFR301", "TFR302"]
    assert result.findings == []


def test_cross_module_options_survive_a_training_fix_in_an_earlier_round(tmp_path):
    """TFR304 edits the call inside the step in round 1; TFR302 decorates the
    step in round 2 and must still carry the loss's `jit_compile`, a fact
    only the whole project knows."""
    train = TRAIN.replace("model(x, training=True)", "model(x)")
    result = _project(tmp_path, {"pkg/losses.py": LOSSES, "pkg/train.py": train}, unsafe=True)
    fixed = {Path(r.path).name: r.fixed_source for r in result.files}
    assert (
        "@tf.function(jit_compile=True, reduce_retracing=True)\ndef train_step("
        in fixed["train.py"]
    )
    assert "model(x, training=True)" in fixed["train.py"]
    assert result.findings == []


def test_loss_in_another_module_is_unknown_to_a_single_file_check():
    assert _codes(LOSSES, ["TFR301"]) == []


def test_a_loss_only_compiled_elsewhere_loses_its_decorator(tmp_path):
    train = """
        import keras
        from pkg.losses import dice

        model = keras.Sequential([keras.layers.Dense(1)])
        model.compile(optimizer="sgd", loss=dice)
    """
    result = _project(tmp_path, {"pkg/losses.py": LOSSES, "pkg/train.py": train}, fix=False)
    assert [(Path(f.path).name, f.code, f.start.line) for f in result.findings] == [
        ("losses.py", "TFR301", 4)
    ]


def test_wrapped_loss_is_unwrapped_in_the_module_that_wraps_it():
    source = """
        import tensorflow as tf
        from pkg.losses import dice

        fast_dice = tf.function(dice, jit_compile=True)

        def train_step(x, y):
            with tf.GradientTape() as tape:
                loss = fast_dice(y, model(x, training=True))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
    """
    fixed = fix_source(_d(source), select=["TFR301"])
    assert "fast_dice = dice\n" in fixed


def test_same_file_move_keeps_options_when_training_flag_is_also_fixed():
    source = """
        import tensorflow as tf

        @tf.function(jit_compile=True)
        def loss_fn(labels, logits):
            return tf.reduce_mean(tf.square(labels - logits))

        def train_step(x, y):
            with tf.GradientTape() as tape:
                loss = loss_fn(y, model(x))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))

        for x, y in batches:
            train_step(x, y)
    """
    fixed = fix_source(_d(source), select=["TFR3"], unsafe_fixes=True)
    assert "@tf.function(jit_compile=True)\ndef train_step(x, y):" in fixed
    assert "def loss_fn" in fixed and fixed.count("@tf.function") == 1
    assert "model(x, training=True)" in fixed
    assert check_source(fixed, select=["TFR3"]) == []


def test_step_not_called_from_a_loop_is_left_alone():
    source = """
        import tensorflow as tf

        def train_step(x, y):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(model(x, training=True) - y)
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
    """
    assert _codes(source, ["TFR302"]) == []


def test_step_with_drop_remainder_gets_no_reduce_retracing():
    source = """
        import tensorflow as tf

        def train_step(x, y):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(model(x, training=True) - y)
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))

        for x, y in ds.batch(32, drop_remainder=True):
            train_step(x, y)
    """
    assert "@tf.function\ndef train_step" in fix_source(_d(source), select=["TFR302"])


def test_step_fed_by_range_slicing_gets_reduce_retracing():
    source = """
        import tensorflow as tf

        def train_step(x, y):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(model(x, training=True) - y)
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))

        for i in range(0, len(xs), 64):
            train_step(xs[i : i + 64], ys[i : i + 64])
    """
    assert "@tf.function(reduce_retracing=True)\ndef train_step" in fix_source(
        _d(source), select=["TFR302"]
    )


def test_refused_step_names_the_side_effect_line():
    [finding] = check_source(
        textwrap.dedent(RULES_BY_CODE["TFR302"].examples[1].before), select=["TFR302"]
    )
    assert finding.fix is None and "line 8" in finding.message and "print" in finding.message


# -- TFR303 ---------------------------------------------------------------------------------


def test_inline_loop_in_a_function_passes_loop_names_and_returns_used_ones():
    source = """
        import tensorflow as tf

        def fit(model, optimizer, batches, epochs):
            history = []
            for epoch in range(epochs):
                for step, (x, y) in enumerate(batches):
                    with tf.GradientTape() as tape:
                        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
                    grads = tape.gradient(loss, model.trainable_variables)
                    optimizer.apply_gradients(zip(grads, model.trainable_variables))
                    history.append(loss.numpy())
            return history
    """
    expected = """
        import tensorflow as tf

        def fit(model, optimizer, batches, epochs):
            history = []

            @tf.function
            def train_step(x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
                return loss

            for epoch in range(epochs):
                for step, (x, y) in enumerate(batches):
                    loss = train_step(x, y)
                    history.append(loss.numpy())
            return history
    """
    assert fix_source(_d(source), select=["TFR303"], unsafe_fixes=True) == _d(expected)
    # A safe-only run leaves it (the fix is unsafe) but still reports it.
    assert fix_source(_d(source), select=["TFR303"]) == _d(source)
    assert _codes(source, ["TFR303"]) == ["TFR303"]


def test_inline_loop_with_break_is_refused():
    source = """
        import tensorflow as tf

        for x, y in batches:
            with tf.GradientTape() as tape:
                loss = loss_fn(y, model(x, training=True))
            grads = tape.gradient(loss, model.trainable_variables)
            if loss < 0.01:
                break
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
    """
    [finding] = check_source(_d(source), select=["TFR303"])
    assert finding.fix is None and "leaves the loop body" in finding.message


def test_inline_loop_inside_traced_function_is_not_extracted():
    source = """
        import tensorflow as tf

        @tf.function
        def train_epoch(batches):
            for x, y in batches:
                with tf.GradientTape() as tape:
                    loss = loss_fn(y, model(x, training=True))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
    """
    assert _codes(source, ["TFR303"]) == []


# -- TFR304 / TFR305 -------------------------------------------------------------------------


def test_training_flag_added_in_inline_loop_and_keyword_calls():
    source = """
        import keras
        import tensorflow as tf

        classifier = keras.Sequential([keras.layers.Dropout(0.5), keras.layers.Dense(3)])
        for x, y in batches:
            with tf.GradientTape() as tape:
                loss = loss_fn(y, classifier(x, mask=None))
            grads = tape.gradient(loss, classifier.trainable_variables)
            optimizer.apply_gradients(zip(grads, classifier.trainable_variables))
    """
    fixed = fix_source(_d(source), select=["TFR304"], unsafe_fixes=True)
    assert "classifier(x, mask=None, training=True)" in fixed


def test_training_flag_not_reported_for_plain_functions():
    source = """
        import tensorflow as tf

        def train_step(x, y):
            with tf.GradientTape() as tape:
                h = preprocess(x)
                loss = loss_fn(y, model(h, training=True))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
    """
    assert _codes(source, ["TFR304"]) == []


def test_loss_outside_tape_names_the_line():
    [finding] = check_source(
        textwrap.dedent(RULES_BY_CODE["TFR305"].examples[0].before), select=["TFR305"]
    )
    assert "line 7" in finding.message and "line 5" in finding.message
    assert finding.start.line == 8 and finding.fix is None


def test_loss_reassigned_inside_a_later_tape_is_fine():
    source = """
        import tensorflow as tf

        with tf.GradientTape(persistent=True) as tape:
            loss = f(x)
        with tape:
            loss = loss * 2.0
        grads = tape.gradient(loss, variables)
    """
    assert _codes(source, ["TFR305"]) == []


# -- TFR306 / TFR307 -------------------------------------------------------------------------


def test_metric_average_in_training_loop():
    source = """
        import numpy as np

        accs = []
        for x, y in train_ds:
            acc = train_step(x, y)
            accs.append(acc)
        mean_acc = np.mean(accs)
    """
    [finding] = check_source(_d(source), select=["TFR306"])
    assert finding.start.line == 7 and "update_state" in finding.message and finding.fix is None


def test_eager_switch_is_not_reported_in_tests(tmp_path):
    source = "import tensorflow as tf\n\ntf.config.run_functions_eagerly(True)\n"
    assert [f.code for f in check_source(source, path="train.py", select=["TFR307"])] == ["TFR307"]
    assert check_source(source, path="test_train.py", select=["TFR307"]) == []
    result = _project(tmp_path, {"tests/helpers.py": source, "train.py": source}, fix=False)
    assert [Path(f.path).name for f in result.findings] == ["train.py"]


def test_eager_switch_on_a_line_with_other_statements():
    source = "import tensorflow as tf\n\ntf.config.run_functions_eagerly(True); x = 1\n"
    assert (
        fix_source(source, select=["TFR307"], unsafe_fixes=True)
        == "x = 1\n"  # the fix leaves TensorFlow unused: its import goes
    )


def test_files_without_candidates_are_not_parsed(tmp_path):
    plain = """
        import tensorflow as tf

        def scale(x):
            return x * 2.0
    """
    result = _project(tmp_path, {"plain.py": plain}, fix=False)
    assert result.parsed == 0 and result.findings == []


def test_every_tfr3_rule_is_registered_and_skips_untraced_filtering():
    for code in TFR3:
        rule = RULES_BY_CODE[code]
        assert rule.needs_traced_code is False


def test_step_driven_from_a_loop_in_another_module(tmp_path):
    steps = """
        import tensorflow as tf


        def train_step(model, optimizer, x, y):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            return loss
    """
    train = """
        import tensorflow as tf

        from pkg.steps import train_step


        def fit(model, optimizer, dataset: tf.data.Dataset):
            batches = dataset.batch(128)
            for x, y in batches:
                train_step(model, optimizer, x, y)
    """
    result = _project(tmp_path, {"pkg/steps.py": steps, "pkg/train.py": train})
    fixed = {Path(r.path).name: r.fixed_source for r in result.files}
    assert "@tf.function(reduce_retracing=True)\ndef train_step(" in fixed["steps.py"]
    assert fixed["train.py"] is None


def test_train_step_method_of_a_plain_trainer_is_decorated():
    source = """
        import tensorflow as tf

        class Trainer:
            def train_step(self, x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(self.model(x, training=True) - y))
                grads = tape.gradient(loss, self.model.trainable_variables)
                self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))

            def fit(self, batches):
                for x, y in batches:
                    self.train_step(x, y)
    """
    assert "    @tf.function\n    def train_step(self, x, y):" in fix_source(
        _d(source), select=["TFR302"]
    )


def test_dataset_built_by_a_function_feeds_a_short_batch():
    source = """
        import tensorflow as tf

        def make_dataset():
            return tf.data.Dataset.from_tensor_slices((xs, ys)).batch(64)

        def train_step(x, y):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(model(x, training=True) - y)
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))

        dataset = make_dataset()
        for x, y in dataset:
            train_step(x, y)
    """
    assert "@tf.function(reduce_retracing=True)\ndef train_step" in fix_source(
        _d(source), select=["TFR302"]
    )


def test_loss_wrapped_in_its_module_and_differentiated_in_another(tmp_path):
    losses = """
        import tensorflow as tf


        def dice(labels, preds):
            return tf.reduce_mean(tf.square(labels - preds))


        dice = tf.function(dice, reduce_retracing=True)

        SMOOTH = 1.0
    """
    train = """
        import tensorflow as tf

        from pkg import losses


        def train_step(model, optimizer, x, y):
            with tf.GradientTape() as tape:
                loss = losses.dice(y, model(x, training=True))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))


        def fit(model, optimizer, batches):
            for x, y in batches:
                train_step(model, optimizer, x, y)
    """
    result = _project(tmp_path, {"pkg/losses.py": losses, "pkg/train.py": train})
    fixed = {Path(r.path).name: r.fixed_source for r in result.files}
    assert "tf.function" not in fixed["losses.py"]
    assert fixed["losses.py"].endswith("preds))\n\n\nSMOOTH = 1.0\n")
    assert "@tf.function(reduce_retracing=True)\ndef train_step(" in fixed["train.py"]


def test_options_survive_when_training_flag_is_fixed_in_the_same_step(tmp_path):
    train = TRAIN.replace("model(x, training=True)", "model(x)")
    result = _project(
        tmp_path, {"pkg/losses.py": LOSSES, "pkg/train.py": train}, fix=True, unsafe=True
    )
    fixed = {Path(r.path).name: r.fixed_source for r in result.files}
    assert (
        "@tf.function(jit_compile=True, reduce_retracing=True)\ndef train_step("
        in fixed["train.py"]
    )
    assert "model(x, training=True)" in fixed["train.py"]
    assert result.findings == []


def test_inline_loop_takes_the_loss_options_when_training_flag_is_also_fixed():
    source = """
        import tensorflow as tf

        @tf.function(jit_compile=True)
        def loss_fn(labels, logits):
            return tf.reduce_mean(tf.square(labels - logits))

        for x, y in batches:
            with tf.GradientTape() as tape:
                loss = loss_fn(y, model(x))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
    """
    fixed = fix_source(_d(source), select=["TFR3"], unsafe_fixes=True)
    assert "@tf.function(jit_compile=True)\ndef train_step(x, y):" in fixed
    assert "loss = loss_fn(y, model(x, training=True))" in fixed
    assert "def loss_fn" in fixed and fixed.count("@tf.function") == 1
