"""A script calling a method on an object of a project class (`agent =
Agent()`, then `agent.update(x, step_count)`), at module level or in a
function: the call site tells what the method's parameters get. A Python
counter there makes the method's `if step_count % 2 == 0` a Python test
(no TFR101), and, the method being another module's `tf.function`, the
counter retraces it on every new value (TFR203, reported in the script)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.agents_called_from_scripts import AGENT, LOCAL_SCRIPT, SCRIPT
from tests.projects import check_project, found_lines


@pytest.mark.parametrize("script", [SCRIPT, LOCAL_SCRIPT], ids=["module-level", "function"])
def test_the_counter_retraces_the_other_modules_function(tmp_path: Path, script: str) -> None:
    files = {"agent.py": AGENT, "main.py": script}
    found = check_project(tmp_path, files, ("TFR101", "TFR203"))
    assert [(f.code, *line) for f, line in zip(found, found_lines(found), strict=True)] == [
        ("TFR203", "main.py", 9)
    ]
    assert "`step_count`" in found[0].message
