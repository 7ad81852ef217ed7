"""The set-up `build` of `tests/test_setup_methods.py`, first called from
traced code, measured: the accumulator holds one slot per variable and the
sums of every step's gradients, eagerly and traced alike."""

from __future__ import annotations

import pytest
from tests.test_setup_methods import SUMS

from .equivalence import load_module, python_function, run_eagerly

pytestmark = pytest.mark.tensorflow


def _after_three_steps(traced: bool) -> tuple[int, list[float]]:
    import tensorflow as tf

    module = load_module(SUMS.format(method="build"))
    step = module.step if traced else python_function(module.step)
    for _ in range(3):
        if traced:
            step(tf.constant([1.0, 1.0]))
        else:
            run_eagerly(step, tf.constant([1.0, 1.0]))
    return len(module.sums.slots), module.sums.slots[0].numpy().tolist()


def test_a_build_first_called_while_tracing_runs_once() -> None:
    assert _after_three_steps(traced=True) == _after_three_steps(traced=False) == (1, [3.0, 3.0])
