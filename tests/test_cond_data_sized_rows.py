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


PICKED = """
import tensorflow as tf


@tf.function
def first_changed(ids, before, after):
    changed = {changed}
    picked = {picked}
    if tf.shape(picked)[0] > 0:
        {branch}
    return tf.zeros([], ids.dtype)
"""


def _picked(changed: str, picked: str, branch: str) -> str:
    return PICKED.format(changed=changed, picked=picked, branch=branch)


def test_rows_picked_by_data_sized_indices_are_never_static() -> None:
    # `tf.gather` along axis 0 has as many rows as its indices; every row of
    # `tf.where`'s result (`[:, 0]`) has as many as the data selects.
    source = _picked(
        "tf.where(tf.not_equal(before, after))[:, 0]",
        "tf.gather(ids, changed)",
        "return picked[0]",
    )
    (finding,) = check_source(source, select=["TFR101"])
    assert finding.fix is not None
    assert "tf.cond(" in fix_source(source, select=["TFR101"])


def test_gather_along_another_axis_keeps_the_refusal() -> None:
    source = _picked(
        "tf.where(tf.not_equal(before, after))[:, 0]",
        "tf.gather(ids, changed, axis=1)",
        "return picked[0]",
    )
    (finding,) = check_source(source, select=["TFR101"])
    assert finding.fix is None
    assert "needs the batch size (dimension 0) of `picked`" in finding.message


def test_one_row_of_a_data_sized_value_may_be_static() -> None:
    source = _picked(
        "tf.where(tf.not_equal(before, after))[0]",
        "tf.gather(ids, changed)",
        "return picked[0]",
    )
    (finding,) = check_source(source, select=["TFR101"])
    assert finding.fix is None


def test_a_print_reads_no_structure_of_what_it_prints() -> None:
    # `ids` may have static rows, but printing it is valid for any shape.
    source = _picked("ids", "tf.reshape(ids, [-1])", 'tf.print("picked:", picked)')
    (finding,) = check_source(source, select=["TFR101"])
    assert finding.fix is not None
    assert fix_source(source, select=["TFR101"]) == source.replace(
        """    if tf.shape(picked)[0] > 0:
        tf.print("picked:", picked)
""",
        """    def _true_fn():
        tf.print("picked:", picked)
    tf.cond(tf.shape(picked)[0] > 0, _true_fn, lambda: None)
""",
    )
