"""What TFR202 reports on a traced step calling a plain Python object's
method for its effect (`tests/test_plain_effect_calls.py`): eagerly the
schedule advances on every call; under `tf.function` it advances once,
while tracing, and the learning rate the step assigns stays the first."""

from __future__ import annotations

import pytest
from tests.test_plain_effect_calls import SCHEDULED

from .equivalence import load_module

pytestmark = pytest.mark.tensorflow


def _rates(module, traced: bool) -> tuple[int, list[float]]:
    import tensorflow as tf

    agent = module.Agent()
    eager = type(agent).learn.python_function
    learn = agent.learn if traced else (lambda x: eager(agent, x))
    x = tf.ones((2, 3))
    # Variables made before the first call: the step is traced once.
    agent.model(x)
    agent.optimizer.build(agent.model.trainable_variables)
    rates = []
    for _ in range(4):
        learn(x)
        rates.append(round(float(agent.optimizer.learning_rate.numpy()), 6))
    return agent.schedule.count, rates


def test_the_schedule_advances_once_when_traced() -> None:
    module = load_module(SCHEDULED.replace("{called}", "step"))
    assert _rates(module, traced=False) == (4, [0.1, 0.05, 0.033333, 0.025])
    assert _rates(module, traced=True) == (1, [0.1, 0.1, 0.1, 0.1])
