"""TFR101 on a name that is a tensor on one path
(`tests/test_tensor_on_some_paths.py`), reported without a fix: traced
without AutoGraph the original raises on the dynamic path, with AutoGraph
it gives what it gives eagerly; and a `tf.cond` on the condition raises on
the static path, where the condition is a Python bool."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from tests.test_tensor_on_some_paths import _source

from .equivalence import load_file_module

pytestmark = pytest.mark.tensorflow


def _results(source: str, autograph: bool | None, folder: Path) -> list[np.ndarray]:
    """`step` on a narrow and a wide input (both sides of the threshold):
    eagerly (`autograph` None), or traced with or without AutoGraph (from a
    file: AutoGraph reads the source)."""
    import tensorflow as tf

    function = load_file_module(source, folder).step.python_function
    if autograph is not None:
        function = tf.function(function, autograph=autograph)
    results = []
    for width in (2, 5):
        x = tf.reshape(tf.range(2 * width, dtype=tf.float32), (2, width))
        results.append(function(x).numpy())
    return results


def test_the_original_needs_autograph_when_traced(tmp_path: Path) -> None:
    with pytest.raises(Exception, match="not allowed|Using a symbolic"):
        _results(_source(), False, tmp_path)
    eager = _results(_source(), None, tmp_path)
    for got, want in zip(_results(_source(), True, tmp_path), eager, strict=True):
        np.testing.assert_allclose(got, want)


def test_a_cond_on_the_condition_breaks_the_static_path(tmp_path: Path) -> None:
    cond = _source().replace(
        "    if n > 3:\n        y = x * 2.0\n    else:\n        y = x - 1.0\n",
        "    y = tf.cond(n > 3, lambda: x * 2.0, lambda: x - 1.0)\n",
    )
    assert "tf.cond" in cond
    with pytest.raises(TypeError, match="pred must not be a Python bool"):
        _results(cond, False, tmp_path)
