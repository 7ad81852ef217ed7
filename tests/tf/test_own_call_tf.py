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


def _critic_statistics(forward: str) -> np.ndarray:
    """The critic's batch-normalization mean after three steps of the
    custom loop, its forward pass run as `forward`."""
    from tests.test_own_call import CRITIC_STEP

    module = load_module(CRITIC_STEP.format(forward=forward))
    rng = np.random.default_rng(0)
    for _ in range(3):
        real = rng.normal(2.0, 1.0, size=(8, 3)).astype("float32")
        module.critic_step(real, rng.normal(size=(8, 3)).astype("float32"))
    return np.asarray(module.critic.body.layers[1].moving_mean)


def test_a_trained_model_run_as_call_keeps_batch_normalization_in_inference_mode() -> None:
    """`critic.call(x)` in the tape (TFR304): the statistics never move,
    although `call` defaults `training` to True; `critic(x, training=True)`
    moves them."""
    assert not _critic_statistics("critic.call").any()
    assert _critic_statistics("(lambda x: critic(x, training=True))").any()
