"""The loops TFR108 reports as needing AutoGraph: with AutoGraph the traced
functions compute what they compute eagerly; with `autograph=False` they
raise. The `tf.range` loop it leaves alone needs AutoGraph as well: it is
AutoGraph's documented idiom for a graph loop, left alone by design."""

from __future__ import annotations

from pathlib import Path

import pytest
import tensorflow as tf
from tests.autograph_loops import COLLAPSE
from tests.tf.equivalence import assert_same, load_file_module, run_eagerly

pytestmark = pytest.mark.tensorflow


def test_reported_loops_need_autograph_and_the_tf_range_loop_does_not(tmp_path: Path) -> None:
    converted = load_file_module(COLLAPSE, tmp_path)
    plain = load_file_module(
        COLLAPSE.replace("@tf.function", "@tf.function(autograph=False)"), tmp_path
    )
    logits = tf.constant([[0.1, 0.9], [0.8, 0.2], [0.3, 0.7]])
    x = tf.constant([[1.0, 2.0], [3.0, 5.0]])
    for name, argument in (("collapse", logits), ("row_means", x), ("doubled", x)):
        expected = run_eagerly(getattr(converted, name), argument)
        assert_same(expected, getattr(converted, name)(argument), what=name)
        with pytest.raises(TypeError):
            getattr(plain, name)(argument)
