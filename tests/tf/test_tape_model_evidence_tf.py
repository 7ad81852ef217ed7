"""TFR304's two newer kinds of evidence run: a model whose Keras weights the
tape differentiates (its class in another module, its name no model's), and
a model called in a loss helper the tape runs. The original step, run
eagerly, leaves batch normalization's moving statistics where they were
(inference mode); the fixed step, traced, normalizes with the batch's
statistics and moves the moving mean toward them."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf
from test_tape_model_evidence import CRITIC, NETS, STACKED, STEP

from tfrewrite.api import fix_source

from .equivalence import load_file_module, python_function

pytestmark = pytest.mark.tensorflow

MOMENTUM = 0.99  # Keras' default for `BatchNormalization`
EPSILON = 1e-3


def _batch_norm(z: np.ndarray) -> np.ndarray:
    """What a fresh `BatchNormalization` computes in training mode."""
    return (z - z.mean(axis=0)) / np.sqrt(z.var(axis=0) + EPSILON)


def _same_weights(source: tf.keras.Model, target: tf.keras.Model) -> None:
    target.set_weights(source.get_weights())


def test_a_model_whose_keras_weights_the_tape_differentiates(tmp_path: Path) -> None:
    (tmp_path / "nets.py").write_text(textwrap.dedent(NETS))
    sys.path.insert(0, str(tmp_path))
    try:
        original = load_file_module(STEP, tmp_path, "evidence_step")
        fixed_source = fix_source(textwrap.dedent(STEP), select=["TFR304"], unsafe_fixes=True)
        assert "g(batch[0], training=True)" in fixed_source
        rewritten = load_file_module(fixed_source, tmp_path, "evidence_step_fixed")
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("nets", None)
    rng = np.random.default_rng(0)
    x = tf.constant(rng.normal(3.0, 2.0, (32, 4)), tf.float32)
    y = tf.constant(rng.normal(0.0, 1.0, (32, 3)), tf.float32)
    original.g(x)  # build: inference mode moves no statistic
    rewritten.g(x)
    _same_weights(original.g, rewritten.g)
    kernel, bias = (w.numpy() for w in (original.g.d.kernel, original.g.d.bias))
    z = x.numpy() @ kernel + bias

    loss = python_function(original.step)((x, y))  # the original, eagerly
    np.testing.assert_array_equal(original.g.bn.moving_mean.numpy(), np.zeros(3))
    # Inference mode: the moving statistics (0 and 1) normalize.
    inference = np.mean(np.abs(z / np.sqrt(1.0 + EPSILON) - y.numpy()))
    np.testing.assert_allclose(float(loss), inference, rtol=1e-5)

    loss = rewritten.step((x, y))  # the fix, traced by its `@tf.function`
    np.testing.assert_allclose(
        rewritten.g.bn.moving_mean.numpy(), (1 - MOMENTUM) * z.mean(axis=0), rtol=1e-4
    )
    training = np.mean(np.abs(_batch_norm(z) - y.numpy()))
    np.testing.assert_allclose(float(loss), training, rtol=1e-4)


def test_a_model_called_in_a_loss_helper_the_tape_runs(tmp_path: Path) -> None:
    original = load_file_module(CRITIC, tmp_path, "evidence_critic")
    fixed_source = fix_source(textwrap.dedent(CRITIC), select=["TFR304"], unsafe_fixes=True)
    assert "critic(fake, training=True)" in fixed_source
    rewritten = load_file_module(fixed_source, tmp_path, "evidence_critic_fixed")
    rng = np.random.default_rng(1)
    real = tf.constant(rng.normal(2.0, 1.0, (16, 5)), tf.float32)
    fake = tf.constant(rng.normal(-1.0, 3.0, (16, 5)), tf.float32)
    original.critic(real)  # build
    rewritten.critic(real)
    _same_weights(original.critic, rewritten.critic)
    dense, norm, _ = original.critic.layers
    features = {
        name: value.numpy() @ dense.kernel.numpy() + dense.bias.numpy()
        for name, value in (("real", real), ("fake", fake))
    }

    python_function(original.critic_step)(real, fake)  # the original, eagerly
    np.testing.assert_array_equal(norm.moving_mean.numpy(), np.zeros(8))

    rewritten.critic_step(real, fake)  # the fix, traced
    # `critic(fake)` runs first, then `critic(real)`: two updates, in order.
    after_fake = (1 - MOMENTUM) * features["fake"].mean(axis=0)
    expected = MOMENTUM * after_fake + (1 - MOMENTUM) * features["real"].mean(axis=0)
    moved = rewritten.critic.layers[1].moving_mean.numpy()
    np.testing.assert_allclose(moved, expected, rtol=1e-4, atol=1e-6)


def test_the_stacked_layers_compute_the_same_in_both_modes(tmp_path: Path) -> None:
    """What TFR304 leaves alone: the `Sequential` subclass of layers that
    ignore `training` gives one output whatever the mode (the shape also
    trains as written)."""
    module = load_file_module(textwrap.dedent(STACKED), tmp_path, "stacked")
    x = tf.constant(np.linspace(-1.0, 1.0, 8, dtype=np.float32).reshape(2, 4))
    np.testing.assert_allclose(module.model(x, training=True), module.model(x, training=False))
