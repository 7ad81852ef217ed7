"""TFR103 on an item of a dict of inputs (`print(batch["obs"])` in a traced
critic loss): the dict a replay buffer hands over holds tensors, so the item
is a symbolic tensor when traced and `print` shows it once, at trace time.
The unsafe fix (`tf.print`, to standard output) prints the values on every
call, as the original does eagerly."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

from tfrewrite.api import check_source, fix_source

from .equivalence import load_file_module, python_function
from .fdcapture import capture_fds

pytestmark = pytest.mark.tensorflow

SOURCE = """\
import tensorflow as tf


@tf.function
def critic_loss(batch):
    print(batch["next_obs"])
    return tf.reduce_mean(tf.square(batch["rew"] - batch["next_obs"]))
"""


def _batch(value: float) -> dict[str, tf.Tensor]:
    return {
        "next_obs": tf.constant(np.full((2,), value, "float32")),
        "rew": tf.constant(np.zeros((2,), "float32")),
    }


def test_the_item_is_reported_and_its_fix_prints_every_call(tmp_path: Path) -> None:
    found = check_source(SOURCE, select=["TFR103"])
    assert [(f.code, f.start.line) for f in found] == [("TFR103", 6)]
    assert found[0].fix is not None and found[0].fix.applicability.value == "unsafe"

    original = load_file_module(SOURCE, tmp_path)
    with capture_fds() as traced:
        for value in (1.0, 2.0, 3.0):
            original.critic_loss(_batch(value))
    assert traced.stdout.count("Tensor(") == 1  # once, at trace time

    with capture_fds() as eager:
        for value in (1.0, 2.0, 3.0):
            python_function(original.critic_loss)(_batch(value))
    fixed = load_file_module(fix_source(SOURCE, select=["TFR103"], unsafe_fixes=True), tmp_path)
    with capture_fds() as rewritten:
        for value in (1.0, 2.0, 3.0):
            fixed.critic_loss(_batch(value))
    numbers = _values(eager.stdout)
    assert numbers == [[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]]
    assert _values(rewritten.stdout) == numbers


def _values(text: str) -> list[list[float]]:
    """The numbers inside the first brackets of each line printed."""
    found = []
    for line in text.splitlines():
        inside = line[line.index("[") + 1 : line.index("]")]
        found.append([float(v) for v in inside.split()])
    return found
