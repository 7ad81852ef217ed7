"""What TFR201 reports on a memory another method fills
(`tests/test_held_container_state.py`): eagerly `train` starts returning 1
once the memory holds a batch; traced, the first trace read the length
once, and every later call returns what it returned then."""

from __future__ import annotations

import pytest
from tests.test_held_container_state import AGENT

from .equivalence import load_module

pytestmark = pytest.mark.tensorflow


def test_the_length_the_first_trace_read_is_kept() -> None:
    module = load_module(AGENT.replace("{filler}", "remember"))

    def run(traced: bool) -> list[int]:
        agent = module.Agent(batch_size=2)
        train = agent.train if traced else (lambda: type(agent).train.python_function(agent))
        results = []
        for step in range(4):
            agent.remember({"s": step, "r": 0.0})
            results.append(int(train()))
        return results

    assert run(traced=False) == [0, 1, 1, 1]
    assert run(traced=True) == [0, 0, 0, 0]
