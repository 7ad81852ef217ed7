"""TFR201 and an attribute that code elsewhere rebinds on an object in a
loop (`agent.noise = ...` per episode in a script, `agent` an `Agent`): a
traced method of the class reading `self.noise` keeps the value of its
first trace. Set once before the loop, it is set-up, not changing state."""

from __future__ import annotations

from pathlib import Path

from tests.attributes_rebound_on_objects import AGENT, SCRIPT
from tests.projects import check_project, found_lines


def test_an_attribute_a_script_rebinds_per_episode_is_reported(tmp_path: Path) -> None:
    found = check_project(tmp_path, {"agent.py": AGENT, "main.py": SCRIPT}, ("TFR201",))
    assert found_lines(found) == [("agent.py", 10)]
    assert "`self.noise`" in found[0].message and "main.py:8" in found[0].message


def test_a_module_level_object_rebound_in_a_loop_is_reported(tmp_path: Path) -> None:
    script = """
from agent import Agent

agent = Agent()
for episode in range(10):
    agent.noise = 0.3 / (episode + 1)
    agent.choose_action(1.0)
"""
    found = check_project(tmp_path, {"agent.py": AGENT, "main.py": script}, ("TFR201",))
    assert found_lines(found) == [("agent.py", 10)]


def test_an_attribute_set_once_before_the_loop_is_not_reported(tmp_path: Path) -> None:
    script = SCRIPT.replace(
        "    for episode, state in enumerate(states):\n        agent.noise = 0.3 / (episode + 1)\n",
        "    agent.noise = 0.1\n    for episode, state in enumerate(states):\n",
    )
    assert check_project(tmp_path, {"agent.py": AGENT, "main.py": script}, ("TFR201",)) == []


def test_an_object_built_afresh_in_each_pass_is_set_up_not_changed(tmp_path: Path) -> None:
    script = SCRIPT.replace("    agent = Agent()\n", "").replace(
        "        agent.noise = 0.3 / (episode + 1)\n",
        "        agent = Agent()\n        agent.noise = 0.3 / (episode + 1)\n",
    )
    assert check_project(tmp_path, {"agent.py": AGENT, "main.py": script}, ("TFR201",)) == []
