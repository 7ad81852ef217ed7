"""TFR301 on a loss a script hands a trainer's constructor: the trainer
keeps it (`self.loss_fn = loss_fn`) and its undecorated step calls it in
the tape, so the loss's decorator compiles only the loss. What `__init__`
keeps is what every call site passes there (`param_functions`); a
trainer one site builds with another loss, or with no loss, learns nothing."""

from __future__ import annotations

from pathlib import Path

from tests.handed_losses import FILES, SCRIPT
from tests.projects import check_project, found_lines


def test_a_loss_handed_to_the_trainer_is_a_loss(tmp_path: Path) -> None:
    found = check_project(tmp_path, FILES, ("TFR301", "TFR302"))
    assert found_lines(found) == [("losses.py", 4), ("trainer.py", 10)]


def test_a_site_passing_something_else_leaves_the_parameter_unknown(tmp_path: Path) -> None:
    other = SCRIPT.replace(
        "return trainer.fit(batches, 2)",
        (
            "trainer.fit(batches, 2)\n"
            "    return Trainer(model, loss_fn=lambda p, t: p - t).fit(batches, 1)"
        ),
    )
    files = {**FILES, "script.py": other}
    found = check_project(tmp_path, files, ("TFR301",))
    assert found_lines(found) == []
