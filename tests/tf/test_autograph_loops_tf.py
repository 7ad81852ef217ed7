"""The loops TFR108 reports as needing AutoGraph: with AutoGraph the traced
functions compute what they compute eagerly; with `autograph=False` they
raise. The `tf.range` loop it leaves alone needs AutoGraph as well: it is
AutoGraph's documented idiom for a graph loop, left alone by design."""

from __future__ import annotations

import importlib.util
import textwrap
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
import tensorflow as tf
from tests.autograph_loops import COLLAPSE

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


def test_reported_loops_need_autograph_and_the_tf_range_loop_does_not(tmp_path: Path) -> None:
    converted = _load(tmp_path, "loops_autograph", COLLAPSE)
    plain = _load(
        tmp_path, "loops_plain", COLLAPSE.replace("@tf.function", "@tf.function(autograph=False)")
    )
    logits = tf.constant([[0.1, 0.9], [0.8, 0.2], [0.3, 0.7]])
    x = tf.constant([[1.0, 2.0], [3.0, 5.0]])
    for name, argument in (("collapse", logits), ("row_means", x), ("doubled", x)):
        tf.config.run_functions_eagerly(True)
        try:
            expected = getattr(converted, name)(argument).numpy()
        finally:
            tf.config.run_functions_eagerly(False)
        np.testing.assert_allclose(getattr(converted, name)(argument).numpy(), expected)
        if name == "doubled":
            with pytest.raises(TypeError):
                getattr(plain, name)(argument)
            continue
        with pytest.raises(TypeError):
            getattr(plain, name)(argument)
