"""TFR201 on attributes a method rebinds between traced calls through a
local name: `points, targets = self.sampler.draw()`, then `self.points =
points`. The elements of a tuple a call returns are as unknown as
`self.points, self.targets = self.sampler.draw()` (plain values, which a
trace copies in): the step, traced once without arguments, trains the
first draw forever. A local bound to a model is no plain value."""

from __future__ import annotations

from tests.frozen_resamples import source

from tfrewrite.api import check_source


def _found(**kwargs: str) -> list[tuple[int, str]]:
    findings = check_source(source(**kwargs), select=["TFR201"])
    return [(f.start.line, f.message.split("`")[1]) for f in findings]


def test_attributes_rebound_through_locals_are_frozen_state() -> None:
    assert _found() == [(32, "self.points"), (32, "self.targets")]


def test_locals_bound_to_numpy_results_are_plain_too() -> None:
    binding = "points = np.zeros((16, 2), np.float32); targets = np.ones((16, 1), np.float32)"
    assert [name for _, name in _found(binding=binding)] == ["self.points", "self.targets"]


def test_a_local_bound_in_a_loop_is_not_known_plain() -> None:
    binding = "for points, targets in [self.sampler.draw()]:\n            pass"
    assert _found(binding=binding) == []
