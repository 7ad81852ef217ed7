"""Measured: the agent's `tf.function` method of
`tests/agents_called_from_scripts.py`, called by its script with the
Python counter, traces once per counter value; called with the counter as
a tensor it traces once: what TFR203 reports in the script."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import tensorflow as tf
from tests.agents_called_from_scripts import AGENT, LOCAL_SCRIPT

from .equivalence import load_file_module, load_module

pytestmark = pytest.mark.tensorflow


def _script():
    agent = load_module(AGENT, "agent")
    sys.modules["agent"] = agent
    try:
        return agent, load_module(LOCAL_SCRIPT)
    finally:
        sys.modules.pop("agent", None)


def test_every_counter_value_traces_anew() -> None:
    agent_module, script = _script()
    trained = script.main(6)
    assert len(agent_module.TRACES) == 6
    assert float(trained.w.numpy()) == 4.0  # steps 0, 2 and 4 add 1.0


def test_the_counter_as_a_tensor_traces_once(tmp_path: Path) -> None:
    # From a file: AutoGraph converts the tensor `if` only where it reads the source.
    agent_module = load_file_module(AGENT, tmp_path)
    agent = agent_module.Agent()
    for step_count in range(6):
        agent.update(tf.constant(1.0), tf.constant(step_count))
    assert len(agent_module.TRACES) == 1
    assert float(agent.w.numpy()) == 4.0
