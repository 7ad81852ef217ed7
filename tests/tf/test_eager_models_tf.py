"""What `compile(run_eagerly=True)` does to a `train_step`, measured: the
NumPy draw in it is fresh on every batch, as the eager reading of the code
says (nothing to report); compiled as usual, it is drawn once, while
tracing (the hazard TFR102 reports)."""

from __future__ import annotations

import numpy as np
import pytest
from tests.test_eager_models import LOCAL, MODEL

from .equivalence import load_module

pytestmark = pytest.mark.tensorflow


def _noise_per_batch(run_eagerly: bool) -> list[float]:
    import keras

    source = MODEL.format(use=LOCAL.format(flag="")).replace(
        'return {"loss": loss}', 'return {"loss": loss, "noise": noise}'
    )
    model = load_module(source).Jittered()
    model.compile(optimizer="sgd", run_eagerly=run_eagerly)
    seen: list[float] = []
    record = keras.callbacks.LambdaCallback(
        on_train_batch_end=lambda batch, logs: seen.append(float(logs["noise"]))
    )
    x = np.ones((8, 2), "float32")
    y = np.zeros((8, 1), "float32")
    model.fit(x, y, batch_size=2, epochs=1, verbose=0, callbacks=[record])
    return seen


def test_a_draw_in_an_eagerly_compiled_train_step_is_fresh_per_batch() -> None:
    assert len(set(_noise_per_batch(run_eagerly=True))) == 4


def test_compiled_as_usual_the_draw_is_made_once_while_tracing() -> None:
    assert len(set(_noise_per_batch(run_eagerly=False))) == 1
