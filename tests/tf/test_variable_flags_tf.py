"""The `tf.cond` TFR101 writes for `if self.fitting:` on a `tf.Variable`
flag: the original run eagerly and the rewrite traced with
`autograph=False` agree whichever way the loop sets the flag."""

from __future__ import annotations

import importlib.util
import textwrap
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf
from tests.variable_flags import VARIABLE_FLAG

from tfrewrite.api import fix_source

pytestmark = pytest.mark.tensorflow


def _run(folder: Path, source: str, eager: bool, autograph: bool = True) -> list[float]:
    """Run `source` from a file of its own: AutoGraph reads a function's
    source to convert it."""
    if not autograph:
        source = source.replace("tf.function(func=", "tf.function(autograph=False, func=")
    name = f"runner_{'eager' if eager else 'traced'}_{autograph}_{abs(hash(source))}"
    path = folder / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    batches = [tf.constant([[1.0, 0.5, -1.0]]), tf.constant([[2.0, 0.0, 1.0]])]
    tf.config.run_functions_eagerly(eager)
    try:
        return [float(v) for v in module.run(batches)]
    finally:
        tf.config.run_functions_eagerly(False)


def test_the_rewrite_agrees_with_the_original_run_eagerly(tmp_path: Path) -> None:
    original = textwrap.dedent(VARIABLE_FLAG)
    fixed = fix_source(original, select=["TFR101"])
    assert "tf.cond" in fixed
    expected = _run(tmp_path, original, eager=True)
    assert expected[0] != expected[1]  # both branches reached
    rewritten = _run(tmp_path, fixed, eager=False, autograph=False)
    np.testing.assert_allclose(rewritten, expected, rtol=1e-6)
    np.testing.assert_allclose(_run(tmp_path, original, eager=False), expected, rtol=1e-6)
    with pytest.raises(TypeError):  # the original needs AutoGraph
        _run(tmp_path, original, eager=False, autograph=False)
