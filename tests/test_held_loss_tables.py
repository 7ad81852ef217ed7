"""TFR301 on losses a model picks from a table it holds: `train_step`,
traced by `fit`, calls `self.objectives["fit"](...)`, an item of a dict
filled in `__init__` with the decorated closures factory methods return.
The decorators are nested graph boundaries; the fix removes both. A table
item nothing calls in a tape is no loss."""

from __future__ import annotations

from tests.held_loss_tables import SOURCE

from tfrewrite.api import check_source, fix_source


def test_losses_picked_from_a_held_table_are_reported() -> None:
    found = [(f.code, f.start.line) for f in check_source(SOURCE, select=["TFR301"])]
    assert found == [("TFR301", 13), ("TFR301", 20)]


def test_the_fix_removes_both_decorators_and_is_stable() -> None:
    fixed = fix_source(SOURCE, select=["TFR301"])
    assert "@tf.function" not in fixed
    assert fix_source(fixed, select=["TFR301"]) == fixed


def test_a_table_item_no_tape_differentiates_is_no_loss() -> None:
    source = SOURCE.replace(
        '            loss += 0.1 * self.objectives["smooth"](outputs)\n',
        '            tf.print(self.objectives["smooth"](outputs))\n',
    )
    found = [(f.code, f.start.line) for f in check_source(source, select=["TFR301"])]
    assert found == [("TFR301", 13)]
