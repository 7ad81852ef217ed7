"""TFR107 under TensorFlow: an op given a tensor's static shape fails once the
trace does not know a dimension; the rewrite with the dynamic shape computes
the same values eagerly, runs traced (without AutoGraph) with an unknown batch
dimension, and keeps the static shape where the trace knows it."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

from tfrewrite.api import check_source, fix_source

from .equivalence import assert_rewrite_equivalent, load_module, python_function, run_eagerly

pytestmark = pytest.mark.tensorflow

TEMPLATE = """\
import tensorflow as tf


@tf.function
def f(x):
    h = tf.nn.relu(x)
    return {expr}
"""

DETERMINISTIC = [
    "tf.zeros(h.shape) + h",
    "tf.concat([h, tf.ones([h.shape[0], 2])], axis=1)",
    "tf.reshape(h, [h.shape[0], -1, 1])",
    "tf.fill((h.shape[0], h.shape[-1]), 7.0) * h",
    "tf.broadcast_to(2.0, h.shape) * h",
    # `get_shape()` is the same static shape as `.shape`.
    "tf.zeros(h.get_shape()) + h",
    "tf.concat([h, tf.ones([h.get_shape()[0], 2])], axis=1)",
    # Shape arguments the measured table adds (`scripts/tf_vocabulary.py`).
    "tf.nn.conv2d_transpose(h[:, :, None, None], tf.ones([1, 1, 1, 1]), [h.shape[0], 3, 1, 1], 1)"
    "[:, :, 0, 0]",
    "tf.slice(h, [0, 1], [h.shape[0], 2])",
    "tf.scatter_nd([[0]], [1.0], [h.shape[0]])[:, None] + h",
    # `tf.compat.v1.reshape` is `tf.reshape` itself (`scripts/tf_compat_aliases.py`).
    "tf.compat.v1.reshape(h, [h.shape[0], -1, 1])",
]
UNKNOWN_BATCH = [tf.TensorSpec([None, 3], tf.float32)]
INPUTS = [
    (tf.constant(np.arange(-3.0, 3.0, dtype=np.float32).reshape(2, 3)),),
    (tf.constant(np.linspace(-1.0, 1.0, 12, dtype=np.float32).reshape(4, 3)),),
]


def assert_fixed_for_an_unknown_batch(source: str, rewritten: str, inputs: list) -> None:
    """`f` of `source` and of `rewritten` agree (eagerly, and the rewrite
    traced without AutoGraph); traced with an unknown batch dimension the
    original raises and the rewrite computes what it computes eagerly."""
    assert_rewrite_equivalent(source, rewritten, "f", inputs, autograph=False)
    original = tf.function(python_function(load_module(source).f), input_signature=UNKNOWN_BATCH)
    with pytest.raises((ValueError, TypeError)):
        original(*inputs[0])
    fixed = python_function(load_module(rewritten).f)
    traced = tf.function(fixed, input_signature=UNKNOWN_BATCH, autograph=False)
    for (x,) in inputs:
        np.testing.assert_allclose(traced(x).numpy(), run_eagerly(fixed, x).numpy())


@pytest.mark.parametrize("expr", DETERMINISTIC)
def test_the_dynamic_shape_matches_and_survives_an_unknown_batch(expr):
    source = TEMPLATE.format(expr=expr)
    rewritten = fix_source(source, select=["TFR107"])
    assert "tf.shape(h)" in rewritten
    assert_fixed_for_an_unknown_batch(source, rewritten, INPUTS)
    fixed = python_function(load_module(rewritten).f)
    # Where the trace knows the shape, the result's static shape is still known.
    known = tf.function(fixed, autograph=False).get_concrete_function(tf.TensorSpec([4, 3]))
    assert known.structured_outputs.shape.is_fully_defined()


def test_a_random_sample_of_the_dynamic_shape_has_the_same_shape_and_is_fresh():
    source = TEMPLATE.format(expr="h + tf.random.normal(h.shape)")
    rewritten = fix_source(source, select=["TFR107"])
    fixed = python_function(load_module(rewritten).f)
    traced = tf.function(fixed, input_signature=UNKNOWN_BATCH, autograph=False)
    x = INPUTS[1][0]
    first, second = traced(x), traced(x)
    assert first.shape == run_eagerly(python_function(load_module(source).f), x).shape
    assert not np.allclose(first.numpy(), second.numpy())


@pytest.mark.parametrize(
    "expr",
    [
        "h + tf.constant(np.tile([1.0, 0.0, 0.0], [h.shape[0], 1]), tf.float32)",
        "h + tf.constant(np.zeros((h.shape[0], 3)), tf.float32)",
    ],
)
def test_a_numpy_array_of_the_static_batch_is_reported_and_fails_unknown(expr):
    """NumPy builds from Python ints: the array of a static batch runs
    eagerly and traced with a known batch, and raises `TypeError` once the
    batch is unknown. TFR107 reports it without a fix (no tensor can stand
    in NumPy's shape either)."""
    source = "import numpy as np\n" + TEMPLATE.format(expr=expr)
    [finding] = [f for f in check_source(source, select=["TFR107"])]
    assert finding.fix is None and "`np." in finding.message
    f = python_function(load_module(source).f)
    (x,) = INPUTS[0]
    np.testing.assert_allclose(tf.function(f)(x).numpy(), run_eagerly(f, x).numpy())
    with pytest.raises(TypeError):
        tf.function(f, input_signature=UNKNOWN_BATCH)(x)


FLATTEN_UNKNOWN = """\
import tensorflow as tf


@tf.function
def f(layer, x):
    h = layer(x)
    [n, a] = h.shape
    return tf.reshape(h, [n, a, 1])
"""


def test_the_tensor_a_shape_op_takes_is_likely_one_and_its_shape_rewritten():
    """`h` comes from a callable tfrewrite cannot see, but `tf.reshape`
    takes it as its tensor: the unsafe fix reads `tf.shape(h)`, which
    survives an unknown batch where the static `n` raises."""
    import functools

    rewritten = fix_source(FLATTEN_UNKNOWN, select=["TFR107"], unsafe_fixes=True)
    assert "tf.shape(h)[0]" in rewritten
    original = python_function(load_module(FLATTEN_UNKNOWN).f)
    fixed = python_function(load_module(rewritten).f)
    with pytest.raises((ValueError, TypeError)):
        tf.function(functools.partial(original, tf.nn.relu), input_signature=UNKNOWN_BATCH)(
            *INPUTS[0]
        )
    traced = tf.function(
        functools.partial(fixed, tf.nn.relu), input_signature=UNKNOWN_BATCH, autograph=False
    )
    for (x,) in INPUTS:
        expected = run_eagerly(functools.partial(original, tf.nn.relu), x)
        np.testing.assert_allclose(traced(x).numpy(), expected.numpy())


def test_a_weight_constraint_traces_with_its_variables_whole_shape(tmp_path) -> None:
    """What TFR107 leaves alone in a constraint: called with the weight
    variable from a step traced for an unknown batch size, it is traced
    with the variable, whose static shape is whole: no error, and the
    diagonal is zeroed as eagerly."""
    from tests.test_static_shape import WEIGHT_CONSTRAINT

    from .equivalence import load_file_module

    module = load_file_module(WEIGHT_CONSTRAINT, tmp_path, "constraint")
    kernel = tf.Variable(np.arange(16, dtype=np.float32).reshape(4, 4) + 1.0)

    @tf.function(input_signature=[tf.TensorSpec([None, 4])])
    def step(x):
        kernel.assign(module.zero_diagonal(kernel))
        return tf.matmul(x, kernel)

    out = step(tf.ones([3, 4]))
    np.testing.assert_allclose(np.diag(kernel.numpy()), np.zeros(4))
    assert out.shape == (3, 4)
