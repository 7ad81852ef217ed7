"""TFR104 / TFR105 under TensorFlow: NumPy math and `.numpy()` on tensors work
eagerly and fail when traced; the rewrites compute the same values, shapes and
dtypes eagerly and traced with `autograph=False`.

For every mapping: the original (decorated with `@tf.function`) run eagerly is
the reference; the original traced raises (the hazard is real); the rewrite
produced by `fix_source` equals the reference eagerly and traced. Inputs come
in float32 and float64, so dtype preservation is checked for both.
"""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
import tensorflow as tf

from tfrewrite.api import check_source, fix_source

from .equivalence import assert_rewrite_equivalent, load_module, python_function, run_eagerly
from .fdcapture import capture_fds

TEMPLATE = """\
import numpy as np
import tensorflow as tf


@tf.function
def f(y_true, y_pred):
    i = tf.cast(tf.round(y_true * 4.0), tf.int32)
    b = y_true > 0.25
    return {expr}
"""

# Values with exact halves (rounding), negatives (abs, sign, clip) and a
# strictly positive `y_pred` (log, sqrt).
_Y_TRUE = np.array([[-1.5, 0.5, 2.5], [0.25, -0.75, 1.0], [3.5, -2.5, 0.0], [0.1, 0.9, -0.3]])
_Y_PRED = np.array([[0.2, 0.7, 0.9], [0.05, 0.5, 0.95], [0.3, 0.6, 0.1], [0.8, 0.4, 0.15]])
INPUTS = [
    (tf.constant(_Y_TRUE, tf.float32), tf.constant(_Y_PRED, tf.float32)),
    (tf.constant(_Y_TRUE, tf.float64), tf.constant(_Y_PRED, tf.float64)),
]

SAFE_EXPRESSIONS = [
    "np.mean(np.square(y_true - y_pred))",
    "np.mean(np.square(y_true - y_pred), axis=-1)",
    "np.mean(y_pred, axis=0, keepdims=True)",
    "np.mean(y_pred, 1, None, None, True)",
    "np.mean(y_pred, axis=None)",
    "np.sum(np.abs(y_true - y_pred), axis=1)",
    "np.prod(y_pred, axis=0)",
    "np.max(y_true, axis=-1)",
    "np.amin(y_true)",
    "np.std(y_pred)",
    "np.std(y_pred, axis=0, ddof=0)",
    "np.var(y_true, -1, keepdims=True)",
    "np.mean(i)",
    "np.mean(b, axis=0)",
    "np.std(i, axis=1)",
    "np.sqrt(y_pred)",
    "np.exp(-np.abs(y_true))",
    "np.log(y_pred + 1e-7)",
    "np.log1p(y_pred)",
    "np.tanh(y_true)",
    "np.sign(y_true)",
    "np.floor(y_true)",
    "np.ceil(y_true)",
    "np.round(y_true)",
    "np.around(y_true * 2.0, decimals=0)",
    "np.abs(i)",
    "np.maximum(y_true, 0.0)",
    "np.minimum(y_true, y_pred)",
    "np.maximum(i, 1)",
    "np.clip(y_true, -1.0, 1.0)",
    "np.clip(y_pred, 1e-7, 1.0 - 1e-7)",
    "np.clip(y_true, 0.0, None)",
    "np.clip(y_true, a_min=None, a_max=0.5)",
    "np.where(b, y_pred, 0.0)",
    "np.where(y_true > y_pred, y_true, y_pred)",
    "np.concatenate([y_true, y_pred])",
    "np.concatenate((y_true, y_pred), axis=-1)",
    "np.stack([y_true, y_pred], axis=1)",
    "np.stack([b, b])",
    # a Python number first: the rewrite puts the tensor first (float64 inputs too)
    "np.maximum(0, y_true)",
    "np.minimum(1.0, y_pred)",
    "np.where(b, 0, y_true)",
    "np.where(y_true > y_pred, 1.0, y_pred)",
    # `~` and `&` of booleans: NumPy averages them in float64
    "np.mean(~b)",
    "np.mean(b & (y_pred > 0.5), axis=0)",
    "np.sqrt(np.mean(np.square(y_true - y_pred)))",
    "np.mean(np.maximum(1.0 - y_true * y_pred, 0.0))",
    # booleans are counted in int64
    "np.sum(b)",
    "np.sum(b, axis=0)",
    "np.prod(b, axis=1)",
    # a NumPy float64/int64 scalar meeting a tensor takes the tensor's dtype
    "y_pred + np.mean(b)",
    "y_pred - 0.5 * np.mean(i)",
    "y_true * np.sum(b)",
    "np.mean(b) < y_pred",
    # power, log2, norm, argmax
    "np.power(y_pred, 2)",
    "np.power(y_pred, 0.5)",
    "np.power(i, 2)",
    "np.power(2.0, y_true)",
    "np.power(10.0, y_true - 1.0)",
    "np.linalg.norm(y_true)",
    "np.linalg.norm(y_true, axis=-1)",
    "np.linalg.norm(y_true, None, 0, True)",
    "np.argmax(y_true)",
    "np.argmax(y_true, axis=-1)",
    "np.argmin(y_pred, 0)",
    "np.argmax(i, axis=1)",
]


def _rewrite(source: str, unsafe: bool = False) -> str:
    rewritten = fix_source(source, select=["TFR104", "TFR105"], unsafe_fixes=unsafe)
    assert rewritten != source, "nothing was rewritten"
    assert check_source(rewritten, select=["TFR104", "TFR105"]) == [], rewritten
    return rewritten


def _traced_original_fails(
    source: str, args: tuple, error: type[Exception] | tuple[type[Exception], ...]
) -> None:
    traced = tf.function(python_function(load_module(source).f), autograph=False)
    with pytest.raises(error):
        traced(*args)


@pytest.mark.parametrize("expr", SAFE_EXPRESSIONS)
def test_safe_rewrite_matches_numpy(expr):
    source = TEMPLATE.format(expr=expr)
    _traced_original_fails(source, INPUTS[0], NotImplementedError)
    assert_rewrite_equivalent(source, _rewrite(source), "f", INPUTS, autograph=False)


# Unsafe fixes whose premise holds here (the tensor is floating-point, the
# bounds are ordered, the condition is boolean): then the rewrite is exact too.
UNSAFE_EXPRESSIONS = [
    "np.mean(u)",
    "np.sum(u, axis=0)",
    "np.sqrt(u)",
    "np.maximum(u, 0.5)",
    "np.clip(y_true, lo, 1.0)",
    "np.where(c, y_true, 0.0)",
    # log(x) / log(2): within a unit in the last place
    "np.log2(y_pred)",
    "1.0 / np.log2(y_pred + 1.0)",
    "-np.log2(y_pred) - 1.0",
]


@pytest.mark.parametrize("expr", UNSAFE_EXPRESSIONS)
def test_unsafe_rewrite_matches_numpy_when_its_premise_holds(expr):
    # `helper` takes `*unused`: tfrewrite does not work out what such a
    # helper returns, so the dtype of `u` and `c` stays unknown.
    source = textwrap.dedent(
        f"""\
        import numpy as np
        import tensorflow as tf


        def helper(x, *unused):
            return x


        @tf.function
        def f(y_true, y_pred):
            u = tf.abs(helper(y_pred))
            c = tf.identity(helper(y_true > 0.0))
            lo = -0.5
            return {expr}
        """
    )
    assert fix_source(source, select=["TFR104"]) == source, "an unsafe fix counted as safe"
    assert_rewrite_equivalent(source, _rewrite(source, unsafe=True), "f", INPUTS, autograph=False)


LOSSES = {
    "binary_crossentropy": """\
        p = np.clip(y_pred, 1e-7, 1.0 - 1e-7)
        loss = -(y_true * np.log(p) + (1.0 - y_true) * np.log(1.0 - p))
        return np.mean(loss, axis=-1)
    """,
    "huber": """\
        err = np.abs(y_true - y_pred)
        quadratic = np.minimum(err, 1.0)
        return np.mean(0.5 * np.square(quadratic) + (err - quadratic), axis=-1)
    """,
    "hinge": """\
        return np.mean(np.maximum(1.0 - y_true * y_pred, 0.0), axis=-1)
    """,
    # `np.log(2.0)` is NumPy on a Python number: fine under tracing, left alone.
    "log_cosh": """\
        diff = y_pred - y_true
        return np.mean(diff + np.log1p(np.exp(-2.0 * diff)) - np.log(2.0), axis=-1)
    """,
    "weighted_rmse": """\
        weights = np.where(y_true > 0.0, 2.0 * y_true, 1.0 - y_true)
        return np.sqrt(np.sum(weights * np.square(y_true - y_pred)) / np.sum(weights))
    """,
}


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_realistic_loss_rewrite_matches_numpy(name):
    body = textwrap.indent(textwrap.dedent(LOSSES[name]), "    ")
    header = "import numpy as np\nimport tensorflow as tf\n\n\n@tf.function\n"
    source = f"{header}def f(y_true, y_pred):\n{body}"
    _traced_original_fails(source, INPUTS[0], NotImplementedError)
    rewritten = _rewrite(source)
    assert fix_source(rewritten, select=["TFR104"], unsafe_fixes=True) == rewritten
    assert_rewrite_equivalent(source, rewritten, "f", INPUTS, autograph=False)


def test_keras_loss_rewrite_trains_like_the_eager_original():
    """The example from the hazard table: a NumPy MSE given to `compile`.
    Keras traces it, so the original fails in `fit`; the rewrite trains and
    gives the loss the original gives eagerly."""
    source = textwrap.dedent(
        """\
        import numpy as np
        from tensorflow import keras


        def mse(y_true, y_pred):
            return np.mean(np.square(y_true - y_pred))


        def build():
            dense = keras.layers.Dense(1, kernel_initializer="ones")
            model = keras.Sequential([keras.Input((3,)), dense])
            model.compile(optimizer="sgd", loss=mse)
            return model
        """
    )
    rewritten = _rewrite(source)
    assert "return tf.reduce_mean(tf.square(y_true - y_pred))" in rewritten
    x = np.linspace(-1.0, 1.0, 12, dtype=np.float32).reshape(4, 3)
    y = np.array([[0.5], [1.0], [-1.0], [0.0]], dtype=np.float32)

    original = load_module(source)
    with pytest.raises(NotImplementedError):
        original.build().fit(x, y, epochs=1, verbose=0)
    model = load_module(rewritten).build()
    expected = original.mse(tf.constant(y), model(x))  # eager: NumPy converts the tensors
    assert model.evaluate(x, y, verbose=0) == pytest.approx(float(expected), rel=1e-6)


FOLLOWED_BODIES = [
    "rate = np.mean(b)\n    return y_pred * rate",
    "m = np.mean(y_pred, axis=0)\n    return tf.constant(m) + 1.0",
    "m = np.max(y_pred)\n    return np.asarray(m, dtype=np.float64)",
    "return np.mean(y_true).astype(np.float32) * 2.0",
    "return tf.convert_to_tensor(np.mean(b), tf.float32) * 2.0",
    "count = np.sum(b, axis=-1)\n    return tf.cast(count, tf.float32) / 3.0",
]


@pytest.mark.parametrize("body", FOLLOWED_BODIES)
def test_the_result_followed_to_its_uses_matches(body):
    """The conversions around a NumPy result are rewritten with it, and a cast
    takes the dtype of the tensor the result meets (float32 and float64)."""
    source = TEMPLATE.format(expr="None").replace("return None", body)
    rewritten = _rewrite(source)
    assert "np." not in rewritten.split("def f")[1], rewritten
    assert_rewrite_equivalent(source, rewritten, "f", INPUTS, autograph=False)


def test_log2_is_not_exact_at_every_power_of_two():
    """Why the `np.log2` rewrite is unsafe: `np.floor(np.log2(n))` counts bits,
    and `log(x) / log(2)` gives 14.999999 for float32 `2**15`."""
    source = TEMPLATE.format(expr="np.floor(np.log2(y_pred))")
    rewritten = fix_source(source, select=["TFR104"], unsafe_fixes=True)
    assert "tf.floor(tf.math.log(y_pred) / math.log(2.0))" in rewritten
    x = tf.constant([2.0**15], tf.float32)
    expected = run_eagerly(python_function(load_module(source).f), x, x)
    actual = tf.function(python_function(load_module(rewritten).f))(x, x)
    assert np.asarray(expected)[0] == 15.0 and actual.numpy()[0] == 14.0


BUILTIN = """\
import tensorflow as tf


@tf.function
def f(y_true, y_pred):
    m = tf.reduce_mean(y_true)
    return {expr}
"""

BUILTIN_EXPRESSIONS = [
    "max(m, 0.0)",
    "min(m, 0.0)",
    "max(0.0, m)",
    "min(m, tf.reduce_max(y_pred), 1.0)",
    "max([m, tf.reduce_min(y_true)])",
    "max(y_pred[0])",
    "min(y_true[:, 1])",
    "max(tf.cast(m * 10.0, tf.int32), 1)",
]


def _same_value(expected, actual) -> None:
    """Python's `max` returns one operand unchanged: a Python float where the
    number wins, a tensor otherwise. The rewrite returns a tensor of the
    tensor's dtype; the values must agree."""
    expected = tf.convert_to_tensor(expected, dtype=actual.dtype)
    np.testing.assert_allclose(actual.numpy(), expected.numpy(), rtol=1e-6)


@pytest.mark.parametrize("expr", BUILTIN_EXPRESSIONS)
def test_builtin_extremum_rewrite_matches(expr):
    source = BUILTIN.format(expr=expr)
    _traced_original_fails(source, INPUTS[0], tf.errors.OperatorNotAllowedInGraphError)
    rewritten = _rewrite(source)
    original = python_function(load_module(source).f)
    function = python_function(load_module(rewritten).f)
    traced = tf.function(function, autograph=False)
    # Both signs of the mean, so each operand wins somewhere.
    for y_true, y_pred in [*INPUTS, (-INPUTS[0][0], INPUTS[0][1])]:
        expected = run_eagerly(original, y_true, y_pred)
        _same_value(expected, run_eagerly(function, y_true, y_pred))
        _same_value(expected, traced(y_true, y_pred))


def test_builtin_max_rewrite_keeps_the_gradient():
    source = BUILTIN.format(expr="max(m, 0.0) * 2.0")
    original = python_function(load_module(source).f)
    traced = tf.function(python_function(load_module(_rewrite(source)).f), autograph=False)
    y_true, y_pred = INPUTS[0]
    for sign in (1.0, -1.0):
        y = y_true * sign
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(y)
            before = run_eagerly(original, y, y_pred)
            after = traced(y, y_pred)
        expected = tape.gradient(before, y) if tf.is_tensor(before) else None
        actual = tape.gradient(after, y)
        if expected is None:
            np.testing.assert_array_equal(actual.numpy(), np.zeros_like(y.numpy()))
        else:
            np.testing.assert_allclose(actual.numpy(), expected.numpy(), rtol=1e-6)


# -- TFR105 ---------------------------------------------------------------------------

NUMPY_CALL = """\
import numpy as np
import tensorflow as tf


@tf.function
def f(y_true, y_pred):
    err = tf.square(y_true - y_pred)
    return {expr}
"""


ROUND_TRIPS = [
    "tf.reduce_sum(err.numpy())",
    "tf.reduce_mean((y_true - y_pred).numpy(), axis=-1)",
    "tf.maximum(err.numpy(), 0.5)",
    "tf.constant(err.numpy()) * y_pred",
    "tf.constant(err.numpy(), dtype=tf.float64) + 1.0",
    "y_pred * float(tf.reduce_mean(err))",
    "tf.zeros([int(tf.shape(err)[0])], dtype=y_pred.dtype) + y_pred[:, 0]",
    "tf.gather(y_pred, int(tf.argmax(tf.reduce_sum(err, axis=1))))",
]


def test_numpy_math_on_a_host_round_trip_is_rewritten_by_both_rules():
    """`np.mean(err.numpy() * y_pred)`: TFR105 keeps the cut on `err`, TFR104
    turns the mean into a TensorFlow op (through which, unlike NumPy's, the
    loss's gradient flows: what makes the loss trainable at all)."""
    source = NUMPY_CALL.format(expr="np.mean(err.numpy() * y_pred)")
    rewritten = fix_source(source, select=["TFR104", "TFR105"])
    assert "return tf.reduce_mean(tf.stop_gradient(err) * y_pred)" in rewritten
    assert_rewrite_equivalent(source, rewritten, "f", INPUTS, autograph=False)


def _gradients(function, y_true, y_pred):
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([y_true, y_pred])
        value = function(y_true, y_pred)
    if not tf.is_tensor(value):
        return [None, None]  # a NumPy result: a constant to the tape
    gradients = [tape.gradient(value, v) for v in (y_true, y_pred)]
    return [None if g is None else tf.convert_to_tensor(g) for g in gradients]


@pytest.mark.parametrize("expr", ROUND_TRIPS)
def test_host_round_trip_in_a_loss_keeps_values_and_gradients(expr):
    """In a loss (by its signature) the host round trip cut the gradient:
    the rewrite keeps the cut with `tf.stop_gradient`, values and gradients
    equal eagerly, traced and traced without AutoGraph."""
    source = NUMPY_CALL.format(expr=expr)
    _traced_original_fails(source, INPUTS[0], (AttributeError, TypeError))
    rewritten = fix_source(source, select=["TFR104", "TFR105"])
    assert rewritten != source and check_source(rewritten, select=["TFR104", "TFR105"]) == []
    assert_rewrite_equivalent(source, rewritten, "f", INPUTS, autograph=False)
    original = python_function(load_module(source).f)
    function = python_function(load_module(rewritten).f)
    for y_true, y_pred in INPUTS:
        expected = _gradients(lambda a, b: run_eagerly(original, a, b), y_true, y_pred)
        for candidate in (function, tf.function(function, autograph=False)):
            actual = _gradients(candidate, y_true, y_pred)
            for want, got in zip(expected, actual, strict=True):
                if want is None:
                    assert got is None or not np.any(got.numpy()), expr
                else:
                    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)


PLAIN_ROUND_TRIP = """\
import tensorflow as tf


@tf.function
def f(x):
    err = tf.square(x - 1.0)
    return tf.reduce_sum(err.numpy())
"""


def test_numpy_round_trip_rewrite_lets_gradients_flow():
    """Why the fix outside a loss or a tape is unsafe: the original cut the
    gradient (a NumPy array is a constant to the tape), the rewrite does not."""
    assert fix_source(PLAIN_ROUND_TRIP, select=["TFR105"]) == PLAIN_ROUND_TRIP
    rewritten_source = fix_source(PLAIN_ROUND_TRIP, select=["TFR105"], unsafe_fixes=True)
    assert "return tf.reduce_sum(err)" in rewritten_source
    original = python_function(load_module(PLAIN_ROUND_TRIP).f)
    rewritten = python_function(load_module(rewritten_source).f)
    x = INPUTS[0][1]
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        before = run_eagerly(original, x)
        after = tf.function(rewritten, autograph=False)(x)
    np.testing.assert_allclose(after.numpy(), before.numpy(), rtol=1e-6)
    assert tape.gradient(before, x) is None
    np.testing.assert_allclose(
        tape.gradient(after, x).numpy(), (2.0 * (x - 1.0)).numpy(), rtol=1e-6
    )


TAPE_STEP = """\
import tensorflow as tf


@tf.function
def f(x, w):
    with tf.GradientTape() as tape:
        tape.watch(w)
        target = (x * w).numpy()
        loss = tf.reduce_mean(tf.square(x * w * 2.0 - target))
        tf.print("loss", float(loss))
    return tape.gradient(loss, w)
"""


def test_a_round_trip_inside_a_tape_keeps_the_gradient_cut():
    """A target computed with `.numpy()` inside the tape is a constant to it:
    `tf.stop_gradient` keeps the gradient the eager original computes."""
    assert 'tf.print("loss", loss)' in fix_source(TAPE_STEP, select=["TFR105"])
    rewritten = fix_source(TAPE_STEP, select=["TFR105"], unsafe_fixes=True)  # `x * w` assumed
    assert "target = tf.stop_gradient(x * w)" in rewritten
    assert 'tf.print("loss", loss)' in rewritten
    calls = [(INPUTS[0][0], tf.constant(0.5)), (INPUTS[0][1], tf.constant(-2.0))]
    with capture_fds():
        assert_rewrite_equivalent(TAPE_STEP, rewritten, "f", calls, autograph=False)


@pytest.mark.parametrize(
    ("expr", "error"),
    [
        ("float(tf.reduce_sum(err))", TypeError),
        ("int(tf.shape(err)[0])", TypeError),
        ("err.numpy()", AttributeError),
    ],
)
def test_host_value_reads_fail_when_traced(expr, error):
    """The findings without a fix report real failures: eager works, traced raises."""
    source = NUMPY_CALL.format(expr=expr)
    run_eagerly(python_function(load_module(source).f), *INPUTS[0])
    _traced_original_fails(source, INPUTS[0], error)


# -- the facts the refusals rest on ---------------------------------------------------


def test_refusal_facts():
    x = tf.constant([0.5, 1.5, 2.5, -0.5, -2.5])
    ints = tf.constant([1, 2, 4], tf.int32)
    # Both round half to even: `np.round` -> `tf.round` is exact.
    np.testing.assert_array_equal(np.round(x), tf.round(x).numpy())
    # Bounds in the wrong order: NumPy gives the upper, TensorFlow the lower.
    assert np.clip(x, 2.0, 1.0).tolist() == [1.0] * 5
    assert tf.clip_by_value(x, 2.0, 1.0).numpy().tolist() == [2.0] * 5
    # Integer sums accumulate in int64 in NumPy, in int32 in TensorFlow.
    assert np.sum(ints).dtype == np.int64 and tf.reduce_sum(ints).dtype == tf.int32
    # Integer means are float64 in NumPy: hence the cast.
    assert np.mean(ints).dtype == np.float64
    # NumPy 2 keeps float32 with a Python float; TensorFlow converts it too.
    assert np.maximum(x, 0.5).dtype == np.float32 and tf.maximum(x, 0.5).dtype == tf.float32
    # An integer tensor with a Python float: NumPy promotes, TensorFlow refuses.
    assert np.maximum(ints, 0.5).dtype == np.float64
    with pytest.raises((TypeError, ValueError)):
        tf.maximum(ints, 0.5)
    # `a_min` without `a_max` (or the reverse) raises in NumPy: not rewritten.
    with pytest.raises(TypeError):
        np.clip(x.numpy(), -1.0)
    with pytest.raises(TypeError):
        np.clip(x.numpy(), a_max=1.0)
    # Traced, a leading Python number takes TensorFlow's default dtype and
    # clashes with the tensor; NumPy 2 gives it the tensor's dtype. Hence the
    # rewrite puts the tensor first.
    x64 = tf.constant([0.5, -1.5], tf.float64)
    assert np.maximum(0, x64.numpy()).dtype == np.float64
    spec = [tf.TensorSpec([2], tf.float64)]
    with pytest.raises((TypeError, ValueError)):
        tf.function(lambda x: tf.maximum(0, x), input_signature=spec)(x64)
    with pytest.raises((TypeError, ValueError)):
        tf.function(lambda x: tf.where(x > 0, 1.0, x), input_signature=spec)(x64)
    assert tf.function(lambda x: tf.maximum(x, 0), input_signature=spec)(x64).dtype == tf.float64
    # A NumPy float64 mean meeting a float32 tensor takes float32; a float64
    # tensor there raises: hence the cast to the dtype the result meets.
    mask = tf.constant([True, False, True])
    assert (x + np.mean(mask)).dtype == tf.float32
    with pytest.raises((TypeError, tf.errors.InvalidArgumentError)):
        x + tf.reduce_mean(tf.cast(mask, tf.float64))
    # NumPy counts booleans in int64; argmax flattens without an axis.
    assert np.sum(mask).dtype == np.int64
    grid = tf.constant([[1.0, 5.0], [7.0, 2.0]])
    assert np.argmax(grid) == 2 and tf.argmax(grid).numpy().tolist() == [1, 0]
    # An integer tensor to a negative power: NumPy raises.
    with pytest.raises(ValueError):
        np.power(ints, -1)


def test_a_list_of_tensors_fails_traced_and_is_not_rewritten():
    source = TEMPLATE.format(expr="np.mean([y_true, y_pred], axis=0)")
    _traced_original_fails(source, INPUTS[0], NotImplementedError)
    assert fix_source(source, select=["TFR104"], unsafe_fixes=True) == source
    (finding,) = check_source(source, select=["TFR104"])
    assert finding.fix is None and "NumPy stacks the list" in finding.message
    # The hazard of stacking by hand: NumPy's dtype depends on every element.
    assert np.asarray([np.float32(1.0), 2.0]).dtype == np.float64


def test_keras_loss_with_a_host_round_trip_trains_like_the_eager_original():
    """The rule's example: weights read with `.numpy()` in a compiled loss.
    Keras traces the loss, so the original fails in `fit`; the rewrite keeps
    the weights out of the gradient, as the eager original did, and trains to
    the same weights as the original run eagerly."""
    source = textwrap.dedent(
        """\
        import tensorflow as tf


        def weighted_mse(y_true, y_pred):
            weights = tf.abs(y_true).numpy()
            return tf.reduce_mean(weights * tf.square(y_true - y_pred))


        def build(run_eagerly=False):
            dense = tf.keras.layers.Dense(1, kernel_initializer="ones")
            model = tf.keras.Sequential([tf.keras.Input((3,)), dense])
            model.compile(optimizer="sgd", loss=weighted_mse, run_eagerly=run_eagerly)
            return model
        """
    )
    rewritten = fix_source(source, select=["TFR105"])
    assert "weights = tf.stop_gradient(tf.abs(y_true))" in rewritten
    x = np.linspace(-1.0, 1.0, 12, dtype=np.float32).reshape(4, 3)
    y = np.array([[0.5], [1.0], [-1.0], [0.0]], dtype=np.float32)
    original = load_module(source)
    with pytest.raises((AttributeError, NotImplementedError)):
        original.build().fit(x, y, epochs=1, verbose=0)
    eager = original.build(run_eagerly=True)
    eager.fit(x, y, batch_size=2, epochs=2, verbose=0, shuffle=False)
    traced = load_module(rewritten).build()
    traced.fit(x, y, batch_size=2, epochs=2, verbose=0, shuffle=False)
    for want, got in zip(eager.get_weights(), traced.get_weights(), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


SNAPSHOT = """\
import tensorflow as tf

step = tf.Variable(3, dtype=tf.int64)


@tf.function
def f(x):
    loss = tf.reduce_sum(x)
    return step.numpy(), loss.numpy()
"""


def test_a_returned_variable_read_stays_a_snapshot():
    """The caller keeps the value it got: later assignments to the variable
    must not change it (they would through the variable object itself)."""
    rewritten = fix_source(SNAPSHOT, select=["TFR105"], unsafe_fixes=True)
    assert "return step.read_value(), loss" in rewritten
    original = load_module(SNAPSHOT)
    module = load_module(rewritten)
    x = tf.constant([1.0, 2.5])
    expected = run_eagerly(python_function(original.f), x)
    for function in (module.f, tf.function(python_function(module.f), autograph=False)):
        got = function(x)
        module.step.assign_add(5)
        assert [np.asarray(v).item() for v in got] == [np.asarray(v).item() for v in expected]
        module.step.assign(3)


LIKELY_TENSOR = """\
import numpy as np
import tensorflow as tf


@tf.function
def f(x):
    return np.power(x, 2) + np.linalg.norm(x) + max(x, 0.5)
"""


def test_the_fix_on_a_likely_tensor_parameter_matches_when_called_with_a_tensor():
    """The unsafe fix assumes `x` is a tensor argument: called with one, the
    original fails traced and the rewrite matches it run eagerly."""
    rewritten = fix_source(LIKELY_TENSOR, select=["TFR104"], unsafe_fixes=True)
    assert "np." not in rewritten and "max(" not in rewritten
    inputs = [(tf.constant(0.75),), (tf.constant(-1.0),)]  # both sides of `max`
    with pytest.raises((NotImplementedError, TypeError, tf.errors.OperatorNotAllowedInGraphError)):
        load_module(LIKELY_TENSOR).f(*inputs[0])
    assert_rewrite_equivalent(LIKELY_TENSOR, rewritten, "f", inputs, autograph=False)
