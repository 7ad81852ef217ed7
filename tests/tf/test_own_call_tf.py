"""What `self.call(x)` in a `train_step` does, measured: after `fit`, the
batch normalization inside has not moved its statistics (it ran in
inference mode); with `self(x, training=True)` it has."""

from __future__ import annotations

import numpy as np
import pytest
from tests.test_own_call import MODEL

from tfrewrite.api import fix_source

from .equivalence import load_module

pytestmark = pytest.mark.tensorflow


def _moving_mean_after_fit(forward: str, fixed: bool = False) -> np.ndarray:
    source = MODEL.format(forward=forward)
    if fixed:
        source = fix_source(source, select=["TFR304"], unsafe_fixes=True)
    model = load_module(source).Denoiser()
    model.compile(optimizer="sgd")
    x = np.random.default_rng(0).normal(size=(16, 3)).astype("float32")
    model.fit(x, batch_size=4, epochs=1, verbose=0)
    return np.asarray(model.encoder.layers[1].moving_mean)


def test_self_call_leaves_batch_normalization_in_inference_mode() -> None:
    assert not _moving_mean_after_fit("self.call(data)").any()
    assert _moving_mean_after_fit("self(data, training=True)").any()


def test_self_call_given_training_moves_the_statistics_only_once_call_passes_it_on() -> None:
    """`self.call(data, training=True)`: `call` gets the flag, its encoder
    does not, and its batch normalization stays in inference mode; the fix
    that passes `call`'s `training` on makes `fit` train it."""
    forward = "self.call(data, training=True)"
    assert not _moving_mean_after_fit(forward).any()
    assert _moving_mean_after_fit(forward, fixed=True).any()
