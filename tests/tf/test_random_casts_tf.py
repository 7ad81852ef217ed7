"""TFR102 / TFR106 under TensorFlow on a plain sample NumPy converts on the
way (`noise.astype(np.float32)`, `np.float32(noise)`): frozen when traced; the
rewrite, traced with and without AutoGraph, draws afresh on every call and
keeps the shape, dtype and distribution of the original run eagerly, for
float32 and float64 inputs. Eager converts NumPy's float32 array to a float64
tensor's dtype; a float32 tensor would not be converted, so the rewrite
casts the converted sample to the tensor's dtype where it meets one.
"""

from __future__ import annotations

import random
import textwrap
import types
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

from tfrewrite.api import check_source, fix_source

from .equivalence import load_file_module, python_function, run_eagerly

CALLS = 200
# |mean(rewrite) - mean(original)| must be below 4 standard errors of the
# difference (two-sided false alarm ~6e-5 for a correct rewrite).
MAX_STANDARD_ERRORS = 4.0
# The spreads over CALLS calls agree within 35% (relative sampling error of
# each ~1/sqrt(2 * CALLS) = 5%: 35% is > 6 of those).
SPREAD_RATIO = 1.35

# TFR106 (Python `random`) shares the rewrite of conversions.
SELECT = ["TFR102", "TFR106"]

X = np.linspace(-1.0, 1.0, 3, dtype=np.float32)
INPUTS = {"float32": tf.constant(X), "float64": tf.constant(X, tf.float64)}

NOISY = """
import numpy as np
import tensorflow as tf


@tf.function
def noisy(x: tf.Tensor):
    noise = np.random.normal(size=(3,))
    b = noise.astype(np.float32)
    return x + b
"""


@dataclass(frozen=True)
class Case:
    source: str
    function: str
    after: str  # a line the rewrite contains

    def __str__(self) -> str:
        return self.function


CASES = [
    Case(NOISY, "noisy", "b = noise\n"),
    Case(
        """
        import numpy as np
        import tensorflow as tf


        @tf.function
        def jitter(y_true, y_pred):
            noise = np.random.uniform(-1.0, 1.0, size=(3,))
            scaled = noise.astype("float32") * 0.1
            return tf.reduce_mean(tf.square(y_true - (y_pred + scaled)))
        """,
        "jitter",
        "scaled = noise * 0.1",
    ),
    Case(
        """
        import numpy as np
        import tensorflow as tf


        @tf.function
        def shifted(x: tf.Tensor):
            noise = np.random.rand(3)
            return x - np.float32(noise)
        """,
        "shifted",
        "return x - noise",
    ),
    Case(
        """
        import random

        import numpy as np
        import tensorflow as tf


        @tf.function
        def python_shift(x: tf.Tensor):
            r = random.gauss(0.0, 1.0)
            return x + np.float32(r)
        """,
        "python_shift",
        "return x + r",
    ),
    Case(
        """
        import numpy as np
        import tensorflow as tf


        @tf.function
        def draw(x: tf.Tensor):
            noise = np.random.normal(size=(3,))
            return noise.astype(np.float32)
        """,
        "draw",
        "return tf.cast(noise, tf.float32)",
    ),
]


def load_module(source: str, directory: Path) -> types.ModuleType:
    return load_file_module(source, directory, "random_cast")


def rewrite(case: Case) -> str:
    source = textwrap.dedent(case.source)
    fixed = fix_source(source, select=SELECT)
    assert fixed != source, f"{SELECT} did not rewrite {case.function} safely"
    assert case.after in fixed, fixed
    assert check_source(fixed, select=SELECT) == []
    return fixed


def _functions(case: Case, directory: Path):
    """(original, rewritten): the plain Python functions, undecorated."""
    original = python_function(getattr(load_module(case.source, directory), case.function))
    rewritten = python_function(getattr(load_module(rewrite(case), directory), case.function))
    return original, rewritten


def _args(case: Case, dtype: str) -> tuple[tf.Tensor, ...]:
    x = INPUTS[dtype]
    return (x, x * 0.5) if case.function == "jitter" else (x,)


@pytest.fixture(autouse=True)
def _seeds():
    np.random.seed(1234)
    random.seed(1234)
    tf.random.set_seed(1234)


@pytest.mark.parametrize("dtype", sorted(INPUTS))
@pytest.mark.parametrize("case", CASES, ids=str)
def test_original_traced_is_frozen(case: Case, dtype: str, tmp_path: Path) -> None:
    original, _ = _functions(case, tmp_path)
    frozen = tf.function(original)
    args = _args(case, dtype)
    np.testing.assert_array_equal(frozen(*args).numpy(), frozen(*args).numpy())


@pytest.mark.parametrize("autograph", [True, False], ids=["autograph", "no-autograph"])
@pytest.mark.parametrize("dtype", sorted(INPUTS))
@pytest.mark.parametrize("case", CASES, ids=str)
def test_rewrite_traced_is_fresh_and_keeps_shape_and_dtype(
    case: Case, dtype: str, autograph: bool, tmp_path: Path
) -> None:
    original, rewritten = _functions(case, tmp_path)
    args = _args(case, dtype)
    expected = np.asarray(run_eagerly(original, *args))
    traced = tf.function(rewritten, autograph=autograph)
    first = traced(*args).numpy()
    assert (first.shape, first.dtype) == (expected.shape, expected.dtype)
    later = [traced(*args).numpy() for _ in range(10)]
    assert any(not np.array_equal(first, value) for value in later), "the rewrite reused its sample"


def _per_call_means(fn, args) -> np.ndarray:
    return np.array([np.mean(np.asarray(fn(*args))) for _ in range(CALLS)], dtype=np.float64)


@pytest.mark.parametrize("dtype", sorted(INPUTS))
@pytest.mark.parametrize("case", CASES, ids=str)
def test_distribution_kept(case: Case, dtype: str, tmp_path: Path) -> None:
    original, rewritten = _functions(case, tmp_path)
    args = _args(case, dtype)
    eager = _per_call_means(lambda *a: run_eagerly(original, *a), args)
    traced = _per_call_means(tf.function(rewritten, autograph=False), args)
    standard_error = np.sqrt(eager.var(ddof=1) / eager.size + traced.var(ddof=1) / traced.size)
    difference = abs(eager.mean() - traced.mean())
    assert difference < MAX_STANDARD_ERRORS * standard_error, (
        f"means differ by {difference / standard_error:.1f} standard errors: "
        f"{eager.mean():.5f} (original, eager) vs {traced.mean():.5f} (rewrite, traced)"
    )
    ratio = traced.std(ddof=1) / eager.std(ddof=1)
    assert 1 / SPREAD_RATIO < ratio < SPREAD_RATIO, f"spread ratio {ratio:.3f}"


def test_a_cast_to_the_conversions_own_dtype_would_fail_with_float64_inputs(
    tmp_path: Path,
) -> None:
    """Why the converted sample meeting `x` is not cast to float32: NumPy's
    float32 array adapts to a float64 `x` eagerly, a float32 tensor does not."""
    x = INPUTS["float64"]
    own_dtype = textwrap.dedent(NOISY).replace(
        "noise = np.random.normal(size=(3,))\n    b = noise.astype(np.float32)",
        "noise = tf.random.normal([3], dtype=x.dtype)\n    b = tf.cast(noise, tf.float32)",
    )
    assert "tf.cast(noise, tf.float32)" in own_dtype
    function = python_function(load_module(own_dtype, tmp_path).noisy)
    with pytest.raises((tf.errors.InvalidArgumentError, TypeError)):
        tf.function(function, autograph=False)(x)
    original = python_function(load_module(NOISY, tmp_path).noisy)
    assert run_eagerly(original, x).dtype == tf.float64
