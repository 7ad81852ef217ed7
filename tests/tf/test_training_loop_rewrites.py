"""The rewritten training loops reach the same losses as the originals: the
original runs as written (loss decorated, step eager / tape inline), the
rewrite runs with the decorator on the step, both seeded on the same data."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf
from tests.test_training_loop import RETURNS_GRADIENTS

from tfrewrite.api import fix_source_with_findings

from .equivalence import load_module, run_eagerly

SETUP = """
    import keras
    import numpy as np
    import tensorflow as tf


    def make_data():
        rng = np.random.default_rng(0)
        x = rng.normal(size=(200, 8)).astype("float32")
        y = (x[:, :3].argmax(axis=1)).astype("int32")
        return tf.data.Dataset.from_tensor_slices((x, y)).batch(48)


    def make_model():
        keras.utils.set_random_seed(0)
        return keras.Sequential(
            [keras.Input((8,)), keras.layers.Dense(16, activation="tanh"), keras.layers.Dense(3)]
        )
"""

LOSS_DECORATED = (
    SETUP
    + """

    @tf.function
    def loss_fn(labels, logits):
        return tf.reduce_mean(
            tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
        )


    def train_step(model, optimizer, x, y):
        with tf.GradientTape() as tape:
            logits = model(x, training=True)
            loss = loss_fn(y, logits)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss


    def train(epochs):
        model = make_model()
        optimizer = keras.optimizers.SGD(learning_rate=0.1)
        losses = []
        for epoch in range(epochs):
            for x, y in make_data():
                losses.append(float(train_step(model, optimizer, x, y)))
        return losses
"""
)

INLINE = (
    SETUP
    + """

    def train(epochs):
        model = make_model()
        optimizer = keras.optimizers.Adam(learning_rate=0.01)
        losses = []
        for epoch in range(epochs):
            for x, y in make_data():
                with tf.GradientTape() as tape:
                    logits = model(x, training=True)
                    loss = tf.reduce_mean(
                        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits)
                    )
                losses.append(float(loss))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return losses
"""
)

# Logging written inside the tape block: the rewrite moves it after the step.
INLINE_LOGGING_IN_TAPE = INLINE.replace(
    """
                    )
                losses.append(float(loss))""",
    """
                    )
                    losses.append(float(loss))""",
)
assert INLINE_LOGGING_IN_TAPE != INLINE

# Batches drawn by a `while` loop (`next(...)` until the loader runs dry).
INLINE_WHILE = INLINE.replace(
    "            for x, y in make_data():\n",
    "            batches = iter(make_data())\n"
    "            while True:\n"
    "                batch = next(batches, None)\n"
    "                if batch is None:\n"
    "                    break\n"
    "                x, y = batch\n",
)
assert INLINE_WHILE != INLINE

# Keras 3's `optimizer.apply(grads, variables)`, and a hand-written descent step.
INLINE_KERAS3_APPLY = INLINE.replace(
    "optimizer.apply_gradients(zip(grads, model.trainable_variables))",
    "optimizer.apply(grads, model.trainable_variables)",
)
assert INLINE_KERAS3_APPLY != INLINE
INLINE_ASSIGN_SUB = INLINE.replace(
    "optimizer.apply_gradients(zip(grads, model.trainable_variables))",
    "for variable, grad in zip(model.trainable_variables, grads):\n"
    "                    variable.assign_sub(0.1 * grad)",
)
assert INLINE_ASSIGN_SUB != INLINE
# The update loop's `v`, and a later generator that binds a `v` of its own:
# the extracted step must not return the loop's `v` for it.
# An optimizer the project writes, handed the gradients and the variables
# (a sharpness-aware step: perturb, then apply the base optimizer's update).
SHARPNESS_AWARE = """

    class SharpnessAware:
        def __init__(self, base, rho=0.05):
            self.base = base
            self.rho = rho

        def first_step(self, gradients, variables):
            scale = self.rho / (tf.linalg.global_norm(gradients) + 1e-12)
            for variable, gradient in zip(variables, gradients):
                variable.assign_sub(scale * gradient)
            self.base.apply_gradients(zip(gradients, variables))
"""
INLINE_OWN_OPTIMIZER = (
    INLINE.replace(
        "optimizer = keras.optimizers.Adam(learning_rate=0.01)",
        "optimizer = SharpnessAware(keras.optimizers.Adam(learning_rate=0.01))",
    )
    .replace(
        "optimizer.apply_gradients(zip(grads, model.trainable_variables))",
        "optimizer.first_step(grads, model.trainable_variables)",
    )
    .replace("\n\n    def train(epochs):", SHARPNESS_AWARE + "\n\n    def train(epochs):")
)
assert "first_step(grads" in INLINE_OWN_OPTIMIZER and "class SharpnessAware" in INLINE_OWN_OPTIMIZER
INLINE_GENERATOR_AFTER = (
    INLINE_ASSIGN_SUB.replace("for variable, grad", "for v, grad")
    .replace("variable.assign_sub", "v.assign_sub")
    .replace(
        "        return losses",
        "        print(sum(v * 1.0 for v in losses))\n        return losses",
    )
)
assert INLINE_GENERATOR_AFTER.count("for v in losses") == 1


@pytest.mark.parametrize(
    ("source", "codes"),
    [
        # TFR301's fix moves the decorator onto the step, which also settles
        # TFR302: both findings are fixed (as `check` counted them fixable).
        pytest.param(LOSS_DECORATED, {"TFR301", "TFR302"}, id="decorator-moved-to-step"),
        pytest.param(INLINE, {"TFR303"}, id="inline-tape-extracted"),
        pytest.param(INLINE_LOGGING_IN_TAPE, {"TFR303"}, id="logging-moved-out-of-the-tape"),
        pytest.param(INLINE_WHILE, {"TFR303"}, id="while-loop-drawing-batches"),
        pytest.param(INLINE_KERAS3_APPLY, {"TFR303"}, id="keras3-optimizer-apply"),
        pytest.param(INLINE_ASSIGN_SUB, {"TFR303"}, id="hand-written-assign-sub"),
        pytest.param(INLINE_OWN_OPTIMIZER, {"TFR303"}, id="optimizer-the-project-writes"),
        pytest.param(INLINE_GENERATOR_AFTER, {"TFR303"}, id="generator-binds-its-own-name"),
        pytest.param(RETURNS_GRADIENTS, {"TFR302"}, id="step-returns-its-gradients"),
    ],
)
def test_rewritten_loop_reaches_the_same_losses(source, codes):
    original_source = textwrap.dedent(source)
    rewritten, fixed, remaining = fix_source_with_findings(
        original_source, "loop.py", ["TFR3"], unsafe_fixes=True
    )
    assert {f.code for f in fixed} == codes
    assert remaining == []
    assert rewritten.count("@tf.function") == 1
    assert ", v = " not in rewritten  # only what the loop reads afterwards is returned
    original = load_module(original_source).train(3)
    module = load_module(rewritten)
    after = module.train(3)
    assert len(original) == len(after) == 15
    # The step really runs traced now: TensorFlow kept a concrete function.
    step = getattr(module, "train_step", None)
    if step is not None:
        assert step.experimental_get_tracing_count() >= 1
    np.testing.assert_allclose(after, original, rtol=1e-5, atol=1e-6)
    assert original[-1] < original[0]  # it trained


# -- combined fixes: a step decorated together with what it does under tracing -----------

STEP_WITH_PRINT = (
    SETUP
    + """

    def train_step(model, optimizer, x, y):
        with tf.GradientTape() as tape:
            logits = model(x, training=True)
            loss = tf.reduce_mean(
                tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits)
            )
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        print("step loss:", loss)
        return loss


    def train(epochs):
        model = make_model()
        optimizer = keras.optimizers.SGD(learning_rate=0.1)
        losses = []
        for epoch in range(epochs):
            for x, y in make_data():
                losses.append(float(train_step(model, optimizer, x, y)))
        return losses
"""
)


def test_step_decorated_with_its_print_fixed_trains_and_prints_every_step(capfd):
    original_source = textwrap.dedent(STEP_WITH_PRINT)
    rewritten, fixed, remaining = fix_source_with_findings(
        original_source, "loop.py", None, unsafe_fixes=True
    )
    assert {f.code for f in fixed} == {"TFR103", "TFR302"} and remaining == []
    assert "@tf.function(reduce_retracing=True)\ndef train_step(" in rewritten
    original = load_module(original_source).train(2)
    eager_out = capfd.readouterr().out
    module = load_module(rewritten)
    after = module.train(2)
    traced_out = capfd.readouterr().out
    assert module.train_step.experimental_get_tracing_count() >= 1
    np.testing.assert_allclose(after, original, rtol=1e-5, atol=1e-6)
    # One line per step, eagerly and traced (not one line at trace time).
    assert eager_out.count("step loss:") == traced_out.count("step loss:") == len(original)


STEP_WITH_LOSS_OBJECT = (
    SETUP
    + """

    loss_object = keras.losses.SparseCategoricalCrossentropy(from_logits=True)


    def train_step(model, optimizer, x, y):
        with tf.GradientTape() as tape:
            loss = loss_object(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        print(f"step loss: {loss.numpy():.4f}")
        return loss


    def train(epochs):
        model = make_model()
        optimizer = keras.optimizers.SGD(learning_rate=0.1)
        losses = []
        for epoch in range(epochs):
            for x, y in make_data():
                losses.append(float(train_step(model, optimizer, x, y)))
        return losses
"""
)


def test_step_with_a_keras_loss_object_and_a_formatted_print_is_decorated(capfd):
    """A Keras loss object's call is a tensor: the `.numpy()` read in the
    f-string goes with the print's rewrite, and the step takes the decorator."""
    original_source = textwrap.dedent(STEP_WITH_LOSS_OBJECT)
    rewritten, fixed, remaining = fix_source_with_findings(
        original_source, "loop.py", None, unsafe_fixes=True
    )
    assert {f.code for f in fixed} == {"TFR103", "TFR302"} and remaining == []
    original = load_module(original_source).train(2)
    eager_out = capfd.readouterr().out
    module = load_module(rewritten)
    after = module.train(2)
    traced_out = capfd.readouterr().out
    np.testing.assert_allclose(after, original, rtol=1e-5, atol=1e-6)
    eager_lines = [line for line in eager_out.splitlines() if line.startswith("step loss:")]
    traced_lines = [line for line in traced_out.splitlines() if line.startswith("step loss:")]
    assert len(eager_lines) == len(traced_lines) == len(original)
    assert eager_lines == traced_lines


LOSS_AFTER_TAPE = (
    SETUP
    + """

    def train_step(model, optimizer, x, y):
        with tf.GradientTape() as tape:
            logits = model(x, training=True)
        loss = tf.reduce_mean(
            tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits)
        )
        loss = loss + 1e-3 * tf.add_n([tf.nn.l2_loss(v) for v in model.trainable_variables])
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss


    def train(epochs):
        model = make_model()
        optimizer = keras.optimizers.SGD(learning_rate=0.1)
        losses = []
        for epoch in range(epochs):
            for x, y in make_data():
                losses.append(float(train_step(model, optimizer, x, y)))
        return losses
"""
)


def test_loss_moved_into_the_tape_trains_where_the_original_failed():
    """TFR305 fixes a divergence: the original cannot train ("No gradients
    provided"); the rewrite, run eagerly and traced, trains the same way."""
    original_source = textwrap.dedent(LOSS_AFTER_TAPE)
    rewritten, fixed, remaining = fix_source_with_findings(
        original_source, "loop.py", ["TFR3"], unsafe_fixes=True
    )
    assert {f.code for f in fixed} == {"TFR302", "TFR305"} and remaining == []
    with pytest.raises(ValueError, match="No gradients provided"):
        load_module(original_source).train(1)
    module = load_module(rewritten)
    traced = module.train(2)
    eager = run_eagerly(load_module(rewritten).train, 2)
    assert module.train_step.experimental_get_tracing_count() >= 1
    np.testing.assert_allclose(traced, eager, rtol=1e-5, atol=1e-6)
    assert traced[-1] < traced[0]


EVALUATION = """
    import keras
    import numpy as np
    import tensorflow as tf


    def predictions():
        # 2000 examples in batches of 512, 512, 512 and 464: 1397 of the first
        # 1536 right and 425 of the last 464 (accuracy 0.911000).
        labels = np.zeros(2000, dtype="int32")
        predicted = np.ones(2000, dtype="int32")
        predicted[:1397] = 0
        predicted[1536 : 1536 + 425] = 0
        return tf.data.Dataset.from_tensor_slices((predicted, labels)).batch(512)


    def evaluate():
        accuracies = []
        for x, y in predictions():
            accuracies.append(float(tf.reduce_mean(tf.cast(x == y, tf.float32))))
        return np.mean(accuracies)
"""


def test_weighted_average_gives_the_true_accuracy():
    """The figures TFR306's documentation quotes, measured."""
    original_source = textwrap.dedent(EVALUATION)
    rewritten, fixed, _ = fix_source_with_findings(
        original_source, "evaluate.py", ["TFR306"], unsafe_fixes=True
    )
    assert [f.code for f in fixed] == ["TFR306"]
    assert round(float(load_module(original_source).evaluate()), 6) == 0.911116
    assert round(float(load_module(rewritten).evaluate()), 6) == 0.911000
    metric = keras_accuracy_of(load_module(original_source).predictions())
    assert round(metric, 6) == 0.911000


TWO_EVALUATIONS = """
    import numpy as np
    import tensorflow as tf


    def batches(n, right, size):
        labels = np.zeros(n, dtype="int32")
        predicted = np.ones(n, dtype="int32")
        predicted[right] = 0
        return tf.data.Dataset.from_tensor_slices((predicted, labels)).batch(size)


    def train_data():
        return batches(2000, np.r_[0:1397, 1536:1961], 512)  # batches 512, 512, 512, 464


    def val_data():
        return batches(700, np.r_[0:250, 600:700], 300)  # batches 300, 300, 100


    def accuracy(x, y):
        return float(tf.reduce_mean(tf.cast(x == y, tf.float32)))


    def evaluate():
        for epoch in range(1):
            train_accs, train_errors = [], []
            val_accs, val_errors = [], []
            for x, y in train_data():
                train_accs.append(accuracy(x, y))
                train_errors.append(1.0 - accuracy(x, y))
            for x, y in val_data():
                val_accs.append(accuracy(x, y))
                val_errors.append(1.0 - accuracy(x, y))
        means = np.mean(train_accs), np.mean(train_errors)
        return means + (np.mean(val_accs), np.mean(val_errors))
"""


def test_two_loops_weighted_in_one_round_each_give_their_true_accuracy():
    """A training and a validation loop fixed in the same round: each keeps
    its own batch sizes, so each mean is its true accuracy (one shared list
    misaligned the weights)."""
    original_source = textwrap.dedent(TWO_EVALUATIONS)
    rewritten, fixed, _ = fix_source_with_findings(
        original_source, "evaluate.py", ["TFR306"], unsafe_fixes=True
    )
    assert [f.code for f in fixed] == ["TFR306"] * 4
    module = load_module(original_source)
    train = keras_accuracy_of(module.train_data())
    val = keras_accuracy_of(module.val_data())
    assert round(train, 6) == 0.911000 and round(val, 6) == 0.5
    truths = (train, 1.0 - train, val, 1.0 - val)
    np.testing.assert_allclose(load_module(rewritten).evaluate(), truths, rtol=1e-6)
    assert not np.allclose(module.evaluate(), truths, rtol=1e-6)  # the per-batch means


def keras_accuracy_of(batches) -> float:
    import keras

    metric = keras.metrics.Accuracy()
    for x, y in batches:
        metric.update_state(y, x)
    return float(metric.result())


TRAINING_FLAG = (
    SETUP
    + """

    def train_step(model, optimizer, x, y):
        with tf.GradientTape() as tape:
            logits = model(x)
            loss = tf.reduce_mean(
                tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits)
            )
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss


    def train(epochs, model=None):
        model = model or make_model()
        optimizer = keras.optimizers.SGD(learning_rate=0.1)
        losses = []
        for epoch in range(epochs):
            for x, y in make_data():
                losses.append(float(train_step(model, optimizer, x, y)))
        return losses
"""
)


def test_training_flag_changes_only_models_with_training_behaviour():
    """TFR304 changes behaviour on purpose: the same losses for a model without
    dropout or batch normalization, different ones with dropout."""
    original_source = textwrap.dedent(TRAINING_FLAG)
    rewritten, fixed, _ = fix_source_with_findings(
        original_source, "loop.py", ["TFR302", "TFR304"], unsafe_fixes=True
    )
    assert {f.code for f in fixed} == {"TFR302", "TFR304"}
    assert "logits = model(x, training=True)" in rewritten
    np.testing.assert_allclose(
        load_module(rewritten).train(2), load_module(original_source).train(2), rtol=1e-5
    )

    def with_dropout():
        import keras

        keras.utils.set_random_seed(0)
        return keras.Sequential(
            [
                keras.Input((8,)),
                keras.layers.Dense(16),
                keras.layers.Dropout(0.5),
                keras.layers.Dense(3),
            ]
        )

    before = load_module(original_source).train(1, with_dropout())
    after = load_module(rewritten).train(1, with_dropout())
    assert not np.allclose(before, after)


# -- the example script: one fix migrates it -------------------------------------------------

EXAMPLE = Path(__file__).parent.parent.parent / "examples" / "eager_tutorial.py"


def _from_file(source: str, path: Path):
    """Import `source` from a file, as a script runs: AutoGraph needs the source
    to convert the `if` on a tensor that is left for it."""
    import importlib.util

    path.write_text(source)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _example_module(source: str, path: Path):
    module = _from_file(source, path)
    import keras

    keras.utils.set_random_seed(1)
    # Same weights for both runs; no dropout, so eager and traced runs agree
    # up to the input noise (random draws differ between eager and traced ops).
    module.model = keras.Sequential(
        [keras.Input((32,)), keras.layers.Dense(64, activation="relu"), keras.layers.Dense(10)]
    )
    module.optimizer = keras.optimizers.SGD(learning_rate=0.5)
    return module


def test_example_script_migrated_by_one_fix_trains_and_runs_traced(capfd, tmp_path):
    original_source = EXAMPLE.read_text()
    rewritten, fixed, remaining = fix_source_with_findings(
        original_source, "eager_tutorial.py", None, unsafe_fixes=True
    )
    codes = {f.code for f in fixed}
    assert {"TFR102", "TFR103", "TFR301", "TFR302", "TFR304", "TFR305", "TFR306"} <= codes
    assert "TFR307" in codes
    assert (
        fix_source_with_findings(rewritten, "eager_tutorial.py", None, unsafe_fixes=True)[1] == []
    )  # one fix reached the fixed point
    assert remaining == []  # the gradient-norm `if` is a `tf.cond` too
    tf.config.run_functions_eagerly(False)

    # The original step cannot train: its loss is computed after the tape.
    original = load_module(original_source)
    tf.config.run_functions_eagerly(False)
    batches = list(original.make_dataset())
    with pytest.raises(ValueError, match="No gradients provided"):
        original.train_step(*batches[0])

    # The migrated step, traced, against the same step run eagerly, op by op,
    # from the same weights on the same batches.
    traced = _example_module(rewritten, tmp_path / "migrated_a.py")
    eager = _example_module(rewritten, tmp_path / "migrated_b.py")
    traced_losses = [float(traced.train_step(x, y)[0]) for x, y in batches * 2]
    eager_losses = [float(run_eagerly(eager.train_step, x, y)[0]) for x, y in batches * 2]
    assert traced.train_step.experimental_get_tracing_count() in (1, 2)
    np.testing.assert_allclose(traced_losses, eager_losses, rtol=0, atol=2e-2)
    assert traced_losses[-1] < traced_losses[0] - 0.1  # it trains
    for a, b in zip(traced.model.get_weights(), eager.model.get_weights(), strict=True):
        np.testing.assert_allclose(a, b, atol=5e-2)
    # tf.print shows a value per step, not a symbolic tensor once.
    out = capfd.readouterr().out
    assert "Tensor(" not in out
    # And it is the point of the migration: the traced step is much faster
    # (benchmarks/train_step_payoff.py measures about 10x; 2x here, on a busy machine).
    import time

    def median_step(call) -> float:
        times = []
        for x, y in batches * 3:
            start = time.perf_counter()
            float(call(x, y)[0])
            times.append(time.perf_counter() - start)
        return sorted(times)[len(times) // 2]

    eager_time = median_step(lambda x, y: run_eagerly(eager.train_step, x, y))
    traced_time = median_step(traced.train_step)
    assert eager_time > 2 * traced_time


PER_OUTPUT_LOSSES = """
    import keras
    import numpy as np
    import tensorflow as tf


    def train(epochs):
        keras.utils.set_random_seed(0)
        inputs = keras.Input((8,))
        hidden = keras.layers.Dense(16, activation="tanh")(inputs)
        model = keras.Model(inputs, [keras.layers.Dense(1)(hidden), keras.layers.Dense(1)(hidden)])
        optimizer = keras.optimizers.SGD(learning_rate=0.05)
        rng = np.random.default_rng(0)
        x = rng.normal(size=(200, 8)).astype("float32")
        targets = (x[:, :1] * 2.0, x[:, 1:2] - 1.0)
        dataset = tf.data.Dataset.from_tensor_slices((x, targets)).batch(64)
        history = []
        for epoch in range(epochs):
            for xb, ys in dataset:
                with tf.GradientTape(persistent=True) as tape:
                    outputs = model(xb, training=True)
                    losses = []
                    for out, y in zip(outputs, ys):
                        losses.append(tf.reduce_mean(tf.square(out - y)))
                    total = tf.add_n(losses)
                grads = tape.gradient(total, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
                del tape
                history.append(float(total))
        return history
"""


def test_extracted_step_keeps_every_output_loss():
    """The loop collecting one loss per output stays in the step (moved out,
    the step would train on nothing); `del tape` goes with the tape."""
    original_source = textwrap.dedent(PER_OUTPUT_LOSSES)
    rewritten, fixed, remaining = fix_source_with_findings(
        original_source, "loop.py", ["TFR303"], unsafe_fixes=True
    )
    assert [f.code for f in fixed] == ["TFR303"] and remaining == []
    assert "        del tape\n        return total" in rewritten
    original = load_module(original_source).train(2)
    after = load_module(rewritten).train(2)
    np.testing.assert_allclose(after, original, rtol=1e-5, atol=1e-6)
    assert after[-1] < after[0]


# A helper the tape block calls reads the batch's static shape: the extracted
# step takes no `reduce_retracing` (which would trace the short final batch
# with an unknown batch dimension, where `x.shape[0]` is None), so each batch
# size is traced with its shape and the helper's static shape is the shape.
INLINE_STATIC_SHAPE_IN_HELPER = (
    SETUP
    + """

    def bias_for(x, bias):
        return tf.broadcast_to(bias, (x.shape[0], 3))


    def train(epochs):
        model = make_model()
        optimizer = keras.optimizers.Adam(learning_rate=0.01)
        bias = tf.constant([0.1, 0.0, -0.1])
        losses = []
        for epoch in range(epochs):
            for x, y in make_data():
                with tf.GradientTape() as tape:
                    logits = model(x, training=True) + bias_for(x, bias)
                    loss = tf.reduce_mean(
                        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits)
                    )
                losses.append(float(loss))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return losses
"""
)


def test_helper_of_an_extracted_step_reads_whole_shapes():
    original_source = textwrap.dedent(INLINE_STATIC_SHAPE_IN_HELPER)
    rewritten, fixed, remaining = fix_source_with_findings(
        original_source, "loop.py", None, unsafe_fixes=True
    )
    assert [f.code for f in fixed] == ["TFR303"] and remaining == []
    assert "reduce_retracing" not in rewritten and "(x.shape[0], 3)" in rewritten
    again, _, _ = fix_source_with_findings(rewritten, "loop.py", None, unsafe_fixes=True)
    assert again == rewritten
    original = load_module(original_source).train(3)
    module = load_module(rewritten)
    after = module.train(3)
    assert len(original) == len(after) == 15
    np.testing.assert_allclose(after, original, rtol=1e-5, atol=1e-6)


PER_EPISODE = """
    import keras
    import numpy as np
    import tensorflow as tf


    class Agent:
        def __init__(self):
            keras.utils.set_random_seed(0)
            self.critic = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
            self.optimizer = keras.optimizers.SGD(learning_rate=0.05)
            self.history = []

        def batches(self, episode):
            rng = np.random.default_rng(episode)
            states = rng.normal(size=(3, 16, 4)).astype("float32")
            return [(s, s[:, :1] * 2.0) for s in states]

        def run_episode(self, episode, gamma):
            for states, returns in self.batches(episode):
                with tf.GradientTape() as tape:
                    values = self.critic(states, training=True)
                    loss = tf.reduce_mean(tf.square(gamma * returns - values))
                grads = tape.gradient(loss, self.critic.trainable_variables)
                self.optimizer.apply_gradients(zip(grads, self.critic.trainable_variables))
                self.history.append(float(loss))


    def train(episodes):
        agent = Agent()
        for episode in range(episodes):
            agent.run_episode(episode, 0.9)
        return agent
"""


def test_step_hoisted_from_a_per_episode_method_is_traced_once():
    original_source = textwrap.dedent(PER_EPISODE)
    rewritten, fixed, remaining = fix_source_with_findings(
        original_source, "agent.py", ["TFR303"], unsafe_fixes=True
    )
    assert [f.code for f in fixed] == ["TFR303"] and remaining == []
    assert "    def critic_train_step(self, states, returns, gamma):" in rewritten
    original = load_module(original_source).train(4)
    after = load_module(rewritten).train(4)
    np.testing.assert_allclose(after.history, original.history, rtol=1e-5, atol=1e-6)
    assert after.critic_train_step.experimental_get_tracing_count() == 1


# Sections of one script that train the same way share one extracted step; the
# evaluation section may see the first section's loss (its loop can be empty).
SECTIONS = (
    SETUP
    + """

    def train(epochs):
        model = make_model()
        optimizer = keras.optimizers.SGD(learning_rate=0.1)
        seen = []
        for epoch in range(epochs):
            for x, y in make_data():
                with tf.GradientTape() as tape:
                    logits = model(x, training=True)
                    loss = tf.reduce_mean(
                        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits)
                    )
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
            if epoch % 2 == 0:
                for x, y in make_data().take(epoch):
                    with tf.GradientTape() as tape:
                        logits = model(x, training=True)
                        loss = tf.reduce_mean(
                            tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits)
                        )
                    grads = tape.gradient(loss, model.trainable_variables)
                    optimizer.apply_gradients(zip(grads, model.trainable_variables))
                seen.append(float(loss))
        for x, y in make_data().take(2):
            with tf.GradientTape() as tape:
                logits = model(x, training=True)
                loss = tf.reduce_mean(
                    tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits)
                )
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return seen + [float(w.numpy().sum()) for w in model.trainable_variables]
"""
)


def test_identical_sections_share_one_traced_step_and_train_the_same():
    original_source = textwrap.dedent(SECTIONS)
    rewritten, fixed, remaining = fix_source_with_findings(
        original_source, "sections.py", ["TFR303"], unsafe_fixes=True
    )
    assert [f.code for f in fixed] == ["TFR303"] * 3 and remaining == []
    assert rewritten.count("def train_step(") == 1 and rewritten.count("@tf.function") == 1
    assert rewritten.count("loss = train_step(x, y)") == 2  # what `seen` may read
    original = load_module(original_source).train(5)
    module = load_module(rewritten)
    after = module.train(5)
    assert len(original) == len(after) == 3 + 4  # three evaluations, four weight sums
    np.testing.assert_allclose(after, original, rtol=1e-5, atol=1e-5)


EAGER_COMPILE = """
import keras
import numpy as np


def train():
    keras.utils.set_random_seed(3)
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3), keras.layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse", run_eagerly=True)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(50, 4)).astype("float32")
    y = x.sum(axis=1, keepdims=True)
    history = model.fit(x, y, batch_size=16, epochs=3, shuffle=False, verbose=0)
    return model, history.history["loss"]
"""


def test_a_model_compiled_without_run_eagerly_trains_the_same_traced():
    rewritten, fixed, _ = fix_source_with_findings(
        EAGER_COMPILE, "fit_eagerly.py", ["TFR307"], unsafe_fixes=True
    )
    assert [f.code for f in fixed] == ["TFR307"]
    assert "run_eagerly" not in rewritten
    eager_model, eager_losses = load_module(EAGER_COMPILE).train()
    traced_model, traced_losses = load_module(rewritten).train()
    assert eager_model.run_eagerly and not traced_model.run_eagerly
    np.testing.assert_allclose(traced_losses, eager_losses, rtol=1e-5)
    for a, b in zip(eager_model.get_weights(), traced_model.get_weights(), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
