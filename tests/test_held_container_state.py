"""TFR201 on a container an object holds and another of its methods fills
between calls (a replay memory: `self.experience[key].append(v)` in
`remember`, which the loop training it calls), read by its decorated
`train` (`len(self.experience["s"]) < self.batch_size`): the trace reads
the length once, and every later call replays that trace. Filled only
while setting up (in `build`, or by a method run once before the first
call), or by the traced method itself (TFR202's), it is no frozen state
of the trace; nor is an attribute the traced method sets afresh and then
adds to (`self.params = ...; self.params += bias`)."""

from __future__ import annotations

import textwrap

from tfrewrite.api import check_source

AGENT = textwrap.dedent(
    """
    import tensorflow as tf


    class Agent:
        def __init__(self, batch_size):
            self.batch_size = batch_size
            self.experience = {"s": [], "r": []}

        @tf.function
        def train(self):
            if len(self.experience["s"]) < self.batch_size:
                return 0
            return 1

        def {filler}(self, exp):
            for key, value in exp.items():
                self.experience[key].append(value)


    def play(agent, transitions):
        for exp in transitions:
            agent.{filler}(exp)
            agent.train()
    """
)
# The same object configured once, before its first call: no loop runs
# the method that fills the container.
CONFIGURED = AGENT.replace(
    "    for exp in transitions:\n        agent.{filler}(exp)\n        agent.train()",
    "    agent.{filler}(transitions[0])\n    for _ in transitions:\n        agent.train()",
)


def _found(source: str) -> list[tuple[int, str]]:
    return [(f.start.line, f.message) for f in check_source(source, select=["TFR201"])]


def test_a_memory_another_method_fills_is_frozen_in_the_trace() -> None:
    ((line, message),) = _found(AGENT.replace("{filler}", "remember"))
    assert line == 12
    assert message.startswith(
        "`self.experience` is Python state (its items are changed in `remember`) read in "
        "traced `Agent.train`"
    )


def test_a_memory_filled_while_setting_up_is_not() -> None:
    assert "agent.train()" in CONFIGURED and CONFIGURED != AGENT
    assert _found(AGENT.replace("{filler}", "build")) == []
    assert _found(CONFIGURED.replace("{filler}", "remember")) == []


COUNTED = textwrap.dedent(
    """
    import tensorflow as tf


    class Conv(tf.keras.layers.Layer):
        def __init__(self, filters, use_bias):
            super().__init__()
            self.filters = filters
            self.use_bias = use_bias
            self.conv = tf.keras.layers.Conv2D(filters, 3)

        def call(self, x):
            y = self.conv(x)
            self.params = 9 * int(x.shape[-1]) * self.filters
            if self.use_bias:
                self.params += self.filters
            self.flops = int(y.shape[1]) * int(y.shape[2]) * self.params
            return y
    """
)


def test_an_attribute_the_traced_method_sets_afresh_is_read_from_its_own_trace() -> None:
    """`self.params` assigned, then added to, then read, all in `call`: the
    value read is the one this trace computed (what TFR202 says of the
    writes is its own matter)."""
    assert _found(COUNTED) == []
