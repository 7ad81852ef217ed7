"""A held object's method that a traced method calls runs in its trace:
the `tf.cond` rewrite of its tensor `if` runs without AutoGraph inside the
caller's `tf.function`, step for step as the original does eagerly."""

from __future__ import annotations

import pytest
import tensorflow as tf
from test_traced_reach import CRITIC

from tfrewrite.api import fix_source

from .equivalence import load_module, python_function, run_eagerly

pytestmark = pytest.mark.tensorflow

AGENT = """

class Agent(tf.Module):
    def __init__(self):
        self.critic = Critic()

    @tf.function
    def train(self):
        self.critic.sync()
        return self.mix_and_count()

    def mix_and_count(self):
        return self.critic.mix.read_value(), self.critic.count.read_value()
"""


def test_the_held_objects_rewrite_runs_in_the_callers_trace_without_autograph() -> None:
    source = CRITIC + AGENT
    fixed = fix_source(source, select=["TFR101"])
    assert "tf.cond(self.count % 4 == 0" in fixed
    original = load_module(source).Agent()
    rewritten = load_module(fixed).Agent()
    traced = tf.function(python_function(type(rewritten).train), autograph=False)
    mixes = []
    for call in range(6):
        original.critic.mix.assign(0.0)
        rewritten.critic.mix.assign(0.0)
        mix, count = run_eagerly(python_function(type(original).train), original)
        got_mix, got_count = traced(rewritten)
        assert (float(mix), int(count)) == (float(got_mix), int(got_count)), call
        mixes.append(float(mix))
    assert mixes == [1.0, 0.0, 0.0, 0.0, 1.0, 0.0]  # both branches


def test_a_held_plain_objects_rewrite_runs_in_the_callers_trace_without_autograph() -> None:
    """`Loader.parse` runs traced (under `Dataset.map`) and uses what its
    plain `Augment` object computes: the original's `if` needs AutoGraph
    there; the rewrite runs without it, as the original does eagerly."""
    from test_traced_reach import AUGMENT, LOADER

    source = AUGMENT + LOADER
    fixed = fix_source(source, select=["TFR101"])
    assert "tf.cond(tf.reduce_sum(image) > 2.0" in fixed
    original = load_module(source).Loader()
    rewritten = load_module(fixed).Loader()
    bare = tf.function(python_function(type(original).parse), autograph=False)
    with pytest.raises(TypeError):  # OperatorNotAllowedInGraphError
        bare(original, tf.ones([3]))
    traced = tf.function(python_function(type(rewritten).parse), autograph=False)
    for image in (tf.ones([3]), tf.fill([3], 0.25)):  # both branches
        expected = run_eagerly(python_function(type(original).parse), original, image)
        assert traced(rewritten, image).numpy().tolist() == expected.numpy().tolist()


def test_a_module_level_objects_variable_in_a_condition_without_autograph() -> None:
    """`if store.count >= 3:` on the variable the module's `store` holds:
    the original needs AutoGraph traced; the rewrite, traced without it,
    returns what the original returns eagerly, call after call."""
    from test_traced_reach import WAITER

    fixed = fix_source(WAITER, select=["TFR101"])
    assert "tf.cond(store.count >= 3" in fixed
    original = load_module(WAITER)
    with pytest.raises(TypeError):  # OperatorNotAllowedInGraphError
        tf.function(python_function(original.wait), autograph=False)()
    original.store.count.assign(0)
    rewritten = load_module(fixed)
    traced = tf.function(python_function(rewritten.wait), autograph=False)
    expected = [int(run_eagerly(python_function(original.wait))) for _ in range(4)]
    assert [int(traced()) for _ in range(4)] == expected == [1, 2, 30, 40]
