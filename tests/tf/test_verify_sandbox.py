"""Verify's workers run the user's code in a temporary mirror of the
script's folder: a loss that writes `./result/log.txt` and reads its data
from `os.path.dirname(__file__)` verifies, and the project is left exactly
as it was (no `result/log.txt`, no `__pycache__`)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tfrewrite.verify.run import verify_targets
from tfrewrite.verify.settings import parse_verify_settings
from tfrewrite.verify.targets import pair_targets

pytestmark = pytest.mark.tensorflow

HELPER = textwrap.dedent(
    """
    import os


    def log(value):
        os.makedirs("result", exist_ok=True)
        with open(os.path.join("result", "log.txt"), "a") as handle:
            handle.write(f"{value}\\n")
    """
)

SCRIPT = textwrap.dedent(
    """
    import os

    import numpy as np
    import tensorflow as tf

    from helper import log

    HERE = os.path.dirname(__file__)
    MARGIN = float(np.loadtxt(os.path.join(HERE, "data", "margin.txt")))


    @tf.function
    def clipped_loss(y_true, y_pred):
        log("traced")
        error = tf.reduce_mean(tf.abs(y_true - y_pred))
        if {test}:
            loss = error * MARGIN
        else:
            loss = tf.square(error)
        return loss
    """
)


def _snapshot(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): (p.read_text() if p.is_file() else "<dir>")
        for p in sorted(folder.rglob("*"))
    }


def test_user_code_writes_into_a_temporary_folder_and_reads_beside_its_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # the file is named relative to where verify runs
    project = tmp_path / "project"
    (project / "data").mkdir(parents=True)
    (project / "data" / "margin.txt").write_text("0.5\n")
    (project / "helper.py").write_text(HELPER)
    script = project / "train.py"
    original = SCRIPT.format(test="error > 0.3")
    script.write_text(original)
    rewrite = original.replace(
        "    if error > 0.3:\n        loss = error * MARGIN\n    else:\n"
        "        loss = tf.square(error)\n",
        "    loss = tf.cond(error > 0.3, lambda: error * MARGIN, lambda: tf.square(error))\n",
    )
    assert rewrite != original
    broken = rewrite.replace("error > 0.3", "error > 0.3 + MARGIN")
    before = _snapshot(project)
    settings = parse_verify_settings({"samples": 60, "search": 32, "xla": False})
    verdicts = []
    for candidate in (rewrite, broken):
        targets = pair_targets("project/train.py", "train", original, candidate, settings)
        results = verify_targets(targets, settings, project, jobs=1)
        verdicts.append({r["function"]: r["verdict"] for r in results})
    assert verdicts == [{"clipped_loss": "equivalent"}, {"clipped_loss": "mismatch"}], results
    assert _snapshot(project) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["project"]
