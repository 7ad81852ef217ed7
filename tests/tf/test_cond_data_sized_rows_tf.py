"""The `tf.cond` made from a test of `tf.where`'s rows, under TensorFlow:
the rewrite traced without AutoGraph equals the original eager, when the
selection is empty and when it is not."""

from __future__ import annotations

import pytest
from tests.test_cond_data_sized_rows import PICKED, SELECT

from tfrewrite.api import fix_source

from .equivalence import assert_rewrite_equivalent, load_module, python_function, run_eagerly

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


def test_rows_picked_by_where_and_printed_in_a_branch() -> None:
    """The rewrite of a print guarded by how many rows `tf.gather` picked
    through `tf.where`, traced without AutoGraph: the same value and the
    same printed lines as the original eager, for none and for two rows."""
    import tensorflow as tf

    from .fdcapture import capture_fds

    source = PICKED.format(
        changed="tf.where(tf.not_equal(before, after))[:, 0]",
        picked="tf.gather(ids, changed)",
        branch='tf.print("picked:", picked)',
    )
    rewritten = fix_source(source, select=["TFR101"])
    assert "tf.cond(" in rewritten
    ids = tf.constant([7, 8, 9, 10])
    same = tf.constant([5, 5, 5, 5])
    inputs = [(ids, same, same), (ids, same, tf.constant([5, 6, 5, 6]))]
    assert_rewrite_equivalent(source, rewritten, "first_changed", inputs)
    original = python_function(load_module(source).first_changed)
    traced = tf.function(python_function(load_module(rewritten).first_changed), autograph=False)
    for args in inputs:
        with capture_fds() as eager_out:
            run_eagerly(original, *args)
        with capture_fds() as traced_out:
            traced(*args)
        assert traced_out.stderr == eager_out.stderr
    assert eager_out.stderr.strip() == "picked: [8 10]"
