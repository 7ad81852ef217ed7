"""The schedule's Python count under TensorFlow: applied eagerly, each step
reads the count as it is; inside a traced train step the rate of the first
trace is used for every later step."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf
from tests.test_schedule_state import COUNTED, FROM_STEP, WARMUP, WARMUP_FIXED

from tfrewrite.api import fix_source

from .equivalence import load_module

pytestmark = pytest.mark.tensorflow


def _rates(source: str, traced: bool) -> list[float]:
    """The learning rate each of three SGD steps used, read off the change of
    a variable whose gradient is 1."""
    schedule = load_module(source).DecayByCount(1.0)
    optimizer = tf.keras.optimizers.SGD(learning_rate=schedule)
    weight = tf.Variable(0.0)

    def step():
        optimizer.apply_gradients([(tf.constant(1.0), weight)])

    run = tf.function(step) if traced else step
    rates = []
    for _ in range(3):
        before = float(weight.numpy())
        run()
        rates.append(before - float(weight.numpy()))
        schedule.advance()
    return rates


def test_the_count_is_frozen_in_the_traced_step():
    np.testing.assert_allclose(_rates(COUNTED, traced=False), [1.0, 0.5, 1 / 3], rtol=1e-6)
    np.testing.assert_allclose(_rates(COUNTED, traced=True), [1.0, 1.0, 1.0], rtol=1e-6)


def test_a_rate_computed_from_the_step_is_the_same_traced():
    np.testing.assert_allclose(
        _rates(FROM_STEP, traced=False), _rates(FROM_STEP, traced=True), rtol=1e-6
    )


def test_a_step_decorated_beside_a_branching_schedule_would_raise():
    """Why TFR302 leaves the step eager: decorated by hand, the optimizer
    calls the schedule in the trace and its Python `if` on the step raises;
    the source as tfrewrite leaves it trains."""
    rewritten = fix_source(WARMUP)
    assert "@tf.function" not in rewritten
    losses = load_module(rewritten).train(3)
    assert losses[-1] < losses[0]
    decorated = load_module(WARMUP.replace("def train_step(", "@tf.function\ndef train_step("))
    with pytest.raises(tf.errors.OperatorNotAllowedInGraphError):
        decorated.train(3)


def test_the_migrated_schedule_and_step_train_as_the_eager_original():
    original = load_module(WARMUP_FIXED).train(4)
    migrated = load_module(fix_source(WARMUP_FIXED, unsafe_fixes=True))
    losses = migrated.train(4)
    np.testing.assert_allclose(losses, original, rtol=1e-5, atol=1e-6)
    assert migrated.train_step.experimental_get_tracing_count() >= 1
