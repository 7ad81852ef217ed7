"""TFR101 on `optimizer.iterations` under TensorFlow: the original run
eagerly against the rewrite traced with `autograph=False`, as the counter
steps through both branches (`apply_gradients` counts it up)."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf
from test_optimizer_conditions import (
    HELD_OPTIMIZER,
    MODEL_OPTIMIZER,
    MODULE_OPTIMIZER,
)

from tfrewrite.api import fix_source

from .equivalence import assert_same, load_module, python_function, run_eagerly

pytestmark = pytest.mark.tensorflow


_VARIABLES: dict[int, tf.Variable] = {}


def _step(optimizer: tf.keras.optimizers.Optimizer) -> None:
    """One `apply_gradients`: counts `optimizer.iterations` up by one."""
    variable = _VARIABLES.setdefault(id(optimizer), tf.Variable(1.0))
    optimizer.apply_gradients([(tf.constant(0.0), variable)])


def test_a_module_optimizer_counter() -> None:
    original = load_module(MODULE_OPTIMIZER)
    rewritten = load_module(fix_source(MODULE_OPTIMIZER, select=["TFR101"]))
    eager = python_function(original.warmup_scale)
    traced = tf.function(python_function(rewritten.warmup_scale), autograph=False)
    x = tf.constant([2.0, 4.0])
    seen = []
    for _ in range(5):  # iterations 0..4: both sides of `< 3`
        expected = run_eagerly(eager, x)
        assert_same(expected, traced(x), what=f"iterations={int(original.optimizer.iterations)}")
        seen.append(float(expected[0]))
        _step(original.optimizer)
        _step(rewritten.optimizer)
    assert seen == [1.0, 1.0, 1.0, 2.0, 2.0]


def test_an_optimizer_and_a_scalar_variable_on_self() -> None:
    original = load_module(HELD_OPTIMIZER).Trainer()
    rewritten = load_module(fix_source(HELD_OPTIMIZER, select=["TFR101"])).Trainer()
    traced = tf.function(python_function(type(rewritten).scale), autograph=False)
    x = tf.constant(3.0)
    results = []
    for step in range(4):
        expected = run_eagerly(python_function(type(original).scale), original, x)
        assert_same(expected, traced(rewritten, x), what=f"step {step}")
        results.append(float(expected))
        for trainer in (original, rewritten):
            _step(trainer.optimizer)
            trainer.seen.assign_add(1)
    assert results == [6.0, 3.0, 7.0, 4.0]  # both branches of both conditions


def test_a_keras_models_train_step_under_fit() -> None:
    """`fit` traces `train_step`; the rewrite gives the losses the original
    gives run eagerly (`run_eagerly=True`), epoch by epoch."""
    x = np.linspace(-1.0, 1.0, 8, dtype=np.float32).reshape(8, 1)
    y = 2.0 * x

    def losses(source: str, run_eagerly: bool) -> list[float]:
        tf.keras.utils.set_random_seed(0)
        model = load_module(source).Regressor()
        model.compile(optimizer=tf.keras.optimizers.SGD(0.1), run_eagerly=run_eagerly)
        history = model.fit(x, y, batch_size=8, epochs=4, shuffle=False, verbose=0)
        return history.history["scaled_loss"]

    expected = losses(MODEL_OPTIMIZER, run_eagerly=True)
    actual = losses(fix_source(MODEL_OPTIMIZER, select=["TFR101"]), run_eagerly=False)
    np.testing.assert_allclose(actual, expected, rtol=1e-5)
    assert 0.0 in expected and any(v > 0.0 for v in expected)  # both branches
