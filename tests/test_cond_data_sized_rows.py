"""TFR101 on a test of how many rows a data-sized value has (`tf.where(mask)`,
`tf.boolean_mask`): those rows are never known while tracing, so a branch
that reads them cannot fail to trace as a `tf.cond` branch. The rewrite is
made; a value whose rows can be known (a parameter) keeps the refusal."""

from __future__ import annotations

from tfrewrite.api import check_source, fix_source

SELECT = """
import tensorflow as tf


@tf.function
def selected(scores, threshold):
    probs = tf.nn.softmax(scores, axis=-1)
    hits = {hits}
    if tf.shape(hits)[0] == 0:
        return tf.zeros([0], tf.float32)
    return tf.gather_nd(probs, hits)


selected(tf.ones((2, 3)), tf.constant(0.5))
"""

SELECT_AFTER = """
import tensorflow as tf


@tf.function
def selected(scores, threshold):
    probs = tf.nn.softmax(scores, axis=-1)
    hits = tf.where(probs >= threshold)
    return tf.cond(
        tf.shape(hits)[0] == 0,
        lambda: tf.zeros([0], tf.float32),
        lambda: tf.gather_nd(probs, hits),
    )


selected(tf.ones((2, 3)), tf.constant(0.5))
"""


def test_rows_of_tf_where_are_never_static_so_the_branch_is_rewritten() -> None:
    source = SELECT.format(hits="tf.where(probs >= threshold)")
    assert fix_source(source, select=["TFR101"]) == SELECT_AFTER


def test_rows_of_a_value_that_may_be_static_keep_the_refusal() -> None:
    source = SELECT.format(hits="tf.reshape(scores, [-1, 2])")
    (finding,) = check_source(source, select=["TFR101"])
    assert finding.fix is None
    assert "needs the batch size (dimension 0) of `hits`" in finding.message
