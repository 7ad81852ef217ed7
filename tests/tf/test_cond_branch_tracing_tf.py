"""TFR101 under TensorFlow where `tf.cond` would trace a branch the Python
`if` skips, or get a Python bool for its condition.

For each case the original runs eagerly on inputs that reach both branches
(rank 1 and rank 2; a batch of 1 and of 3; a Python number and a tensor).
Where tfrewrite rewrites, the rewrite traced (with `autograph=False` where a
`tf.cond` was introduced) must match it. Where it refuses, the `tf.cond` it
declines to write is shown to fail where the original works.
"""

from __future__ import annotations

import textwrap

import pytest
import tensorflow as tf

from tfrewrite.api import fix_source

from .equivalence import (
    assert_rewrite_equivalent,
    assert_same,
    load_module,
    python_function,
    run_eagerly,
)


def rewrite(source: str, unsafe: bool = False) -> str:
    return fix_source(source, select=["TFR101"], unsafe_fixes=unsafe)


BATCH_GUARDED_INDEX = textwrap.dedent(
    """
    import tensorflow as tf

    @tf.function
    def loss(y_true, y_pred):
        if tf.shape(y_pred)[0] > 1:
            v = y_pred[1]
        else:
            v = y_pred[0]
        return tf.reduce_mean(tf.square(v - y_true[0]))
    """
)
# What the rule wrote before it knew `tf.cond` traces both branches.
BATCH_GUARDED_INDEX_AS_COND = BATCH_GUARDED_INDEX.replace(
    """    if tf.shape(y_pred)[0] > 1:
        v = y_pred[1]
    else:
        v = y_pred[0]
""",
    "    v = tf.cond(tf.shape(y_pred)[0] > 1, lambda: y_pred[1], lambda: y_pred[0])\n",
)
BATCHES = [
    (tf.zeros([1, 2]), tf.fill([1, 2], 0.5)),
    (tf.zeros([3, 2]), tf.reshape(tf.range(6.0), [3, 2])),
]


def test_the_batch_guarded_index_is_left_alone_because_its_cond_fails_for_a_batch_of_one():
    assert "tf.cond" in BATCH_GUARDED_INDEX_AS_COND
    assert rewrite(BATCH_GUARDED_INDEX, unsafe=True) == BATCH_GUARDED_INDEX
    original = python_function(load_module(BATCH_GUARDED_INDEX).loss)
    as_cond = python_function(load_module(BATCH_GUARDED_INDEX_AS_COND).loss)
    for args in BATCHES:  # both work eagerly: eager `tf.cond` runs one branch
        assert_same(run_eagerly(original, *args), run_eagerly(as_cond, *args))
    assert_same(run_eagerly(original, *BATCHES[1]), tf.function(as_cond)(*BATCHES[1]))
    with pytest.raises(ValueError, match="out of bounds"):
        tf.function(as_cond, autograph=False)(*BATCHES[0])


RANK_GUARDED_SQUEEZE = textwrap.dedent(
    """
    import tensorflow as tf

    @tf.function
    def loss(y_true, y_pred):
        y = y_pred
        if tf.rank(y) > 1:
            y = tf.squeeze(y, axis=-1)
        return tf.reduce_mean(tf.square(y_true - y))
    """
)
RANKS = [(tf.zeros([3]), tf.fill([3], 0.5)), (tf.zeros([3]), tf.fill([3, 1], 2.0))]


def test_the_rank_guarded_squeeze_rewritten_to_the_static_rank_matches_on_both_ranks():
    rewritten = rewrite(RANK_GUARDED_SQUEEZE, unsafe=True)
    assert "if y.shape.rank > 1:" in rewritten
    assert_rewrite_equivalent(RANK_GUARDED_SQUEEZE, rewritten, "loss", RANKS, autograph=False)
    assert_rewrite_equivalent(RANK_GUARDED_SQUEEZE, rewritten, "loss", RANKS, autograph=True)


def test_the_rank_guarded_squeeze_as_a_cond_fails_to_trace_for_rank_one():
    as_cond = textwrap.dedent(
        """
        import tensorflow as tf

        def loss(y_true, y_pred):
            y = tf.cond(tf.rank(y_pred) > 1, lambda: tf.squeeze(y_pred, axis=-1), lambda: y_pred)
            return tf.reduce_mean(tf.square(y_true - y))
        """
    )
    function = load_module(as_cond).loss
    with pytest.raises(ValueError, match="squeeze"):
        tf.function(function, autograph=False)(*RANKS[0])


def test_a_size_guarded_element_wise_branch_is_a_cond_that_matches_on_both_batches():
    source = textwrap.dedent(
        """
        import tensorflow as tf

        @tf.function
        def loss(y_true, y_pred):
            if tf.shape(y_pred)[0] > 1:
                scale = tf.reduce_mean(tf.abs(y_pred)) * 2.0
            else:
                scale = tf.reduce_mean(y_pred)
            return scale
        """
    )
    rewritten = rewrite(source)
    assert "tf.cond(" in rewritten
    assert_rewrite_equivalent(source, rewritten, "loss", BATCHES, autograph=False)


SAMPLER = textwrap.dedent(
    """
    import tensorflow as tf

    PRIORITIES = tf.constant([1.0, 2.0, 4.0])

    @tf.function
    def sample(batch, priority_exp):
        if priority_exp == 0:
            weights = tf.ones_like(PRIORITIES)
        else:
            weights = PRIORITIES ** priority_exp
        return tf.gather(weights, batch)

    def train(batch):
        return sample(batch, 0.6) + sample(batch, 0.0)
    """
)
SAMPLER_AS_COND = SAMPLER.replace(
    """    if priority_exp == 0:
        weights = tf.ones_like(PRIORITIES)
    else:
        weights = PRIORITIES ** priority_exp
""",
    """    weights = tf.cond(
        priority_exp == 0, lambda: tf.ones_like(PRIORITIES), lambda: PRIORITIES ** priority_exp
    )
""",
)


def test_a_condition_on_a_python_number_stays_a_python_if_and_traces():
    assert "tf.cond" in SAMPLER_AS_COND
    assert rewrite(SAMPLER, unsafe=True) == SAMPLER
    original = load_module(SAMPLER).sample
    batch = tf.constant([0, 2])
    for exponent in (0.6, 0.0):  # both branches, traced without AutoGraph
        traced = tf.function(python_function(original), autograph=False)
        assert_same(run_eagerly(original, batch, exponent), traced(batch, exponent))
    with pytest.raises(TypeError, match="pred must not be a Python bool"):
        load_module(SAMPLER_AS_COND).sample(batch, 0.6)


def test_with_mixed_callers_neither_the_if_nor_a_cond_serves_both_without_autograph():
    """The refusal's reason: traced without AutoGraph, the `if` works for the
    Python caller and fails for the tensor one; the `tf.cond` the other way
    round."""
    source = SAMPLER.replace(
        "return sample(batch, 0.6) + sample(batch, 0.0)",
        "return sample(batch, 0.6) + sample(batch, tf.constant(0.0))",
    )
    assert rewrite(source, unsafe=True) == source
    original = python_function(load_module(source).sample)
    as_cond = python_function(load_module(SAMPLER_AS_COND).sample)
    batch = tf.constant([0, 2])
    for exponent in (0.6, 0.0):
        expected = run_eagerly(original, batch, exponent)
        assert_same(expected, tf.function(original, autograph=False)(batch, exponent))
        traced_cond = tf.function(as_cond, autograph=False)
        assert_same(expected, traced_cond(batch, tf.constant(exponent)))
        with pytest.raises(TypeError, match="pred must not be a Python bool"):
            traced_cond(batch, exponent)
    with pytest.raises(tf.errors.OperatorNotAllowedInGraphError):
        tf.function(original, autograph=False)(batch, tf.constant(0.0))
