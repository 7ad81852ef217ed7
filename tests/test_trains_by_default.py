"""TFR304 and a model of another module whose `call` defaults `training`
to True: called without the flag in a train step, Keras uses that default,
so it trains already (no finding); a model defaulting to None beside it
runs in inference mode (a finding). The fact is pass 1's
(`FunctionInfo.trains_by_default`), judged across modules by the project
facts (`ModuleIndex.classes_training_by_default`)."""

from __future__ import annotations

from pathlib import Path

from tests.projects import check_project, found_lines
from tests.trains_by_default import MODELS, STEP


def test_only_the_model_defaulting_to_none_is_reported(tmp_path: Path) -> None:
    found = check_project(tmp_path, {"models.py": MODELS, "step.py": STEP}, ("TFR304",))
    assert found_lines(found) == [("step.py", 13)]
    assert "`critic(...)`" in found[0].message


def test_a_default_of_false_is_reported(tmp_path: Path) -> None:
    models = MODELS.replace("def call(self, x, training=True)", "def call(self, x, training=False)")
    found = check_project(tmp_path, {"models.py": models, "step.py": STEP}, ("TFR304",))
    assert len(found) == 2
