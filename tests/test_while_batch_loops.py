"""TFR306 reads a `while` loop that takes the next batch of a sequence on
each pass (`loader.next_batch(32)`, `next(batches)`) as a loop over batches:
the last one may be short, so the mean of its per-batch values over-weights
it. Batches of one, and random draws of full batches (`buffer.sample(64)`),
are not."""

from __future__ import annotations

import textwrap

import pytest

from tfrewrite.api import check_source

LOOP = """
import numpy as np


def run_epoch(step, loader):
    losses = []
    total = 0.0
    n_batches = 0
    while True:
        {draw}
        out = step(minibatch)
        losses.append(out["loss"])
        total += out["loss"]
        n_batches += 1
        if minibatch["last"]:
            break
    return np.average(losses), total / n_batches
"""


def _lines(draw: str) -> list[int]:
    source = textwrap.dedent(LOOP.replace("{draw}", draw))
    return sorted(f.start.line for f in check_source(source, select=["TFR306"]))


@pytest.mark.parametrize(
    "draw",
    ["minibatch = loader.next_batch(batch_size=32)", "minibatch = next(batches)"],
)
def test_a_loop_taking_the_next_batch_averages_per_batch_values(draw: str) -> None:
    assert _lines(draw.replace("next(batches)", "next(loader)")) == [17, 17]


@pytest.mark.parametrize(
    "draw",
    [
        "minibatch = loader.next_batch(batch_size=1)",
        "minibatch = loader.next_batch(1)",
        "minibatch = loader.sample(64)",
    ],
)
def test_batches_of_one_or_random_full_draws_are_not_reported(draw: str) -> None:
    assert _lines(draw) == []


def test_the_while_loop_finding_has_no_fix() -> None:
    source = textwrap.dedent(LOOP.replace("{draw}", "minibatch = loader.next_batch(32)"))
    findings = check_source(source, select=["TFR306"])
    assert findings and all(f.fix is None for f in findings)
