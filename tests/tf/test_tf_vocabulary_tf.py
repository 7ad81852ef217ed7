"""The table of TensorFlow functions that return a scalar, measured again on
the installed TensorFlow, and the TFR101 rewrites it allows run under
TensorFlow.

The committed `src/tfrewrite/facts/tf_scalar_results.py` must be what
`scripts/tf_vocabulary.py` gives now (when TensorFlow and Keras are the
versions it was generated from). The `if` on `tf.linalg.global_norm(grads)`
that the table makes a scalar condition is rewritten as `tf.cond`: the
original run eagerly must equal the rewrite traced with
`tf.function(autograph=False)`, on gradients whose norm is below and above
the threshold, and the original itself fails under `autograph=False`.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path
from types import ModuleType

import keras
import pytest
import tensorflow as tf

from tfrewrite.api import fix_source
from tfrewrite.facts import (
    keras_list_properties,
    tf_compat_aliases,
    tf_dtype_positions,
    tf_scalar_results,
    tf_shape_arguments,
)

from .equivalence import assert_rewrite_equivalent, load_module, load_path, python_function

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "tf_vocabulary.py"


def vocabulary_script(name: str = "tf_vocabulary") -> ModuleType:
    """A generator script of `scripts/` (`tf_vocabulary` by default), loaded
    as its command line runs it: beside its sibling `generated_tables`."""
    if str(SCRIPT.parent) not in sys.path:
        sys.path.insert(0, str(SCRIPT.parent))
    return load_path(SCRIPT.with_name(f"{name}.py"), name)


def test_the_committed_table_is_what_the_installed_tensorflow_gives() -> None:
    recorded = (tf_scalar_results.TENSORFLOW_VERSION, tf_scalar_results.KERAS_VERSION)
    installed = (tf.__version__, keras.__version__)
    if installed != recorded:
        pytest.skip(
            f"the table was generated from TensorFlow {recorded[0]} (Keras {recorded[1]}); "
            f"TensorFlow {installed[0]} (Keras {installed[1]}) is installed"
        )
    script = vocabulary_script()
    table = script.scalar_results()
    assert table == tf_scalar_results.SCALAR_RESULTS, "regenerate: python scripts/tf_vocabulary.py"
    assert script.render(*installed, table) == Path(tf_scalar_results.__file__).read_text()


def assert_generated_from_installed(module: ModuleType, measure: str, render: str) -> dict:
    """The committed table `module` (with its `TENSORFLOW_VERSION`) is what
    the script's `measure()` gives on the installed TensorFlow, rendered by
    its `render(version, table)`; returns the table."""
    recorded = module.TENSORFLOW_VERSION
    if tf.__version__ != recorded:
        pytest.skip(f"generated from TensorFlow {recorded}; {tf.__version__} is installed")
    script = vocabulary_script()
    table = getattr(script, measure)()
    rendered = getattr(script, render)(tf.__version__, table)
    assert rendered == Path(module.__file__).read_text(), "regenerate: " + script.COMMAND
    return table


def test_the_committed_dtype_positions_are_the_installed_tensorflows() -> None:
    assert_generated_from_installed(tf_dtype_positions, "dtype_positions", "render_dtype_positions")


def test_the_committed_shape_arguments_are_the_installed_tensorflows() -> None:
    table = assert_generated_from_installed(
        tf_shape_arguments, "shape_arguments", "render_shape_arguments"
    )
    # A shape checked, not built, takes a partial one: not in the table.
    assert "tensorflow.ensure_shape" not in table
    assert tf.ensure_shape(tf.ones([2, 3]), [None, 3]).shape == (2, 3)


def test_the_committed_compat_aliases_are_the_installed_tensorflows() -> None:
    """Each `tf.compat.v1` name the table lists is the TensorFlow 2 object
    itself; TensorFlow 1's own versions are not listed."""
    recorded = tf_compat_aliases.TENSORFLOW_VERSION
    if tf.__version__ != recorded:
        pytest.skip(f"generated from TensorFlow {recorded}; {tf.__version__} is installed")
    script = vocabulary_script("tf_compat_aliases")
    aliases = script.compat_aliases()
    assert script.render(tf.__version__, aliases) == Path(tf_compat_aliases.__file__).read_text()
    assert tf.compat.v1.reshape is tf.reshape and "reshape" in aliases
    assert tf.compat.v1.reduce_sum is not tf.reduce_sum and "reduce_sum" not in aliases


def test_the_committed_keras_list_properties_are_the_installed_keras() -> None:
    """Each property listed is a Python list on a built model."""
    recorded = keras_list_properties.KERAS_VERSION
    if keras.__version__ != recorded:
        pytest.skip(f"generated from Keras {recorded}; {keras.__version__} is installed")
    script = vocabulary_script("keras_list_properties")
    names = script.list_properties()
    variables = script.variable_list_properties()
    assert (
        script.render(keras.__version__, names, variables)
        == Path(keras_list_properties.__file__).read_text()
    )
    assert {"losses", "layers", "trainable_variables"} <= set(names)
    assert {"trainable_variables", "weights"} <= set(variables) <= set(names)
    assert "losses" not in variables and "layers" not in variables


def test_a_cond_whose_branches_take_a_positional_dtype_runs_as_the_if_did() -> None:
    """Both branches int32 (`tf.zeros([3], tf.int32)`): the rewrite traced
    without AutoGraph equals the original eager, on sums of both signs."""
    from tests.test_dtype_positions import PICK

    source = PICK.format(dtype="tf.int32")
    rewritten = fix_source(source, select=["TFR101"])
    assert "tf.cond(" in rewritten
    inputs = [(tf.constant([1.0, 2.0, 3.0]),), (tf.constant([-1.0, -2.0, 0.5]),)]
    call = "pick(tf.ones(3))\n"  # the module's own call, which traces at import
    assert_rewrite_equivalent(source.replace(call, ""), rewritten.replace(call, ""), "pick", inputs)


def rewrite(source: str) -> str:
    return fix_source(source, select=["TFR101"])


def gradients(norm: float) -> list[tf.Tensor]:
    """Two gradients, a matrix and a vector, whose global norm is `norm`."""
    matrix, vector = tf.fill([2, 3], 1.0), tf.fill([4], 1.0)
    scale = norm / tf.linalg.global_norm([matrix, vector])
    return [matrix * scale, vector * scale]


# Global norms on both sides of the threshold 5.0, and on it.
NORMS = [0.5, 4.9, 5.0, 5.1, 50.0]

CLIP_IN_PLACE = textwrap.dedent(
    """
    import tensorflow as tf

    @tf.function
    def clip(grads):
        if tf.linalg.global_norm(grads) > 5.0:
            grads, _ = tf.clip_by_global_norm(grads, 5.0)
        return grads
    """
)

SCALE_BY_NORM = textwrap.dedent(
    """
    import tensorflow as tf

    @tf.function
    def clip(grads):
        norm = tf.linalg.global_norm(grads)
        if norm > 5.0:
            return 5.0 / norm
        return tf.constant(1.0)
    """
)


@pytest.mark.parametrize("source", [CLIP_IN_PLACE, SCALE_BY_NORM], ids=["in_place", "scale"])
def test_a_global_norm_condition_runs_traced_as_it_ran_eagerly(source: str) -> None:
    rewritten = rewrite(source)
    assert "tf.cond(" in rewritten and "if " not in rewritten, rewritten
    assert_rewrite_equivalent(source, rewritten, "clip", [(gradients(n),) for n in NORMS])


def test_the_original_global_norm_condition_needs_autograph() -> None:
    original = python_function(load_module(CLIP_IN_PLACE).clip)
    with pytest.raises(TypeError):  # OperatorNotAllowedInGraphError: a symbolic bool
        tf.function(original, autograph=False)(gradients(50.0))


def test_a_count_with_an_axis_is_no_scalar_condition() -> None:
    """`tf.math.count_nonzero(x, axis=1)` is rank 1: TFR101 leaves the `if`
    for AutoGraph, and the `tf.cond` it declines to write fails."""
    source = textwrap.dedent(
        """
        import tensorflow as tf

        @tf.function
        def loss(x):
            if tf.math.count_nonzero(x, axis=1) > 1:
                return x * 2.0
            return x
        """
    )
    assert rewrite(source) == source
    x = tf.constant([[1.0, 2.0, 0.0], [0.0, 0.0, 3.0]])
    assert tf.math.count_nonzero(x, axis=1).shape.rank == 1

    def as_cond(x: tf.Tensor) -> tf.Tensor:
        return tf.cond(tf.math.count_nonzero(x, axis=1) > 1, lambda: x * 2.0, lambda: x)

    with pytest.raises(tf.errors.InvalidArgumentError, match="must be a scalar"):
        tf.function(as_cond, autograph=False)(x)
