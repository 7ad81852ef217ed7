"""TFR301 on a loss a step hands `minimize` through a closure: the original
run eagerly and the rewrite (the loss's decorator removed, the step still
traced, also with `autograph=False`) train the same, step by step."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
import tensorflow as tf
from tests.minimized_steps import MINIMIZED, MINIMIZED_LAMBDA
from tests.tf.equivalence import assert_same, load_module, run_eagerly

from tfrewrite.api import fix_source

pytestmark = pytest.mark.tensorflow


class _Minimizer:
    """An optimizer with TF2 Keras' `minimize(loss, var_list)`, which Keras 3
    no longer has: its own tape differentiates the callable."""

    def __init__(self) -> None:
        self.sgd = tf.keras.optimizers.SGD(0.1)

    def minimize(self, loss, var_list):  # type: ignore[no-untyped-def]
        with tf.GradientTape() as tape:
            value = loss()
        self.sgd.apply_gradients(zip(tape.gradient(value, var_list), var_list, strict=True))


def _train(source: str, eager: bool, autograph: bool = True) -> list:
    """Losses of four steps, then the weights they leave."""
    if not autograph:
        source = source.replace("@tf.function", "@tf.function(autograph=False)")
    tf.keras.utils.set_random_seed(5)
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(1)])
    optimizer = _Minimizer()
    optimizer.sgd.build(model.trainable_variables)
    step = load_module(source).build(model, optimizer)
    x = tf.constant(np.linspace(-1.0, 1.0, 24, dtype=np.float32).reshape(8, 3))
    y = tf.constant(np.linspace(0.5, -0.5, 8, dtype=np.float32).reshape(8, 1))

    def steps() -> list:
        return [step(x, y) for _ in range(4)]

    losses = run_eagerly(steps) if eager else steps()
    return [losses, list(model.trainable_variables)]


@pytest.mark.parametrize("source", [MINIMIZED, MINIMIZED_LAMBDA], ids=["closure", "lambda"])
def test_the_rewrite_trains_as_the_original_does_eagerly(source: str) -> None:
    fixed = fix_source(textwrap.dedent(source), select=["TFR301"])
    assert fixed.count("@tf.function") == 1
    expected = _train(source, eager=True)
    for autograph in (True, False):
        assert_same(expected, _train(fixed, eager=False, autograph=autograph), rtol=1e-5)
