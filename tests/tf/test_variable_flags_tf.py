"""The `tf.cond` TFR101 writes for `if self.fitting:` on a `tf.Variable`
flag: the original run eagerly and the rewrite traced with
`autograph=False` agree whichever way the loop sets the flag."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import tensorflow as tf
from tests.tf.equivalence import assert_same, load_file_module, run_eagerly
from tests.variable_flags import VARIABLE_FLAG

from tfrewrite.api import fix_source

pytestmark = pytest.mark.tensorflow

BATCHES = [tf.constant([[1.0, 0.5, -1.0]]), tf.constant([[2.0, 0.0, 1.0]])]


def _without_autograph(source: str) -> str:
    return source.replace("tf.function(func=", "tf.function(autograph=False, func=")


def test_the_rewrite_agrees_with_the_original_run_eagerly(tmp_path: Path) -> None:
    original = textwrap.dedent(VARIABLE_FLAG)
    fixed = fix_source(original, select=["TFR101"])
    assert "tf.cond" in fixed
    expected = run_eagerly(load_file_module(original, tmp_path).run, BATCHES)
    assert float(expected[0]) != float(expected[1])  # both branches reached
    rewritten = load_file_module(_without_autograph(fixed), tmp_path)
    assert_same(expected, rewritten.run(BATCHES))
    assert_same(expected, load_file_module(original, tmp_path).run(BATCHES))
    with pytest.raises(TypeError):  # the original needs AutoGraph
        load_file_module(_without_autograph(original), tmp_path).run(BATCHES)
