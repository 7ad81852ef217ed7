"""TFR203: a Python number computed every iteration from the loop's counter
(`tau = 1.0 - 1.0 / (step + 1)`) changes as the counter does: each call
with a new value traces a new graph."""

from __future__ import annotations

import textwrap

from tfrewrite.api import check_source

SOFT_UPDATE = """
import tensorflow as tf


@tf.function
def soft_update(targets, sources, tau):
    for t, s in zip(targets, sources):
        t.assign(tau * t + (1 - tau) * s)


def run(target, source, steps):
    for step in range(steps):
        {binding}
        soft_update(target.trainable_variables, source.trainable_variables, tau)
"""


def _lines(binding: str) -> list[int]:
    source = textwrap.dedent(SOFT_UPDATE).replace("{binding}", binding)
    return [f.start.line for f in check_source(source, select=["TFR203"])]


def test_a_number_computed_from_the_counter_retraces() -> None:
    assert _lines("tau = 1.0 - 1.0 / (step + 1)") == [14]


def test_through_another_computed_number() -> None:
    assert _lines("warm = step * 0.1; tau = 1.0 - warm") == [14]


def test_a_number_that_does_not_change_with_the_counter_does_not() -> None:
    assert _lines("tau = 0.995") == []


AGENT = """
import tensorflow as tf


class Agent:
    def __init__(self):
        self.w = tf.Variable(1.0)

    @tf.function
    def act(self, x, step):
        return x * self.w + step


class Trainer:
    def __init__(self):
        self.w = tf.Variable(1.0)
        self.agent = Agent()

    @tf.function
    def update(self, x, epoch):
        return x * self.w * epoch

    def run(self, x):
        for epoch in range(5):
            self.update(x, {argument})
            self.agent.act(x, {argument})


agent = Agent()
for i in range(10):
    agent.act(tf.ones(2), {counter})
"""


def test_a_traced_method_called_with_the_loop_counter_retraces() -> None:
    """On `self`, on an object the class holds, on an object the module
    builds once: each is a `tf.function` method keyed on the counter."""
    source = AGENT.format(argument="epoch", counter="i")
    findings = check_source(source, select=["TFR203"])
    assert [f.message.split(" ")[0] for f in findings] == [
        "`self.update`",
        "`self.agent.act`",
        "`agent.act`",
    ]


def test_a_traced_method_called_with_a_tensor_counter_does_not_retrace() -> None:
    source = AGENT.format(argument="tf.constant(epoch)", counter="tf.constant(i)")
    assert check_source(source, select=["TFR203"]) == []


DECAYED = """
import tensorflow as tf

PARAMS = {"lr": 0.1, "max_steps": 100}


class Agent:
    @tf.function
    def learn(self, lr, batch):
        return batch * lr


def train(batches):
    policy = Agent()
    lr, = (PARAMS["lr"],)
    lr_now = lr
    global_step = 0
    for episode in range(10):
        for batch in batches:
            global_step += 1
            policy.learn({argument}, batch)
        frac = 1.0 - (global_step - 1.0) / PARAMS["max_steps"]
        lr_now = lr * frac
"""


def test_a_rate_decayed_from_the_counter_and_configuration_retraces() -> None:
    """`frac` from the step counter and a configured maximum, the rate from
    a configured start: both Python numbers, new at every episode; the
    method is of an object the function builds."""
    found = check_source(DECAYED.replace("{argument}", "lr_now"), select=["TFR203"])
    assert [f.start.line for f in found] == [21]
    assert "the Python number `lr_now`" in found[0].message
    constant = DECAYED.replace("{argument}", "tf.constant(lr_now)")
    assert check_source(constant, select=["TFR203"]) == []
