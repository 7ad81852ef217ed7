"""A method train step decorated by TFR302 (matched by method name) trains
like the eager original from the same weights."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import tensorflow as tf
from tests.test_helper_gradients import SOURCE as HELPER_TAPE

from tfrewrite.api import fix_source

from .equivalence import load_module

pytestmark = pytest.mark.tensorflow

ACTOR = """
import tensorflow as tf


class Actor:
    def __init__(self):
        self.model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        self.opt = tf.keras.optimizers.SGD(0.1)

    def train(self, x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((self.model(x, training=True) - y) ** 2)
        grads = tape.gradient(loss, self.model.trainable_variables)
        self.opt.apply_gradients(zip(grads, self.model.trainable_variables))
        return loss


class Agent:
    def __init__(self):
        self.actor = Actor()

    def run(self, data):
        for x, y in data:
            self.actor.train(x, y)
"""


def _trained(source: str, data, weights):
    module = load_module(source)
    agent = module.Agent()
    agent.actor.model.build((None, 3))
    agent.actor.model.set_weights(weights)
    losses = []
    for x, y in data:
        losses.append(float(agent.actor.train(x, y)))
    return losses, agent.actor.model.get_weights(), module


def test_decorated_method_step_trains_like_the_eager_one():
    source = ACTOR
    fixed = fix_source(source, select=["TFR302"], unsafe_fixes=True)
    assert "@tf.function" in fixed
    rng = np.random.default_rng(0)
    data = [
        (
            tf.constant(rng.normal(size=(8, 3)), tf.float32),
            tf.constant(rng.normal(size=(8, 1)), tf.float32),
        )
        for _ in range(4)
    ]
    weights = [rng.normal(size=(3, 1)).astype("float32"), np.zeros(1, "float32")]
    eager_losses, eager_weights, _ = _trained(source, data, weights)
    traced_losses, traced_weights, module = _trained(fixed, data, weights)
    assert isinstance(module.Actor.train, tf.types.experimental.GenericFunction)
    np.testing.assert_allclose(traced_losses, eager_losses, rtol=1e-5)
    for a, b in zip(traced_weights, eager_weights, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5)


def _trains_alike(
    source: str, fixed: str, build: Callable[[Any, Any, Any], Any], step: str, seed: int
) -> None:
    """The eager `source` and the decorated `fixed` give the same losses
    over four calls of the method `step` of the object `build` makes of
    each module, a fresh model and SGD, and leave the same weights. (The
    object is kept: a `tf.function` method holds its instance weakly.)"""
    rng = np.random.default_rng(seed)
    x = tf.constant(rng.normal(size=(8, 3)), tf.float32)
    y = tf.constant(rng.normal(size=(8, 1)), tf.float32)
    runs = []
    for code in (source, fixed):
        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        model.build((None, 3))
        model.set_weights([np.ones((3, 1), np.float32), np.zeros(1, np.float32)])
        trainer = build(load_module(code), model, tf.keras.optimizers.SGD(0.1))
        losses = [float(getattr(trainer, step)(x, y)) for _ in range(4)]
        runs.append((losses, model.get_weights()))
    (eager_losses, eager_weights), (traced_losses, traced_weights) = runs
    np.testing.assert_allclose(traced_losses, eager_losses, rtol=1e-5)
    for traced, eager in zip(traced_weights, eager_weights, strict=True):
        np.testing.assert_allclose(traced, eager, rtol=1e-5)


def test_a_step_applying_its_helpers_gradients_trains_like_the_eager_one():
    """The step leaves its tape to a helper (`tests/test_helper_gradients.py`)."""
    source = textwrap.dedent(HELPER_TAPE)
    fixed = fix_source(source, select=["TFR302"])
    assert "@tf.function\n    def optimization_step" in fixed
    _trains_alike(source, fixed, lambda m, net, opt: m.Solver(net, opt), "optimization_step", 1)


def test_a_step_handing_its_tape_to_a_helper_trains_like_the_eager_one():
    """`self._descend(tape, total)` takes and applies the gradients: the
    decorator moved from the loss onto the step trains as the eager step."""
    from tests.test_helper_gradients import HANDED_TAPE

    source = textwrap.dedent(HANDED_TAPE.format(evaluation=""))
    fixed = fix_source(source)
    assert "@tf.function\n    def step" in fixed and "@tf.function\n    def loss" not in fixed
    _trains_alike(source, fixed, lambda m, net, opt: m.Trainer(net, opt), "step", 2)
