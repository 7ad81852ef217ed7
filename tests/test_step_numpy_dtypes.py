"""TFR302 on train steps whose loop hands them NumPy arrays that are not
float32: eagerly an array takes the dtype of the tensor it meets; traced it
arrives as a tensor of its own dtype. The step is refused where its own
arithmetic mixes such an array with tensors, decorated by an unsafe fix
(with the reason) where it hands the array to what tfrewrite cannot see
convert it, and decorated safely where only a Keras model and a Keras `Loss`
object take it. The sources define `train(epochs)`, returning the loss of
every step; `tf/test_step_numpy_dtypes_tf.py` runs them."""

from __future__ import annotations

import textwrap

from tfrewrite.api import check_source, fix_source_with_findings

SETUP = """
    import numpy as np
    import tensorflow as tf


    def make_model():
        tf.keras.utils.set_random_seed(0)
        return tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(1)])


    model = make_model()
    optimizer = tf.keras.optimizers.SGD(0.1)
"""

# Float64 labels (`np.array` over Python floats), sliced per batch in the
# loop's call, subtracted from the model's float32 prediction in the step.
LABELS_FLOAT64 = textwrap.dedent(
    SETUP
    + """

    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(y - model(x, training=True)))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss


    X = np.linspace(0.0, 1.0, 256, dtype=np.float32).reshape(64, 4)
    Y = np.array([[float(i % 3)] for i in range(64)])


    def train(epochs):
        losses = []
        for epoch in range(epochs):
            for i in range(0, 64, 16):
                losses.append(float(train_step(X[i : i + 16], Y[i : i + 16])))
        return losses
"""
)

# Labels made float64 with `.astype("float64")`, bound per batch in the loop.
LABELS_ASTYPE = textwrap.dedent(
    SETUP
    + """

    def train_step(x, y):
        with tf.GradientTape() as tape:
            pred = model(x, training=True)
            loss = tf.reduce_mean((pred - y) ** 2)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss


    X = np.linspace(0.0, 1.0, 256, dtype=np.float32).reshape(64, 4)
    LABELS = np.arange(64).reshape(64, 1) % 3
    Y = LABELS.astype("float64")


    def train(epochs):
        losses = []
        for epoch in range(epochs):
            for i in range(0, 64, 16):
                y = Y[i : i + 16]
                losses.append(float(train_step(X[i : i + 16], y)))
        return losses
"""
)

# Inputs and labels both float64 (`np.random.rand`, drawn per batch), the
# labels handed to a Keras loss function tfrewrite does not see convert them.
RAND_LOSS_FUNCTION = textwrap.dedent(
    SETUP
    + """
    loss_fn = tf.keras.losses.mse


    def train_step(x, y):
        with tf.GradientTape() as tape:
            pred = model(x, training=True)
            loss = tf.reduce_mean(loss_fn(y, pred))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss


    def train(epochs):
        np.random.seed(0)
        losses = []
        for epoch in range(epochs):
            for _ in range(4):
                x = np.random.rand(16, 4)
                y = np.random.rand(16, 1)
                losses.append(float(train_step(x, y)))
        return losses
"""
)

# The same arrays handed only to the Keras model and a Keras `Loss` object,
# which cast them to float32 alike eagerly and traced.
RAND_LOSS_OBJECT = RAND_LOSS_FUNCTION.replace(
    "loss_fn = tf.keras.losses.mse", "loss_fn = tf.keras.losses.MeanSquaredError()"
)
assert RAND_LOSS_OBJECT != RAND_LOSS_FUNCTION

# Arrays made float32 at the source: nothing to convert.
RAND_FLOAT32 = RAND_LOSS_FUNCTION.replace(
    "np.random.rand(16, 4)", "np.random.rand(16, 4).astype(np.float32)"
).replace("np.random.rand(16, 1)", "np.random.rand(16, 1).astype(np.float32)")
assert RAND_FLOAT32.count("astype(np.float32)") == 2

# `y = tf.cast(y, tf.float32)` first in the step casts the same float64
# values eagerly and traced: every later read sees a float32 tensor.
RAND_CAST_FIRST = RAND_LOSS_FUNCTION.replace(
    "    with tf.GradientTape() as tape:\n        pred",
    "    y = tf.cast(y, tf.float32)\n    with tf.GradientTape() as tape:\n        pred",
)
assert RAND_CAST_FIRST != RAND_LOSS_FUNCTION


def decorated(source: str) -> str:
    """`source` with its step decorated as TFR302 decorates it."""
    return source.replace("\ndef train_step(", "\n@tf.function\ndef train_step(")


def _fix(source: str, unsafe: bool):
    return fix_source_with_findings(source, "train.py", ["TFR302"], unsafe_fixes=unsafe)


def _tfr302(source: str):
    (finding,) = [f for f in check_source(source, "train.py", ["TFR302"])]
    return finding


def test_float64_labels_sliced_in_the_call_keep_the_step_eager() -> None:
    finding = _tfr302(LABELS_FLOAT64)
    assert finding.fix is None
    assert (
        "line 24 makes `Y` a NumPy array, which the step takes as `y` and mixes with "
        "tensors in `y - model(x, training=True)`"
    ) in finding.message
    for unsafe in (False, True):
        rewritten, fixed, remaining = _fix(LABELS_FLOAT64, unsafe)
        assert rewritten == LABELS_FLOAT64 and fixed == []
        assert [f.code for f in remaining] == ["TFR302"]


def test_labels_made_float64_with_astype_keep_the_step_eager() -> None:
    finding = _tfr302(LABELS_ASTYPE)
    assert finding.fix is None
    assert "line 25 makes `LABELS` a NumPy array" not in finding.message
    assert "line 26 makes `Y` a NumPy array, which the step takes as `y`" in finding.message
    assert "`pred - y`" in finding.message
    rewritten, fixed, _ = _fix(LABELS_ASTYPE, True)
    assert rewritten == LABELS_ASTYPE and fixed == []


def test_float64_labels_handed_to_a_loss_function_make_the_decoration_unsafe() -> None:
    finding = _tfr302(RAND_LOSS_FUNCTION)
    assert finding.fix is not None
    assert finding.fix.message == (
        "Decorate `train_step` with `@tf.function` (unsafe: `y` is a float64 NumPy array "
        "at the loop's call (line 32): traced, it arrives as a float64 tensor where eagerly "
        "it takes the dtype of the tensor it meets, and `loss_fn(y, pred)` may raise on it "
        "(float64 meeting the model's float32 does))"
    )
    rewritten, fixed, remaining = _fix(RAND_LOSS_FUNCTION, False)
    assert rewritten == RAND_LOSS_FUNCTION and fixed == []
    assert [f.code for f in remaining] == ["TFR302"]
    rewritten, fixed, remaining = _fix(RAND_LOSS_FUNCTION, True)
    assert [f.code for f in fixed] == ["TFR302"] and remaining == []
    assert rewritten == decorated(RAND_LOSS_FUNCTION)


def test_float64_arrays_only_keras_converts_are_decorated_safely() -> None:
    rewritten, fixed, remaining = _fix(RAND_LOSS_OBJECT, False)
    assert [f.code for f in fixed] == ["TFR302"] and remaining == []
    assert rewritten == decorated(RAND_LOSS_OBJECT)


def test_float32_arrays_are_decorated_safely() -> None:
    rewritten, fixed, remaining = _fix(RAND_FLOAT32, False)
    assert [f.code for f in fixed] == ["TFR302"] and remaining == []
    assert rewritten == decorated(RAND_FLOAT32)


def test_arrays_of_a_model_factory_the_file_cannot_see_are_not_proven() -> None:
    """A model whose binding tfrewrite cannot follow to a Keras class may
    be a `tf.Module` that does not convert its float64 input."""
    source = RAND_LOSS_OBJECT.replace("model = make_model()", "model = build_model()")
    finding = _tfr302(source)
    assert finding.fix is not None and "`x` is a float64 NumPy array" in finding.fix.message
    assert "`model(x, training=True)` may raise on it" in finding.fix.message


def test_float64_labels_cast_first_in_the_step_are_decorated_safely() -> None:
    rewritten, fixed, remaining = _fix(RAND_CAST_FIRST, False)
    assert [f.code for f in fixed] == ["TFR302"] and remaining == []
    assert rewritten == decorated(RAND_CAST_FIRST)


ONE_HOT = textwrap.dedent(
    SETUP
    + """

    def train_step(x, labels):
        with tf.GradientTape() as tape:
            target = tf.one_hot(labels, 1)
            loss = tf.keras.losses.MeanSquaredError()(target, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss


    X = np.linspace(0.0, 1.0, 32, dtype=np.float32).reshape(8, 4)
    LABELS = np.array([0, 1, 0, 0, 1, 0, 0, 0])


    def train(epochs):
        losses = []
        for epoch in range(epochs):
            for i in range(0, 8, 2):
                losses.append(float(train_step(X[i : i + 2], LABELS[i : i + 2])))
        return losses
"""
)


def test_integer_labels_taken_as_indices_are_decorated_safely() -> None:
    """`tf.one_hot` takes an int64 array as int64 indices eagerly and traced."""
    rewritten, fixed, remaining = _fix(ONE_HOT, False)
    assert [f.code for f in fixed] == ["TFR302"] and remaining == []
    assert "@tf.function" in rewritten and "def train_step(" in rewritten


def test_float_labels_taken_as_indices_make_the_decoration_unsafe() -> None:
    """Eagerly `tf.one_hot` converts a float64 array to indices; traced the
    float64 tensor raises."""
    source = ONE_HOT.replace("np.array([0, 1, 0, 0, 1, 0, 0, 0])", "np.zeros(8)")
    finding = _tfr302(source)
    assert finding.fix is not None
    assert finding.fix.message.startswith(
        "Decorate `train_step` with `@tf.function(reduce_retracing=True)` (unsafe: `labels` "
        "is a float64 NumPy array at the loop's call (line 25)"
    )
    assert "`tf.one_hot(labels, 1)` may raise on it" in finding.fix.message
