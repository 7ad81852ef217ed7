"""The `tf.cond` made from a test of `tf.where`'s rows, under TensorFlow:
the rewrite traced without AutoGraph equals the original eager, when the
selection is empty and when it is not."""

from __future__ import annotations

import pytest
from tests.test_cond_data_sized_rows import SELECT

from tfrewrite.api import fix_source

from .equivalence import assert_rewrite_equivalent

pytestmark = pytest.mark.tensorflow


def test_empty_and_non_empty_selections() -> None:
    import tensorflow as tf

    source = SELECT.format(hits="tf.where(probs >= threshold)")
    rewritten = fix_source(source, select=["TFR101"])
    call = "selected(tf.ones((2, 3)), tf.constant(0.5))\n"  # traces at import
    scores = tf.constant([[0.1, 2.0, 0.3], [1.5, 0.2, 0.1]])
    inputs = [(scores, tf.constant(0.5)), (scores, tf.constant(0.99))]
    assert_rewrite_equivalent(
        source.replace(call, ""), rewritten.replace(call, ""), "selected", inputs
    )
