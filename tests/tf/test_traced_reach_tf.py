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
