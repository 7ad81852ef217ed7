"""TFR302 and a train step every caller hands a list its loop grows (an
episode's states): traced, each new length would trace it again, so the
step stays eager by design and is not reported, as a method reading a
list its class grows is not. Handed an array of the same values, the
step is reported."""

from __future__ import annotations

from pathlib import Path

from tests.grown_list_arguments import SCRIPT, STEPS
from tests.projects import check_project, found_lines


def test_a_step_handed_grown_lists_is_left_eager(tmp_path: Path) -> None:
    assert check_project(tmp_path, {"steps.py": STEPS, "main.py": SCRIPT}, ("TFR302",)) == []


def test_a_step_handed_arrays_is_reported(tmp_path: Path) -> None:
    script = SCRIPT.replace(
        "train_step(states, returns, model, optimizer)",
        "train_step(np.stack(states), np.array(returns), model, optimizer)",
    )
    found = check_project(tmp_path, {"steps.py": STEPS, "main.py": script}, ("TFR302",))
    assert found_lines(found) == [("steps.py", 6)]
