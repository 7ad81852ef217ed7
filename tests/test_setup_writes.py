"""TFR201 tells a driver's set-up from per-call state: an attribute its
method binds once, outside every loop and before it first calls the traced
step, is seen by the first trace as by every call after it (no finding);
one bound per batch, inside the loop, is frozen at the first trace (the
finding). A driver that a loop calls binds its set-up anew each run."""

from __future__ import annotations

import libcst as cst
from tests.setup_driver import RUN_FOLDS, TRAINER

from tfrewrite.api import check_source
from tfrewrite.facts.setup_writes import binds_before_use


def _reported(source: str) -> list[str]:
    found = check_source(source, select=["TFR201"])
    return sorted(f.message.split("`")[1] for f in found)


def test_set_up_once_is_not_reported_and_per_batch_state_is() -> None:
    assert _reported(TRAINER.replace("{extra}", "")) == ["self.temperature"]


def test_a_driver_called_from_a_loop_binds_its_set_up_anew() -> None:
    source = TRAINER.replace("{extra}", RUN_FOLDS).replace("self.margin = 2.0", "self.margin = 3.0")
    assert _reported(source) == ["self.margin", "self.temperature"]


def _method(source: str) -> cst.FunctionDef:
    statement = cst.parse_module(source).body[0]
    assert isinstance(statement, cst.FunctionDef)
    return statement


def test_binds_before_use_reads_order_and_loops() -> None:
    before = "def train(self, xs):\n    self.w = 1\n    for x in xs:\n        self.step()\n"
    assert binds_before_use(_method(before), "w", {"step"})
    after = "def train(self, xs):\n    self.step()\n    self.w = 1\n"
    assert not binds_before_use(_method(after), "w", {"step"})
    looped = "def train(self, xs):\n    for x in xs:\n        self.w = x\n        self.step()\n"
    assert not binds_before_use(_method(looped), "w", {"step"})
    never_called = "def train(self, xs):\n    self.w = 1\n"
    assert not binds_before_use(_method(never_called), "w", {"step"})
