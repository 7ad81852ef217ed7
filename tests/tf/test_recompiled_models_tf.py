"""What `tests/test_recompiled_models.py` rests on, measured: an attribute
a traced `call` reads, changed between two `predict` calls, is frozen at
its first value; compiled again after the change, the model traces anew
and computes with the new value, as it does eagerly."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
from tests.test_recompiled_models import SCRIPT

from .equivalence import load_module

pytestmark = pytest.mark.tensorflow


def _outputs(recompile: bool, run_eagerly: bool) -> list[float]:
    import tensorflow as tf

    tf.keras.utils.set_random_seed(1)
    module = load_module(textwrap.dedent(SCRIPT.format(recompile="")))
    model = module.Tree()
    x = np.ones((4, 3), dtype=np.float32)
    model.compile(optimizer="adam", loss="mse", run_eagerly=run_eagerly)
    outputs = []
    for depth in (1, 2, 3):
        model.depth = depth
        if recompile:
            model.compile(optimizer="adam", loss="mse", run_eagerly=run_eagerly)
        outputs.append(float(model.predict(x, verbose=0)[0, 0]))
    return outputs


def test_a_change_between_predict_calls_is_frozen_in_the_trace() -> None:
    eager = _outputs(recompile=False, run_eagerly=True)
    traced = _outputs(recompile=False, run_eagerly=False)
    assert traced[1:] == [traced[0]] * 2
    assert not np.allclose(eager, traced)


def test_compile_after_the_change_traces_anew() -> None:
    eager = _outputs(recompile=True, run_eagerly=True)
    traced = _outputs(recompile=True, run_eagerly=False)
    np.testing.assert_allclose(traced, eager, rtol=1e-6)
    assert eager[0] != eager[1]
