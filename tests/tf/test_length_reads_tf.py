"""`len()` of a tensor, which TFR105 reports without a fix: traced with
AutoGraph it gives what it gives eagerly; with `autograph=False` it raises.
The `len()` of a tuple an `isinstance` test guards runs either way."""

from __future__ import annotations

import importlib.util
import textwrap
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
import tensorflow as tf
from tests.length_reads import LENGTHS

pytestmark = pytest.mark.tensorflow


def _load(folder: Path, name: str, source: str) -> ModuleType:
    """A module of its own file: AutoGraph reads a function's source."""
    path = folder / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_len_of_a_tensor_needs_autograph_and_a_tuple_does_not(tmp_path: Path) -> None:
    converted = _load(tmp_path, "lengths_autograph", LENGTHS)
    plain = _load(
        tmp_path, "lengths_plain", LENGTHS.replace("@tf.function", "@tf.function(autograph=False)")
    )
    tf.config.run_functions_eagerly(True)
    try:
        expected = [v.numpy() for v in converted.run()]
    finally:
        tf.config.run_functions_eagerly(False)
    for got, want in zip([v.numpy() for v in converted.run()], expected, strict=True):
        np.testing.assert_allclose(got, want)
    data = tf.ones((4, 3))
    np.testing.assert_allclose(plain.pair_sum((data, data)).numpy(), expected[1])
    with pytest.raises(TypeError):
        plain.tiled_state(data, tf.constant([[1.0, 2.0]]))
