"""TFR102 masks under TensorFlow: a compared NumPy sample converted on the way
(`.astype("float32")`, `* 1.0`, `np.float32(...)`) is frozen when traced; the
rewrite, traced with and without AutoGraph, draws a fresh mask on every call,
keeps the shape and dtype of the original run eagerly, and gives only values
the original gives (each mask has few outcomes: with 3 fair coins, 8).
"""

from __future__ import annotations

import textwrap
import types
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

from tfrewrite.api import check_source, fix_source

from .equivalence import load_file_module, python_function, run_eagerly

# Eager calls to collect the original's outcomes: with 8 equally likely masks,
# one is missed with probability 8 * (7/8)**300 < 1e-16.
OUTCOME_CALLS = 300
TRACED_CALLS = 20

Y_TRUE = np.linspace(-1.0, 1.0, 3, dtype=np.float32)
Y_PRED = np.array([0.25, -0.5, 2.0], dtype=np.float32)


@dataclass(frozen=True)
class Case:
    source: str
    function: str
    args: tuple
    unsafe: bool = False

    def __str__(self) -> str:
        dtypes = "-".join(a.dtype.name for a in self.args)
        return f"{self.function}-{dtypes}" if dtypes else self.function


MASKED_MSE = """
import numpy as np
import tensorflow as tf


@tf.function
def masked_mse(y_true, y_pred):
    mask = (np.random.rand(3) > 0.5).astype("float32")
    err = tf.reduce_mean(tf.square(y_true - y_pred) * mask)
    return err
"""

CASES = [
    # float32 labels and predictions, and float64 ones: NumPy's float32 mask
    # took their dtype in the product, so the cast is to it.
    Case(MASKED_MSE, "masked_mse", (tf.constant(Y_TRUE), tf.constant(Y_PRED))),
    Case(
        MASKED_MSE,
        "masked_mse",
        (tf.constant(Y_TRUE, tf.float64), tf.constant(Y_PRED, tf.float64)),
    ),
    Case(
        """
        import numpy as np
        import tensorflow as tf

        KEEP = 0.5


        @tf.function
        def dropped(y_true, y_pred):
            mask = (np.random.uniform(size=(3,)) < KEEP).astype(np.float32)
            return tf.square(y_true - y_pred) * mask
        """,
        "dropped",
        (tf.constant(Y_TRUE, tf.float64), tf.constant(Y_PRED, tf.float64)),
    ),
    Case(
        """
        import numpy as np
        import tensorflow as tf


        @tf.function
        def coins(x):
            return (np.random.rand(3) > 0.5) * 1.0
        """,
        "coins",
        (tf.constant(Y_PRED),),
    ),
    Case(
        """
        import numpy as np
        import tensorflow as tf


        @tf.function
        def scaled(y_true, y_pred):
            mask = (np.random.rand(3) > 0.5) * 1.0
            return tf.reduce_mean(tf.square(y_true - y_pred) * mask)
        """,
        "scaled",
        (tf.constant(Y_TRUE), tf.constant(Y_PRED)),
    ),
    Case(
        """
        import numpy as np
        import tensorflow as tf


        @tf.function
        def kept(x):
            mask = (np.random.rand(3) > 0.5).astype(np.float32)
            return mask
        """,
        "kept",
        (tf.constant(Y_PRED),),
    ),
    Case(
        """
        import numpy as np
        import tensorflow as tf


        @tf.function
        def scalar(y_pred):
            return y_pred * np.float32(np.random.rand() > 0.5)
        """,
        "scalar",
        (tf.constant(Y_PRED, tf.float64),),
    ),
    # another use reads the conversion's own dtype: unsafe, right for float32
    Case(
        """
        import numpy as np
        import tensorflow as tf


        @tf.function
        def normalised(y_true, y_pred):
            mask = (np.random.rand(3) > 0.5).astype("float32")
            return tf.reduce_sum(tf.square(y_true - y_pred) * mask) / (tf.reduce_sum(mask) + 1.0)
        """,
        "normalised",
        (tf.constant(Y_TRUE), tf.constant(Y_PRED)),
        unsafe=True,
    ),
]


def load_module(source: str, directory: Path) -> types.ModuleType:
    return load_file_module(source, directory, "random_mask")


def rewrite(case: Case) -> str:
    source = textwrap.dedent(case.source)
    fixed = fix_source(source, select=["TFR102"], unsafe_fixes=case.unsafe)
    assert fixed != source, f"TFR102 did not rewrite {case.function}"
    if not case.unsafe:
        assert fix_source(source, select=["TFR102"], unsafe_fixes=True) == fixed
    assert check_source(fixed, select=["TFR102"]) == []
    return fixed


@pytest.fixture(autouse=True)
def _seeds():
    np.random.seed(1234)
    tf.random.set_seed(1234)


def _functions(case: Case, directory: Path):
    """(original, rewritten): the plain Python functions, undecorated."""
    original = python_function(getattr(load_module(case.source, directory), case.function))
    fixed = rewrite(case)
    rewritten = python_function(getattr(load_module(fixed, directory), case.function))
    return original, rewritten


def _outcomes(values: list[np.ndarray]) -> list[np.ndarray]:
    distinct: list[np.ndarray] = []
    for value in values:
        if not any(np.allclose(value, seen, rtol=1e-6, atol=1e-7) for seen in distinct):
            distinct.append(value)
    return distinct


@pytest.mark.parametrize("case", CASES, ids=str)
def test_original_traced_is_frozen(case: Case, tmp_path: Path) -> None:
    original, _ = _functions(case, tmp_path)
    frozen = tf.function(original)
    first = frozen(*case.args).numpy()
    for _ in range(TRACED_CALLS):
        np.testing.assert_array_equal(frozen(*case.args).numpy(), first)


@pytest.mark.parametrize("autograph", [True, False], ids=["autograph", "no-autograph"])
@pytest.mark.parametrize("case", CASES, ids=str)
def test_rewrite_traced_is_fresh_and_keeps_shape_dtype_and_outcomes(
    case: Case, autograph: bool, tmp_path: Path
) -> None:
    original, rewritten = _functions(case, tmp_path)
    eager = [np.asarray(run_eagerly(original, *case.args)) for _ in range(OUTCOME_CALLS)]
    expected = _outcomes(eager)
    assert len(expected) > 1, "the original eagerly draws a fresh mask on every call"
    traced = tf.function(rewritten, autograph=autograph)
    values = [traced(*case.args).numpy() for _ in range(TRACED_CALLS)]
    assert len(_outcomes(values)) > 1, "the rewrite traced reused its mask"
    for value in values:
        assert (value.shape, value.dtype) == (eager[0].shape, eager[0].dtype)
        assert any(np.allclose(value, e, rtol=1e-6, atol=1e-7) for e in expected), (
            f"{value} is not an outcome of the original: {expected}"
        )


def test_a_cast_to_the_conversions_own_dtype_would_fail_with_float64_inputs(
    tmp_path: Path,
) -> None:
    """Why a converted mask meeting a tensor is cast to the tensor's dtype:
    NumPy's float32 array adapts to float64 labels, a float32 tensor does not."""
    args = (tf.constant(Y_TRUE, tf.float64), tf.constant(Y_PRED, tf.float64))
    own_dtype = textwrap.dedent(MASKED_MSE).replace(
        'mask = (np.random.rand(3) > 0.5).astype("float32")',
        "mask = tf.cast(tf.random.uniform([3]) > 0.5, tf.float32)",
    )
    function = python_function(load_module(own_dtype, tmp_path).masked_mse)
    with pytest.raises((tf.errors.InvalidArgumentError, TypeError)):
        tf.function(function, autograph=False)(*args)
    original = python_function(load_module(MASKED_MSE, tmp_path).masked_mse)
    assert run_eagerly(original, *args).dtype == tf.float64
