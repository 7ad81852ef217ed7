"""Before/after tests for the training-loop rules (TFR301-TFR307), including
the cross-module cases that only a project run (`engine.run`) can see."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tfrewrite.api import check_source, fix_source, fix_source_with_findings
from tfrewrite.facts.index import build_index
from tfrewrite.facts.project import compute_facts
from tfrewrite.pipeline.engine import InputFile, RunOptions, run
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


def test_decorated_loss_nothing_calls_keeps_its_decorator():
    """`dice`'s parameters say it is a loss, but nothing checked with it
    differentiates it in a train step or gives it to `compile`: no step would
    trace it instead, so its decorator stays (TFR301 reports it when the
    project's training code is checked with it, as above)."""
    assert check_source(_d(LOSSES), select=["TFR301"]) == []


def test_decorated_loss_known_by_its_signature_in_an_eager_tape():
    """A loss by its parameter names, differentiated in an undecorated step:
    the step traces it once decorated, so the loss's decorator goes."""
    source = (
        LOSSES
        + """

        def step(model, x, y):
            with tf.GradientTape() as tape:
                loss = dice(y, model(x))
            grads = tape.gradient(loss, model.trainable_variables)
            model.optimizer.apply_gradients(zip(grads, model.trainable_variables))
    """
    )
    findings = check_source(_d(source), select=["TFR301"])
    assert [(f.code, f.start.line) for f in findings] == [("TFR301", 4)]
    assert findings[0].fix.message == "Remove `@tf.function` from the loss `dice`"


def test_a_directly_called_loss_is_reported_only_when_tracing_freezes_state():
    """A loss by its parameter names, called directly in a file that trains
    nothing: removing the decorator would only slow it down, unless the
    decorator freezes a module flag the file flips (then it is the fix)."""
    plain = """
        import tensorflow as tf

        @tf.function
        def get_mse(y_true, y_pred):
            return tf.reduce_mean(tf.square(y_true - y_pred))

        print(get_mse(tf.ones(3), tf.zeros(3)))
    """
    assert _codes(plain, ["TFR301"]) == []
    flagged = """
        import tensorflow as tf

        absolute = False

        @tf.function
        def get_error(y_true, y_pred):
            if absolute:
                return tf.reduce_mean(tf.abs(y_true - y_pred))
            return tf.reduce_mean(tf.square(y_true - y_pred))

        def use_absolute():
            global absolute
            absolute = True

        print(get_error(tf.ones(3), tf.zeros(3)))
    """
    assert _codes(flagged, ["TFR301"]) == ["TFR301"]


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
    assert "line 8 calls `.numpy()`" in finding.message  # every blocker, not only the first


STEP_WITH_PRINT = """
    import tensorflow as tf

    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        print("loss", loss)
        return loss

    for x, y in batches:
        train_step(x, y)
"""


def test_step_is_decorated_together_with_the_fix_of_its_print():
    # A print rewrite in a step not yet decorated is unsafe (the print rule
    # cannot see the decorator to come), so the decoration is unsafe too.
    fixed, applied, remaining = fix_source_with_findings(
        _d(STEP_WITH_PRINT), select=["TFR103", "TFR302"], unsafe_fixes=True
    )
    assert "@tf.function\ndef train_step(x, y):" in fixed
    assert 'tf.print("loss", loss, output_stream=sys.stdout)' in fixed
    assert sorted(f.code for f in applied) == ["TFR103", "TFR302"] and remaining == []
    assert fix_source(fixed, select=["TFR103", "TFR302"], unsafe_fixes=True) == fixed
    # Without --unsafe-fixes nothing in the step changes: no print rewritten in eager code.
    assert fix_source(_d(STEP_WITH_PRINT), select=["TFR103", "TFR302"]) == _d(STEP_WITH_PRINT)


def test_check_reports_the_blockers_of_a_step_it_will_decorate():
    findings = check_source(_d(STEP_WITH_PRINT), select=["TFR103", "TFR302"])
    assert sorted((f.code, f.start.line, f.fix.applicability.value) for f in findings) == [
        ("TFR103", 8, "unsafe"),
        ("TFR302", 3, "unsafe"),
    ]


def test_a_step_whose_decorator_was_commented_out_is_not_decorated_again():
    """`# @tf.function  # not working, see issue ...` above the step: the
    author turned tracing off; the finding says so instead of undoing it."""
    source = """
        import tensorflow as tf

        def fit(model, optimizer, batches):
            # @tf.function  # fails with a scope error, see the issue
            def train_step(x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))

            for x, y in batches:
                train_step(x, y)
    """
    fixed, applied, remaining = fix_source_with_findings(_d(source), unsafe_fixes=True)
    assert fixed == _d(source) and applied == []
    [step] = [f for f in remaining if f.code == "TFR302"]
    assert step.fix is None
    assert "line 4 holds a commented-out `@tf.function`" in step.message
    # Nothing in the step changes meaning: the refusal does not say it would.
    assert "change meaning" not in step.message
    # With a hazard besides, both reasons are given, each as what it is.
    hazard = (
        _d(source)
        .replace("optimizer.apply_gradients", "seen.append(1)\n        optimizer.apply_gradients")
        .replace("def fit(", "seen = []\n\n\ndef fit(")
    )
    [step] = [f for f in check_source(hazard) if f.code == "TFR302"]
    assert "would change meaning and cannot be rewritten: line 12 TFR202" in step.message
    assert step.message.endswith(
        "; and line 7 holds a commented-out `@tf.function` above the step: tracing was "
        "turned off on purpose (delete the comment to let `tfrewrite fix` decorate it))"
    )
    # A comment that is not a decorator changes nothing.
    plain = _d(source).replace("# @tf.function  # fails", "# the step; tf.function fails")
    assert "@tf.function" in fix_source(plain, select=["TFR302"])


def test_step_with_an_unfixable_blocker_lists_every_blocker_and_stays_eager():
    source = """
        import logging
        import time

        import tensorflow as tf

        def train_step(x, y):
            start = time.perf_counter()
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            print("loss", loss)
            elapsed = time.perf_counter() - start
            logging.info("step took %s", elapsed)
            return loss

        for x, y in batches:
            train_step(x, y)
    """
    fixed, applied, remaining = fix_source_with_findings(_d(source), unsafe_fixes=True)
    assert fixed == _d(source) and applied == []
    [step] = [f for f in remaining if f.code == "TFR302"]
    assert step.fix is None
    # Every blocker, each kind once with its lines.
    clock = "TFR202 `time.perf_counter()` in traced `train_step` reads the host clock once"
    for expected in (f"{clock}, while tracing (lines 7, 13)", "line 14 calls `logging.info`"):
        assert expected in step.message
    assert "12" not in step.message.partition("cannot be rewritten")[2]  # the print could be fixed
    # The step stays eager: its print is no hazard there, and not reported.
    assert not [f for f in remaining if f.code == "TFR103"]


def test_frozen_module_global_in_a_callee_stops_the_decorator():
    source = """
        import tensorflow as tf

        SCALE = 1.0

        def scaled_loss(y, pred):
            return SCALE * tf.reduce_mean(tf.square(pred - y))

        def train_step(x, y):
            with tf.GradientTape() as tape:
                loss = scaled_loss(y, model(x, training=True))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))

        def set_scale(epoch):
            global SCALE
            SCALE = 0.5 ** epoch

        for epoch in range(10):
            set_scale(epoch)
            for x, y in batches:
                train_step(x, y)
    """
    fixed, _, remaining = fix_source_with_findings(_d(source), unsafe_fixes=True)
    assert "@tf.function" not in fixed
    [step] = [f for f in remaining if f.code == "TFR302"]
    assert step.fix is None and "line 6 TFR201" in step.message


def test_decorator_moves_from_the_loss_only_when_the_step_can_take_it():
    source = """
        import time

        import tensorflow as tf

        @tf.function
        def loss_fn(labels, logits):
            return tf.reduce_mean(tf.square(labels - logits))

        def train_step(x, y):
            with tf.GradientTape() as tape:
                loss = loss_fn(y, model(x, training=True))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            return time.time()

        for x, y in batches:
            train_step(x, y)
    """
    fixed, applied, remaining = fix_source_with_findings(_d(source), select=["TFR301", "TFR302"])
    assert [f.code for f in applied] == ["TFR301"]
    assert applied[0].fix.message == "Remove `@tf.function` from the loss `loss_fn`"
    assert "@tf.function" not in fixed
    assert [f.code for f in remaining] == ["TFR302"]


def _step_message(source: str) -> str:
    [step] = [f for f in check_source(_d(source), select=["TFR302"]) if f.code == "TFR302"]
    assert step.fix is None
    return step.message


def test_step_that_builds_a_metric_and_an_optimizer_per_call_stays_eager():
    message = _step_message("""
        import keras
        import tensorflow as tf

        def train_step(model, x, y):
            optimizer = keras.optimizers.Adam(1e-3)
            accuracy = keras.metrics.SparseCategoricalAccuracy()
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            accuracy.update_state(y, model(x))
            return loss

        for fold in range(5):
            model = keras.Sequential([keras.layers.Dense(1)])
            for x, y in batches:
                train_step(model, x, y)
    """)
    assert "line 5 creates `keras.optimizers.Adam(...)` on every call" in message
    assert "line 6 creates `keras.metrics.SparseCategoricalAccuracy(...)`" in message


def test_step_that_logs_or_takes_a_python_counter_stays_eager():
    message = _step_message("""
        import logging

        import tensorflow as tf

        logger = logging.getLogger(__name__)

        def train_step(x, y, step):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            logger.info("loss %s", loss)

        for step, (x, y) in enumerate(batches):
            train_step(x, y, step)
    """)
    assert "line 12 calls `logger.info`: Python logging runs once" in message
    assert "line 15 passes the Python int `step` to the step" in message


def test_step_that_updates_python_state_on_self_stays_eager():
    message = _step_message("""
        import tensorflow as tf

        class Agent:
            def update(self, s, a):
                self.update_cnt += 1
                outputs = {}
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(self.q_model(s, training=True) - a))
                outputs["loss"] = loss
                grads = tape.gradient(loss, self.q_model.trainable_variables)
                self.optimizer.apply_gradients(zip(grads, self.q_model.trainable_variables))
                return outputs

            def learn(self, episodes):
                for s, a in episodes:
                    self.update(s, a)
    """)
    assert "line 5 updates `self.update_cnt`, Python state outside the step" in message
    assert "outputs" not in message


def test_step_that_samples_a_python_replay_buffer_stays_eager():
    message = _step_message("""
        import random

        import tensorflow as tf

        class ReplayBuffer:
            def __init__(self):
                self.items = []

            def sample(self, n):
                return random.sample(self.items, n)

        def train(q, memory, optimizer):
            s, a = memory.sample(32)
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(q(s, training=True) - a))
            grads = tape.gradient(loss, q.trainable_variables)
            optimizer.apply_gradients(zip(grads, q.trainable_variables))

        for episode in range(100):
            train(q, memory, optimizer)
    """)
    assert "line 13 calls `memory.sample(...)`, a method of the Python class `ReplayBuffer`" in (
        message
    )


def test_jit_compile_is_not_carried_onto_a_step_that_prints():
    source = """
        import tensorflow as tf

        @tf.function(jit_compile=True)
        def loss_fn(labels, preds):
            return tf.reduce_mean(tf.square(labels - preds))

        def train_step(x, y):
            with tf.GradientTape() as tape:
                loss = loss_fn(y, model(x, training=True))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            tf.print("loss", loss)

        for x, y in batches:
            train_step(x, y)
    """
    fixed, applied, remaining = fix_source_with_findings(_d(source), select=["TFR301", "TFR302"])
    assert "jit_compile" not in fixed and "@tf.function" not in fixed
    [step] = remaining
    assert "line 11 prints, and `tf.print` has no XLA kernel" in step.message


def test_reduce_retracing_is_not_added_to_a_step_that_reads_static_shapes():
    source = """
        import tensorflow as tf

        def train_step(x, y):
            noise = tf.random.normal([x.shape[0], 8])
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(x + noise, training=True) - y))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))

        for x, y in dataset.batch(64):
            train_step(x, y)
    """
    fixed = fix_source(_d(source), select=["TFR302"])
    assert "@tf.function\ndef train_step" in fixed


def test_function_differentiated_only_to_inspect_a_gradient_is_not_a_loss():
    source = """
        import tensorflow as tf

        @tf.function
        def add(a, b):
            return a + b

        v = tf.Variable(1.0)
        with tf.GradientTape() as tape:
            result = add(v, 1.0)
        print(tape.gradient(result, v))
    """
    assert _codes(source, ["TFR301"]) == []


def test_loss_decorator_with_an_input_signature_is_not_removed():
    source = """
        import tensorflow as tf

        @tf.function(input_signature=[tf.TensorSpec(None, tf.float32)] * 2)
        def loss_fn(labels, logits):
            return tf.reduce_mean(tf.square(labels - logits))

        model.compile(optimizer="sgd", loss=loss_fn)
    """
    [finding] = check_source(_d(source), select=["TFR301"])
    assert finding.fix is None and "`input_signature` casts the arguments" in finding.message


def test_loss_decorator_under_a_decorated_step_is_a_nested_boundary():
    source = """
        import tensorflow as tf

        @tf.function
        def loss_fn(labels, logits):
            return tf.reduce_mean(tf.square(labels - logits))

        @tf.function
        def train_step(x, y):
            with tf.GradientTape() as tape:
                loss = loss_fn(y, model(x, training=True))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
    """
    [finding] = check_source(_d(source), select=["TFR301"])
    assert "nested, redundant graph boundary" in finding.message
    assert "`train_step`" in finding.message


def test_loss_decorator_freezing_a_module_flag_says_what_removal_changes():
    source = """
        import tensorflow as tf

        SMOOTH = False

        @tf.function
        def loss_fn(labels, logits):
            if SMOOTH:
                labels = labels * 0.9 + 0.05
            return tf.reduce_mean(tf.square(labels - logits))

        def train_step(x, y):
            with tf.GradientTape() as tape:
                loss = loss_fn(y, model(x, training=True))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))

        def enable_smoothing():
            global SMOOTH
            SMOOTH = True
    """
    [finding] = check_source(_d(source), select=["TFR301"])
    assert "freezes the module state `SMOOTH`" in finding.message
    assert finding.fix.message == (
        "Remove `@tf.function` from the loss `loss_fn`: each direct call then reads the current "
        "`SMOOTH`; a traced step that calls it still freezes it"
    )


# -- TFR303 ---------------------------------------------------------------------------------


def test_inline_loop_keeps_the_per_output_losses_with_the_tape_and_moves_del_tape():
    source = """
        import tensorflow as tf

        for x, ys in dataset.batch(32):
            # one loss per model output
            with tf.GradientTape(persistent=True) as tape:
                outputs = model(x, training=True)
                losses = []
                for out, y in zip(outputs, ys):
                    losses.append(loss_fn(y, out))
                total = tf.add_n(losses)
            grads = tape.gradient(total, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            del tape
            print(float(total))
    """
    fixed = fix_source(_d(source), select=["TFR303"], unsafe_fixes=True)
    assert fixed == _d("""
        import tensorflow as tf


        @tf.function(reduce_retracing=True)
        def train_step(x, ys):
            # one loss per model output
            with tf.GradientTape(persistent=True) as tape:
                outputs = model(x, training=True)
                losses = []
                for out, y in zip(outputs, ys):
                    losses.append(loss_fn(y, out))
                total = tf.add_n(losses)
            grads = tape.gradient(total, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            del tape
            return total


        for x, ys in dataset.batch(32):
            total = train_step(x, ys)
            print(float(total))
    """)


def test_inline_step_inside_a_block_is_spaced_as_a_nested_definition():
    """Inside a `with` block the extracted step takes one blank line after
    it (PEP 8's nested spacing) and none before it as the block's first
    statement."""
    source = """
        import tensorflow as tf

        with progress() as bar:
            for x, y in dataset:
                with tf.GradientTape() as tape:
                    loss = loss_fn(y, model(x, training=True))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
    """
    fixed = fix_source(_d(source), select=["TFR303"], unsafe_fixes=True)
    assert fixed == _d("""
        import tensorflow as tf

        with progress() as bar:
            @tf.function
            def train_step(x, y):
                with tf.GradientTape() as tape:
                    loss = loss_fn(y, model(x, training=True))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))

            for x, y in dataset:
                train_step(x, y)
    """)


def test_inline_loop_refused_when_the_tape_is_used_after_the_update():
    source = """
        import tensorflow as tf

        for x, y in batches:
            with tf.GradientTape(persistent=True) as tape:
                loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            norms = tape.gradient(loss, x)
    """
    [finding] = check_source(_d(source), select=["TFR303"])
    assert finding.fix is None and "line 8 uses the tape after the update" in finding.message


def test_second_inline_step_is_named_for_the_model_it_trains():
    source = """
        import tensorflow as tf

        def train_step(x):
            return x

        for x, y in batches:
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(generator(x, training=True) - y))
            grads = tape.gradient(loss, generator.trainable_variables)
            g_optimizer.apply_gradients(zip(grads, generator.trainable_variables))
    """
    fixed = fix_source(_d(source), select=["TFR303"], unsafe_fixes=True)
    assert "def generator_train_step(x, y):" in fixed and "train_step_2" not in fixed


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


def test_a_name_a_later_comprehension_binds_is_not_returned_from_the_step():
    """`v` in `sum(v * n for v, n in ...)` after the loop is the generator's
    own: the extracted step does not return the update loop's `v` for it."""
    source = """
        import tensorflow as tf

        for epoch in range(3):
            losses = []
            for x, y in dataset:
                with tf.GradientTape() as tape:
                    loss = loss_fn(y, model(x, training=True))
                grads = tape.gradient(loss, model.trainable_variables)
                for g, v in zip(grads, model.trainable_variables):
                    v.assign_sub(0.1 * g)
                losses.append(loss)
            mean = sum(v * n for v, n in zip(losses, sizes)) / sum(sizes)
            scaled = [v * 2 for v in losses]
            print(mean, scaled, (lambda v: v + 1)(mean))
    """
    fixed = fix_source(_d(source), select=["TFR303"], unsafe_fixes=True)
    assert "        loss = train_step(x, y)\n" in fixed
    assert "    return loss\n" in fixed


def test_mentioned_names_leaves_out_what_comprehensions_and_lambdas_bind():
    import libcst as cst

    from tfrewrite.facts.name_use import mentioned_names

    def names(code: str) -> list[str]:
        return list(mentioned_names(cst.parse_expression(code)))

    assert names("sum(v * n for v, n in zip(a, b))") == ["sum", "zip", "a", "b"]
    assert names("[v + w for v in v]") == ["w", "v"]  # the iterable is the outer `v`
    assert names("{k: v for k in ks if k > t}") == ["v", "ks", "t"]
    assert names("(lambda v, d=v0: v + d + w)(x)") == ["v0", "w", "x"]


def test_step_extracted_from_a_per_episode_method_becomes_a_method():
    source = """
        import tensorflow as tf

        class Agent:
            def run_episode(self, env, gamma):
                for states, returns in env.batches():
                    with tf.GradientTape() as tape:
                        values = self.critic(states, training=True)
                        loss = tf.reduce_mean(tf.square(gamma * returns - values))
                    grads = tape.gradient(loss, self.critic.trainable_variables)
                    self.optimizer.apply_gradients(zip(grads, self.critic.trainable_variables))
    """
    fixed = fix_source(_d(source), select=["TFR303"], unsafe_fixes=True)
    assert "        for states, returns in env.batches():\n" in fixed
    assert "            self.critic_train_step(states, returns, gamma)\n" in fixed
    assert "\n    @tf.function\n    def critic_train_step(self, states, returns, gamma):\n" in fixed
    assert fix_source(fixed, select=["TFR303"], unsafe_fixes=True) == fixed


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


def test_training_flag_only_for_the_network_the_step_trains():
    source = """
        import tensorflow as tf

        def train(q_model, target_model, optimizer, s, a, r, s2):
            with tf.GradientTape() as tape:
                q_out = q_model(s)
                target = r + 0.9 * tf.reduce_max(target_model(s2), axis=1)
                loss = tf.reduce_mean(tf.square(tf.gather(q_out, a, batch_dims=1) - target))
            variables = q_model.trainable_variables
            grads = tape.gradient(loss, variables)
            optimizer.apply_gradients(zip(grads, variables))
    """
    fixed = fix_source(_d(source), select=["TFR304"], unsafe_fixes=True)
    assert "q_model(s, training=True)" in fixed and "target_model(s2), axis" in fixed


def test_training_flag_goes_only_to_the_model_a_privacy_optimizer_differentiates():
    """`optimizer.compute_gradients(loss_fn, var_list, gradient_tape=tape)`
    (TensorFlow Privacy) names the variables differentiated: the generator
    called in the discriminator's step is frozen (TimeGAN's DP variant)."""
    source = """
        import tensorflow as tf

        def discriminator_step(generator, discriminator, optimizer, x, z):
            with tf.GradientTape(persistent=True) as tape:
                fake = generator(z)

                def loss_fn():
                    return tf.reduce_mean(discriminator(fake) - discriminator(x))

                var_list = discriminator.trainable_weights
                grads = optimizer.compute_gradients(loss_fn, var_list, gradient_tape=tape)
            optimizer.apply_gradients(grads)
    """
    findings = check_source(_d(source), select=["TFR304"])
    assert all("generator" not in f.message for f in findings)


def test_training_flag_not_reported_under_a_training_argument_check():
    source = """
        import keras
        import tensorflow as tf

        class Trainer(keras.Model):
            def train_step(self, data):
                x, y = data
                with tf.GradientTape() as tape:
                    if self._call_has_training_arg:
                        y_pred = self(x, training=True)
                    else:
                        y_pred = self(x)
                    loss = self.compute_loss(y=y, y_pred=y_pred)
                grads = tape.gradient(loss, self.trainable_variables)
                self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
    """
    assert _codes(source, ["TFR304"]) == []


def test_training_flag_not_reported_when_the_model_takes_its_own_flag():
    """`conv_net(x, is_training=True)`: the model's `call` names its training
    flag differently, and the step passes it."""
    source = """
        import tensorflow as tf

        class ConvNet(tf.keras.Model):
            def __init__(self):
                super().__init__()
                self.dropout = tf.keras.layers.Dropout(0.5)
                self.out = tf.keras.layers.Dense(10)

            def call(self, x, is_training=False):
                return self.out(self.dropout(x, training=is_training))

        conv_net = ConvNet()

        def run_optimization(x, y):
            with tf.GradientTape() as g:
                pred = conv_net(x, is_training=True)
                loss = tf.reduce_mean(tf.square(pred - y))
            gradients = g.gradient(loss, conv_net.trainable_variables)
            optimizer.apply_gradients(zip(gradients, conv_net.trainable_variables))

        for x, y in batches:
            run_optimization(x, y)
    """
    assert _codes(source, ["TFR304"]) == []


def test_no_training_flag_finding_for_models_that_ignore_it():
    source = """
        import keras
        import tensorflow as tf

        class Mlp(keras.Model):
            def call(self, x):
                return self.dense(x)

        mlp_model = Mlp()
        model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8), keras.layers.Dense(1)])

        def train_step(x, y):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(x) + mlp_model(x) - y))
            variables = model.trainable_variables + mlp_model.trainable_variables
            grads = tape.gradient(loss, variables)
            optimizer.apply_gradients(zip(grads, variables))
    """
    # A `Sequential` of layers that ignore `training`, and a class whose
    # `call` takes none: `training=True` would change nothing.
    assert check_source(_d(source), select=["TFR304"]) == []


def test_training_flag_still_fixed_for_a_model_with_dropout():
    source = """
        import keras
        import tensorflow as tf

        model = keras.Sequential([keras.layers.Dense(8), keras.layers.Dropout(0.5)])

        def train_step(x, y):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(x) - y))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
    """
    [finding] = check_source(_d(source), select=["TFR304"])
    assert finding.fix is not None


def test_loss_outside_tape_names_the_line():
    [finding] = check_source(
        textwrap.dedent(RULES_BY_CODE["TFR305"].examples[0].before), select=["TFR305"]
    )
    assert "line 7" in finding.message and "line 5" in finding.message
    assert finding.start.line == 8 and finding.fix is not None
    assert finding.fix.applicability.value == "unsafe"


def _fix305(source: str) -> str:
    return fix_source(_d(source), select=["TFR305"], unsafe_fixes=True)


def test_loss_move_takes_every_statement_the_loss_depends_on_and_leaves_the_rest():
    source = """
        import tensorflow as tf

        def train_step(x, y):
            with tf.GradientTape() as tape:
                logits = model(x, training=True)
            # the data loss
            loss = loss_fn(y, logits)
            step_count.assign_add(1)
            reg = tf.add_n([tf.nn.l2_loss(v) for v in model.trainable_variables])
            loss = loss + 1e-4 * reg
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
    """
    assert _fix305(source) == _d("""
        import tensorflow as tf

        def train_step(x, y):
            with tf.GradientTape() as tape:
                logits = model(x, training=True)
                # the data loss
                loss = loss_fn(y, logits)
                reg = tf.add_n([tf.nn.l2_loss(v) for v in model.trainable_variables])
                loss = loss + 1e-4 * reg
            step_count.assign_add(1)
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
    """)


def test_loss_move_in_a_module_level_loop_and_idempotent():
    source = """
        import tensorflow as tf

        for x, y in dataset:
            with tf.GradientTape() as tape:
                logits = model(x, training=True)
            grads = tape.gradient(loss_fn(y, logits), model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
    """
    fixed = _fix305(source)
    assert "        loss = loss_fn(y, logits)\n    grads = tape.gradient(loss, " in fixed
    assert _fix305(fixed) == fixed
    assert check_source(fixed, select=["TFR305"]) == []


def test_loss_move_picks_a_name_the_scope_does_not_use():
    source = """
        import tensorflow as tf

        def train_step(x, y, loss):
            with tf.GradientTape() as tape:
                logits = model(x, training=True)
            grads = tape.gradient(loss_fn(y, logits) + loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
    """
    assert "loss_value = loss_fn(y, logits) + loss" in _fix305(source)


def test_loss_move_refused_when_a_statement_left_behind_reads_what_moves():
    source = """
        import tensorflow as tf

        def train_step(x, y):
            with tf.GradientTape() as tape:
                logits = model(x, training=True)
            scale = 2.0
            history.append(scale)
            scale = 0.5
            loss = scale * loss_fn(y, logits)
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
    """
    [finding] = check_source(_d(source), select=["TFR305"])
    assert finding.fix is None
    assert "no fix: line 8 would move above line 6, which uses the same names" in finding.message


def test_loss_move_refused_when_a_statement_left_behind_changes_what_it_reads():
    """Moving `loss = ... history[-1]` above `history.append(err)` would
    differentiate the previous step's error (or raise on an empty list)."""
    source = """
        import tensorflow as tf

        history = []

        def train_step(x, y):
            with tf.GradientTape() as tape:
                pred = model(x, training=True)
            err = pred - y
            history.append(err)
            loss = tf.reduce_mean(tf.square(history[-1]))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
    """
    [finding] = check_source(_d(source), select=["TFR305"])
    assert finding.fix is None
    assert "no fix: line 10 reads `history`, which line 9 may change in place" in finding.message
    assert fix_source(_d(source), select=["TFR305"], unsafe_fixes=True) == _d(source)


def test_loss_move_jumps_over_a_call_of_an_imported_module():
    """`tf.print(err)` left behind changes nothing the loss reads."""
    source = """
        import tensorflow as tf

        def train_step(x, y):
            with tf.GradientTape() as tape:
                pred = model(x, training=True)
            err = pred - y
            tf.print("err", err)
            loss = tf.reduce_mean(tf.square(err))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
    """
    fixed = fix_source(_d(source), select=["TFR305"], unsafe_fixes=True)
    assert "        err = pred - y\n        loss = tf.reduce_mean(tf.square(err))\n" in fixed
    assert '    tf.print("err", err)\n    grads' in fixed


def test_loss_move_refused_on_a_side_effect_names_the_line():
    [finding] = check_source(
        textwrap.dedent(RULES_BY_CODE["TFR305"].examples[2].before), select=["TFR305"]
    )
    assert finding.fix is None
    assert "no fix: line 9 calls Python `float()`" in finding.message


def test_rename_after_the_tape_is_not_a_loss_outside_it():
    source = """
        import tensorflow as tf

        def train_step(x, y):
            with tf.GradientTape() as tape:
                loss = loss_fn(y, model(x, training=True))
            total, count = loss, 1
            grads = tape.gradient(total, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
    """
    assert _codes(source, ["TFR305"]) == []


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
    assert finding.start.line == 7 and "update_state" in finding.message
    assert finding.fix is not None and finding.fix.applicability.value == "unsafe"
    fixed = fix_source(_d(source), select=["TFR306"], unsafe_fixes=True)
    assert "batch_sizes.append(len(x))" in fixed
    assert "mean_acc = np.average(accs, weights=batch_sizes)" in fixed
    assert fix_source(fixed, select=["TFR306"], unsafe_fixes=True) == fixed


def test_metric_average_forms_people_write():
    source = """
        import statistics

        import numpy as np

        def report(model, test_batches, loader):
            print(np.mean([evaluate(model, b) for b in test_batches]))
            print(statistics.mean(evaluate(model, b) for b in test_batches))
            print(sum(evaluate(model, b) for b in loader) / len(loader))
            print(np.mean(list(evaluate(model, b) for b in test_batches)))
            accs = []
            for step, (x, y) in enumerate(loader):
                accs.append(evaluate(model, (x, y)))
            print(statistics.mean(accs))
            epoch_loss = 0.0
            for x, y in loader:
                epoch_loss += float(loss_fn(y, model(x)))
            print(epoch_loss / len(loader))
    """
    findings = check_source(_d(source), select=["TFR306"])
    assert [f.start.line for f in findings] == [6, 7, 8, 9, 13, 17]
    fixed = fix_source(_d(source), select=["TFR306"], unsafe_fixes=True)
    assert "sum(v * n for v, n in zip(accs, batch_sizes)) / sum(batch_sizes)" in fixed


def test_two_lists_averaged_from_one_loop_share_one_list_of_sizes():
    source = """
        import numpy as np

        losses, accs = [], []
        for x, y in dataset.batch(64):
            losses.append(loss_of(x, y))
            accs.append(accuracy_of(x, y))
        print(np.mean(losses), np.mean(accs))
    """
    fixed = fix_source(_d(source), select=["TFR306"], unsafe_fixes=True)
    assert fixed.count("batch_sizes = []") == 1
    assert fixed.count("batch_sizes.append(len(x))") == 1
    assert "np.average(losses, weights=batch_sizes), np.average(accs, weights=batch_sizes)" in fixed


def test_two_loops_fixed_in_one_round_keep_their_sizes_apart():
    """A training loop and a validation loop in one scope, each with its own
    lists: each loop gets its own list of sizes, never one list both fill."""
    source = """
        import numpy as np

        for epoch in range(3):
            losses_train, accs_train = [], []
            losses_val, accs_val = [], []
            for x, y in train_data:
                loss, acc = train_step(x, y)
                losses_train.append(loss)
                accs_train.append(acc)
            for x, y in val_data:
                loss, acc = val_step(x, y)
                losses_val.append(loss)
                accs_val.append(acc)
            print(np.mean(losses_train), np.mean(accs_train))
            print(np.mean(losses_val), np.mean(accs_val))
    """
    fixed = fix_source(_d(source), select=["TFR306"], unsafe_fixes=True)
    assert fixed.count("batch_sizes = []") == 1
    assert fixed.count("batch_sizes_2 = []") == 1
    train_loop, val_loop = fixed.split("for x, y in val_data:")
    assert "batch_sizes.append(len(x))" in train_loop.split("for x, y in train_data:")[1]
    assert "batch_sizes_2.append(len(x))" in val_loop
    assert "np.average(losses_train, weights=batch_sizes)" in fixed
    assert "np.average(accs_val, weights=batch_sizes_2)" in fixed
    assert fix_source(fixed, select=["TFR306"], unsafe_fixes=True) == fixed


def test_metric_average_over_equal_batches_is_exact():
    source = """
        import numpy as np

        ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(64, drop_remainder=True)
        accs = []
        for xb, yb in ds:
            accs.append(evaluate(xb, yb))
        print(np.mean(accs), sum(accs) / len(accs))
    """
    assert _codes(source, ["TFR306"]) == []


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


def test_the_example_diff_is_what_fix_writes(monkeypatch):
    """`examples/eager_tutorial.fix.diff` is the migration the README tells:
    `tfrewrite fix --diff --unsafe-fixes examples/eager_tutorial.py`."""
    from tfrewrite.workspace.diffs import unified_diff

    root = Path(__file__).parent.parent
    monkeypatch.chdir(root)
    source = (root / "examples" / "eager_tutorial.py").read_text()
    fixed = fix_source(source, "examples/eager_tutorial.py", unsafe_fixes=True)
    expected = unified_diff("examples/eager_tutorial.py", source, fixed)
    assert (root / "examples" / "eager_tutorial.fix.diff").read_text() == expected, (
        "regenerate: tfrewrite fix --diff --unsafe-fixes examples/eager_tutorial.py"
    )


def test_each_blocker_is_listed_once():
    source = """
        import logging

        import tensorflow as tf

        @tf.function(jit_compile=True)
        def loss_fn(y_true, y_pred):
            return tf.reduce_mean((y_true - y_pred) ** 2)

        def train_step(x, y):
            metric = tf.keras.metrics.Mean()
            with tf.GradientTape() as tape:
                loss = loss_fn(y, model(x, training=True))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            logging.info("loss %s", loss)
            metric.update_state(loss)

        for x, y in batches:
            train_step(x, y)
    """
    found = {f.code: f for f in check_source(_d(source), select=["TFR3", "TFR204"])}
    for code in ("TFR301", "TFR302"):
        message = found[code].message
        assert message.count("line 10 ") == 1, message
        assert message.count("line 15 ") == 1, message
        assert "line 15 calls `logging.info`: Python logging runs once" in message
    # TFR301 still removes the loss's decorator: only the step stays eager.
    assert found["TFR301"].fix is not None
    assert "(`train_step` stays eager: " in found["TFR301"].message
    assert "no fix" not in found["TFR301"].message
    assert found["TFR302"].fix is None


def test_a_step_printing_host_reads_in_formatted_strings_is_decorated_in_one_run():
    """`print(f"loss {loss.numpy():.3f}")` and `print("loss %.4f" % loss)` in
    an eager step: one `fix --unsafe-fixes` decorates the step and rewrites
    both prints into `tf.print` of the tensor."""
    source = """
        import tensorflow as tf

        def train_step(x, y):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            print(f"loss {loss.numpy():.3f}")
            print("loss %.4f" % loss)
            return loss

        for x, y in dataset:
            train_step(x, y)
    """
    fixed = fix_source(_d(source), unsafe_fixes=True)
    assert "@tf.function" in fixed and "print(f" not in fixed and "%" not in fixed
    assert fixed.count("tf.strings.as_string(loss, precision=") == 2
    assert fix_source(fixed, unsafe_fixes=True) == fixed


def test_a_step_printing_a_host_value_held_in_a_name_is_decorated_in_one_run():
    """`loss_value = loss.numpy()` then `print("loss %.4f" % loss_value)`, the
    way tutorials write it: one `fix --unsafe-fixes` keeps the tensor, prints
    it with `tf.print` and decorates the step."""
    source = """
        import tensorflow as tf

        def train_step(x, y):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            loss_value = loss.numpy()
            print("loss %.4f" % loss_value)
            return loss

        for x, y in dataset:
            train_step(x, y)
    """
    fixed = fix_source(_d(source), unsafe_fixes=True)
    assert "@tf.function" in fixed and ".numpy()" not in fixed and "%" not in fixed
    assert "loss_value = loss\n" in fixed
    assert fix_source(fixed, unsafe_fixes=True) == fixed


def test_step_reading_a_model_its_fold_loop_rebuilds_stays_eager():
    message = _step_message("""
        import tensorflow as tf

        def train_step(x, y):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            return loss

        for fold in range(5):
            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            optimizer = tf.keras.optimizers.SGD(0.1)
            for x, y in batches:
                train_step(x, y)
    """)
    assert "line 11 rebinds `model` in the loop that calls the step" in message
    assert "line 12 rebinds `optimizer`" in message


def test_a_loop_in_another_function_rebinds_only_its_own_locals():
    source = """
        import tensorflow as tf

        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])

        def train_step(x, y):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            return loss

        def evaluate(batches):
            for x, y in batches:
                model = 3
                train_step(x, y)
    """
    [step] = [f for f in check_source(_d(source), select=["TFR302"])]
    assert step.fix is not None, step.message


def test_a_static_shape_in_a_step_does_not_hold_back_its_decorator():
    """`tf.ones([xb.shape[0], 1])` in the step: the decorator TFR302 writes
    keeps shapes known (no `reduce_retracing`), so TFR107's finding is no
    blocker and the decoration stays safe."""
    source = """
        import tensorflow as tf

        def train_step(xb, yb):
            with tf.GradientTape() as tape:
                pred = model(xb, training=True)
                weight = tf.ones([xb.shape[0], 1]) / xb.shape[0]
                loss = tf.reduce_sum(weight * (pred - yb) ** 2)
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            return loss

        for x, y in batches:
            train_step(x, y)
    """
    fixed = fix_source(_d(source), select=["TFR302", "TFR107"])
    assert "@tf.function\ndef train_step" in fixed
    assert "tf.ones([xb.shape[0], 1])" in fixed  # TFR107's fix here is unsafe


# -- what an extracted step returns, and one step for identical loops ---------------------

SECTIONS = """
    import tensorflow as tf

    for epoch in range(3):
        for x, y in batches:
            with tf.GradientTape() as tape:
                preds = model(x, training=True)
                loss = tf.reduce_mean(tf.square(preds - y))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
        if epoch % 2 == 0:
            for x, y in held_out:
                with tf.GradientTape() as tape:
                    preds = model(x, training=True)
                    loss = tf.reduce_mean(tf.square(preds - y))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
            print(loss)

    for x, y in batches:
        with tf.GradientTape() as tape:
            preds = model(x, training=True)
            loss = tf.reduce_mean(tf.square(preds - y))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
"""


def test_identical_tape_blocks_share_one_step_returning_only_what_is_read():
    """Three sections train the same way: one `train_step` is defined, each
    loop calls it, and the sections whose `loss` the `print` may show take it
    back (the held-out loop may run zero times); `preds` and `grads` are
    bound afresh before anything reads them."""
    fixed = fix_source(_d(SECTIONS), select=["TFR303"], unsafe_fixes=True)
    assert fixed.count("def train_step") == 1 and "train_step_2" not in fixed
    assert fixed.count("@tf.function") == 1 and "    return loss\n" in fixed
    assert fixed.count("\n        loss = train_step(x, y)\n") == 1  # the first section
    assert fixed.count("\n            loss = train_step(x, y)\n") == 1  # the held-out one
    assert fixed.count("\n    train_step(x, y)\n") == 1  # the last section reads nothing
    assert "preds, " not in fixed and "grads =" not in fixed.split("def train_step")[0]
    assert fix_source(fixed, select=["TFR303"], unsafe_fixes=True) == fixed


def test_a_step_that_returns_what_one_loop_reads_serves_a_loop_that_reads_nothing():
    source = SECTIONS.replace("            print(loss)\n", "").replace(
        "            grads = tape.gradient(loss, model.trainable_variables)\n"
        "            optimizer.apply_gradients(zip(grads, model.trainable_variables))\n"
        "        if epoch",
        "            grads = tape.gradient(loss, model.trainable_variables)\n"
        "            optimizer.apply_gradients(zip(grads, model.trainable_variables))\n"
        "            print(loss)\n"
        "        if epoch",
    )
    fixed = fix_source(_d(source), select=["TFR303"], unsafe_fixes=True)
    assert fixed.count("def train_step") == 1 and "    return loss\n" in fixed
    assert fixed.count("loss = train_step(x, y)") == 1
    assert fixed.count("train_step(x, y)") == 4  # the definition and three calls


def test_a_different_tape_block_gets_a_step_of_its_own():
    source = SECTIONS.replace(
        "    for x, y in batches:\n        with tf.GradientTape() as tape:\n"
        "            preds = model(x, training=True)\n"
        "            loss = tf.reduce_mean(tf.square(preds - y))\n",
        "    for x, y in batches:\n        with tf.GradientTape() as tape:\n"
        "            preds = model(x, training=True)\n"
        "            loss = tf.reduce_mean(tf.abs(preds - y))\n",
    )
    fixed = fix_source(_d(source), select=["TFR303"], unsafe_fixes=True)
    assert "def train_step(" in fixed and "def train_step_2(" in fixed
    assert "tf.abs" in fixed.split("def train_step_2(")[1]


def test_a_name_a_function_of_the_file_reads_is_returned():
    source = """
        import tensorflow as tf

        def report():
            print(float(loss))

        for x, y in batches:
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
        report()
    """
    fixed = fix_source(_d(source), select=["TFR303"], unsafe_fixes=True)
    assert "    loss = train_step(x, y)\n" in fixed and "    return loss\n" in fixed


# A step that hands its gradients to the loop, which applies them.
RETURNS_GRADIENTS = """
    import keras
    import numpy as np
    import tensorflow as tf


    def make_data():
        rng = np.random.default_rng(0)
        x = rng.normal(size=(200, 8)).astype("float32")
        y = (x[:, :3].argmax(axis=1)).astype("int32")
        return tf.data.Dataset.from_tensor_slices((x, y)).batch(48)


    def train_step(model, x, y):
        with tf.GradientTape() as tape:
            logits = model(x, training=True)
            loss = tf.reduce_mean(
                tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits)
            )
        gradients = tape.gradient(loss, model.trainable_variables)
        return loss, gradients


    def train(epochs):
        keras.utils.set_random_seed(0)
        model = keras.Sequential(
            [keras.Input((8,)), keras.layers.Dense(16, activation="tanh"), keras.layers.Dense(3)]
        )
        optimizer = keras.optimizers.SGD(learning_rate=0.1)
        losses = []
        for epoch in range(epochs):
            for x, y in make_data():
                loss, gradients = train_step(model, x, y)
                optimizer.apply_gradients(zip(gradients, model.trainable_variables))
                losses.append(float(loss))
        return losses
"""


def test_a_step_returning_its_gradients_to_the_loop_is_a_train_step():
    assert _codes(RETURNS_GRADIENTS, ["TFR302"]) == ["TFR302"]
    fixed = fix_source(_d(RETURNS_GRADIENTS), select=["TFR302"], unsafe_fixes=True)
    assert "@tf.function(reduce_retracing=True)\ndef train_step(model, x, y):" in fixed


def test_gradients_with_respect_to_an_input_are_no_train_step():
    """`tape.gradient(q, actions)`: a critic's gradient for the actor, called
    per update, is no update of its own."""
    source = """
        import tensorflow as tf

        def action_gradients(critic, states, actions):
            with tf.GradientTape() as tape:
                tape.watch(actions)
                q = critic([states, actions])
            return tape.gradient(q, actions)

        def update(critic, batches):
            for states, actions in batches:
                grads = action_gradients(critic, states, actions)
    """
    assert _codes(source, ["TFR302"]) == []


# A step object held by a service whose epoch loop calls a helper that calls
# the step.
STEP_OBJECT = """
    import tensorflow as tf


    class Step:
        def __init__(self, model, optimizer):
            self.model, self.optimizer = model, optimizer

        def __call__(self, x, y):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(self.model(x, training=True) - y))
            grads = tape.gradient(loss, self.model.trainable_variables)
            self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))
            return loss
"""
SERVICE = """
    from pkg.training.step import Step


    class Service:
        def __init__(self, model, optimizer, data):
            self.step = Step(model, optimizer)
            self.data = data

        def run_epoch(self):
            total = 0.0
            for x, y in self.data:
                total += self.one_batch(x, y)
            return total

        def one_batch(self, x, y):
            return float(self.step(x, y))
"""


def test_a_step_object_a_looped_helper_calls_is_looped(tmp_path):
    files = {
        "pkg/__init__.py": "",
        "pkg/training/__init__.py": "",
        "pkg/training/step.py": STEP_OBJECT,
        "pkg/service.py": SERVICE,
    }
    result = _project(tmp_path, files, fix=False)
    [finding] = [f for f in result.findings if f.code == "TFR302"]
    assert finding.path.endswith("step.py") and "`__call__`" in finding.message
    # Resolved by its class, not by its name; the loop's arguments are another module's.
    assert "(by a loop in another module)" in finding.message
    assert "whose arguments are not checked" in finding.fix.message
    # The helper called outside any loop: nothing drives the step per batch.
    files["pkg/service.py"] = SERVICE.replace(
        "            for x, y in self.data:\n                total += self.one_batch(x, y)\n",
        "            x, y = self.data\n            total += self.one_batch(x, y)\n",
    )
    result = _project(tmp_path, files, fix=False)
    assert [f for f in result.findings if f.code == "TFR302"] == []


# -- methods a class inherits, and their overrides ----------------------------------

INHERITED_BASE = """
    import tensorflow as tf


    class Network:
        @tf.function
        def loss_function(self, x, y):
            return tf.reduce_mean(tf.square(x - y))

        def forward(self, x):
            if tf.reduce_sum(x) > 0:
                x = x * 2.0
            return x
"""

INHERITED_STEP = """
    import tensorflow as tf

    from nets.base import Network


    class Trainer(Network):
        def train(self, x, y):
            with tf.GradientTape() as tape:
                loss = self.loss_function(x, y)
            grads = tape.gradient(loss, self.variables)
            self.optimizer.apply_gradients(zip(grads, self.variables))
            return loss

        @tf.function
        def predict(self, x):
            return self.forward(x)


    class WeightedTrainer(Trainer):
        @tf.function
        def loss_function(self, x, y):
            return 2.0 * tf.reduce_mean(tf.square(x - y))
"""


def test_a_loss_a_class_inherits_and_its_overrides_are_differentiated_by_its_step(tmp_path):
    """`self.loss_function(...)` in the tape of `Trainer.train`: `Trainer`
    inherits it from `Network` (another module), and `WeightedTrainer`, which
    runs the inherited `train`, overrides it. Both decorated losses are
    TFR301's. The traced `Trainer.predict` calls `self.forward`, inherited
    too: it runs traced, and its tensor `if` is TFR101's."""
    result = _project(
        tmp_path,
        {"nets/__init__.py": "", "nets/base.py": INHERITED_BASE, "train.py": INHERITED_STEP},
        fix=False,
    )
    found = sorted((Path(f.path).name, f.code, f.start.line) for f in result.findings)
    assert ("base.py", "TFR301", 5) in found
    assert ("train.py", "TFR301", 20) in found
    options = RunOptions(rule_codes=("TFR101",), root=str(tmp_path))
    inputs = [InputFile(str(tmp_path / n)) for n in ("nets/base.py", "train.py")]
    traced = [(Path(f.path).name, f.start.line) for f in run(inputs, options, jobs=1).findings]
    assert traced == [("base.py", 10)]


# -- classes passed as values, and what their objects' methods reach -------------------

CLASS_VALUE_FILES = {
    "nets/__init__.py": "",
    "nets/base.py": """
        import tensorflow as tf


        class Model(tf.Module):
            def train_step(self, x):
                with tf.GradientTape() as tape:
                    loss = self.loss(x)
                grads = tape.gradient(loss, self.trainable_variables)
                self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
                return loss

            def loss(self, x):
                if tf.reduce_sum(x) > 0:
                    x = x * 2.0
                return tf.reduce_mean(x)
    """,
    "nets/scaled.py": """
        import tensorflow as tf

        from nets.base import Model


        class ScaledModel(Model):
            def loss(self, x):
                if tf.reduce_max(x) > 1:
                    x = x / 2.0
                return tf.reduce_mean(x)
    """,
    "loops.py": """
        import tensorflow as tf


        def train_loop(model, batches):
            step = tf.function(model.train_step)
            for x in batches:
                step(x)


        def train_and_eval(config, model_cls):
            model = model_cls(**config)
            train_loop(model, config["batches"])
    """,
    "train_base.py": """
        from loops import train_and_eval
        from nets.base import Model

        train_and_eval({}, model_cls=Model)
    """,
    "train_scaled.py": """
        from loops import train_and_eval
        from nets.scaled import ScaledModel

        train_and_eval({}, ScaledModel)
    """,
}


def test_a_class_passed_as_a_value_traces_the_method_its_objects_hand_to_tf_function(tmp_path):
    """`train_and_eval(cfg, model_cls=Model)` builds `model = model_cls(...)`
    and hands it on; `tf.function(model.train_step)` traces the method of
    each class passed (two scripts, two classes). `ScaledModel` inherits
    `train_step`, whose `self.loss(x)` is its own override: both losses run
    traced, and their tensor `if`s are TFR101's."""
    for name, text in CLASS_VALUE_FILES.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(_d(text))
    inputs = [InputFile(str(tmp_path / name)) for name in CLASS_VALUE_FILES]
    options = RunOptions(rule_codes=("TFR101",), root=str(tmp_path))
    found = sorted((Path(f.path).name, f.start.line) for f in run(inputs, options, jobs=1).findings)
    assert found == [("base.py", 13), ("scaled.py", 8)]


def test_a_nested_step_its_function_wraps_in_tf_function_is_traced():
    """`train_step = tf.function(train_step)` in the function that defines
    the step (here under a flag that is on by default) hands the nested
    step to `tf.function`: it is traced, so it is no eager step (TFR302),
    and its `print` of a tensor is traced code's (TFR103)."""
    step = _d(STEP_WITH_PRINT)
    step = step[step.index("def train_step") : step.index("\n\nfor ")]
    source = (
        "import tensorflow as tf\n\n\n"
        "def train(model, optimizer, batches, use_function=True):\n"
        + textwrap.indent(step, "    ")
        + "\n\n    if use_function:\n"
        "        train_step = tf.function(train_step)\n"
        "    for x, y in batches:\n"
        "        train_step(x, y)\n"
    )
    assert _codes(source, select=("TFR302", "TFR103")) == ["TFR103"]


def test_a_tape_in_a_while_loop_drawing_batches_is_an_eager_step():
    """`while True:` drawing batches until the loader runs dry trains one
    batch per pass as a `for` over them does: the tape block is TFR303's,
    extracted into a step (the `break` before it stays in the loop)."""
    source = """
        import tensorflow as tf


        def train(model, optimizer, loader):
            while True:
                x, y = loader.next()
                if x is None:
                    break
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
    """
    assert _codes(source, select=("TFR303",)) == ["TFR303"]
    fixed = fix_source(_d(source), select=["TFR303"], unsafe_fixes=True)
    assert "    def train_step(x, y):" in fixed and "        train_step(x, y)" in fixed
    assert "        if x is None:\n            break\n        train_step(x, y)" in fixed


def test_own_train_steps_of_a_factorys_alternatives_are_looped_steps(tmp_path):
    """`model.train_step(batch, optimizers)` in a loop, for a model a
    factory picks: every class whose own `train_step` (one `fit` cannot
    call: it takes more than `data`) trains is a step that loop may run,
    matched by method name (an unsafe fix). A `train_step(self, data)` of a
    Keras model is `fit`'s hook: no finding."""
    step = """
        import tensorflow as tf


        class {name}(tf.keras.Model):
            def train_step(self, batch, optimizers):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(self(batch, training=True))
                grads = tape.gradient(loss, self.trainable_variables)
                optimizers["main"].apply_gradients(zip(grads, self.trainable_variables))
                return loss
    """
    hook = """
        import tensorflow as tf


        class Classifier(tf.keras.Model):
            def train_step(self, data):
                x, y = data
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(self(x, training=True) - y))
                grads = tape.gradient(loss, self.trainable_variables)
                self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
                return {"loss": loss}
    """
    main = """
        import tensorflow as tf

        from models import factory


        def run(name, batches, optimizers):
            tf.config.set_soft_device_placement(True)
            model = factory.create(name)
            for batch in batches:
                model.train_step(batch, optimizers)
    """
    files = {
        "models/__init__.py": "",
        "models/factory.py": "def create(name):\n    raise NotImplementedError(name)\n",
        "models/beta.py": step.replace("{name}", "BetaVAE"),
        "models/ladder.py": step.replace("{name}", "LadderVAE"),
        "models/classifier.py": hook,
        "main.py": main,
    }
    result = _project(tmp_path, files, fix=False)
    found = sorted((Path(f.path).name, f.code) for f in result.findings if f.code == "TFR302")
    assert found == [("beta.py", "TFR302"), ("ladder.py", "TFR302")]
    assert all("matched by method name" in f.message for f in result.findings)


PICKED_LOSS = """
    import tensorflow as tf

    class Trainer:
        def step(self, x, y):
            with tf.GradientTape() as tape:
                pred = self.net(x, training=True)
                squared = tf.reduce_mean(tf.square(pred - y))
                absolute = tf.reduce_mean(tf.abs(pred - y))
            if self.kind == "squared":
                loss = squared
            elif self.kind == "absolute":
                loss = {absolute}
            else:
                raise ValueError(self.kind)
            grads = tape.gradient(loss, self.net.trainable_variables)
            self.opt.apply_gradients(zip(grads, self.net.trainable_variables))
"""


def test_a_loss_picked_after_the_tape_among_recorded_values_is_not_outside_it():
    assert _codes(PICKED_LOSS.format(absolute="absolute"), ["TFR305"]) == []


def test_a_loss_computed_after_the_tape_in_one_branch_is_still_reported():
    computed = "tf.reduce_mean(tf.abs(pred - y))"
    assert _codes(PICKED_LOSS.format(absolute=computed), ["TFR305"]) == ["TFR305"]


SLOT_WARM_UP = """
import tensorflow as tf


def warm_up(heads, optimizer):
    for index in range(len(heads)):
        head = heads[index]
        inputs = tf.zeros([2] + list(head.input_shape[1:]))
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(head(inputs))
        variables = head.trainable_variables
        grads = [g * 0.0 for g in tape.gradient(loss, variables)]
        optimizer.apply_gradients(zip(grads, variables))


def train(model, optimizer, batches):
    for x, y in batches:
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
"""


def test_a_loop_stepping_each_layer_it_iterates_once_is_no_training_loop():
    """The warm-up's tape differentiates the layer the loop picks each time
    (one step per layer: no step repeats, nothing to trace); the loop over
    batches steps one model again and again (TFR303)."""
    findings = check_source(_d(SLOT_WARM_UP), select=["TFR303"])
    assert [f.start.line for f in findings] == [17]
