"""Why a step's decoration is withheld for a hazard in another module
(`tests/test_steps_across_modules.py`): decorated, the step writes the
helper's log line only while it traces; eagerly, once per call. `fix`
leaves the project as it is, so it keeps writing one line per step."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest
from tests.test_steps_across_modules import LOGGING_HELPER, STEP_CALLING_THE_HELPER, _fix, _project

pytestmark = pytest.mark.tensorflow


def _log_lines(folder: Path, decorate: bool, monkeypatch: pytest.MonkeyPatch) -> int:
    import tensorflow as tf

    monkeypatch.chdir(folder)
    monkeypatch.syspath_prepend(str(folder))
    for name in ("helpers", "train"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    train = importlib.import_module("train")
    step = tf.function(train.train_step) if decorate else train.train_step
    x, y = tf.ones((2, 3)), tf.zeros((2, 1))
    for _ in range(6):
        step(x, y)
    lines = (folder / "losses.txt").read_text().count("step\n")
    (folder / "losses.txt").unlink()
    return lines


def test_decorating_the_step_writes_the_log_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = _project(tmp_path, {"helpers.py": LOGGING_HELPER, "train.py": STEP_CALLING_THE_HELPER})
    assert _log_lines(tmp_path, decorate=False, monkeypatch=monkeypatch) == 6
    # Only while tracing (twice: the first trace creates the optimizer's variables).
    assert _log_lines(tmp_path, decorate=True, monkeypatch=monkeypatch) <= 2
    assert _fix(tmp_path, files, unsafe=True) == {}
