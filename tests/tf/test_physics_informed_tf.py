"""The physics-informed net (`tests/physics_informed.py`) with TFR301's fix
(the loss method's nested `@tf.function` removed): run traced, it trains
as the original does eagerly, epoch by epoch and weight by weight; and
the epoch loss it logs is the per-batch average TFR306 reports, not the
mean over the points."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf
from tests.physics_informed import PINN

from tfrewrite.api import fix_source

from .equivalence import assert_same, load_file_module, run_eagerly

pytestmark = pytest.mark.tensorflow


def _net(module):
    rng = np.random.default_rng(0)
    points = rng.uniform(-1.0, 1.0, size=(10, 1)).astype("float32")
    net = module.PINN(points, np.sin(points).astype("float32"))
    net.dnn.set_weights(
        [np.full(w.shape, 0.1 * (i + 1), "float32") for i, w in enumerate(net.dnn.get_weights())]
    )
    return net


def _train(net, epochs=3, batch=4):
    np.random.seed(0)
    return [float(loss) for loss in net.train(epochs, batch)]


def test_the_fixed_net_trains_traced_as_the_original_eagerly(tmp_path: Path) -> None:
    fixed = fix_source(textwrap.dedent(PINN), select=["TFR301"])
    original, rewritten = (
        _net(load_file_module(PINN, tmp_path)),
        _net(load_file_module(fixed, tmp_path)),
    )
    expected = run_eagerly(_train, original)
    assert_same(expected, _train(rewritten), rtol=1e-5, atol=1e-6)
    assert_same(original.dnn.get_weights(), rewritten.dnn.get_weights(), rtol=1e-5, atol=1e-6)


def test_the_logged_epoch_loss_weights_the_short_batch_as_a_full_one(tmp_path: Path) -> None:
    net = _net(load_file_module(PINN, tmp_path))
    np.random.seed(0)
    order = np.random.permutation(10)
    losses, sizes = [], []
    for idx in range(0, 10, 4):  # batches of 4, 4 and 2: int(10 / 4) == 2
        part = order[idx : idx + 4]
        losses.append(
            float(net.loss_glb(tf.constant(net.points[part]), tf.constant(net.values[part])))
        )
        sizes.append(len(part))
    logged = sum(loss / int(10 / 4) for loss in losses)
    mean = sum(loss * size for loss, size in zip(losses, sizes, strict=True)) / 10
    assert logged > 1.3 * mean  # three terms over two: the epoch loss is inflated
