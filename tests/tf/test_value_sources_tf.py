"""The facts `tests/test_value_sources.py` reads from the code, measured under
TensorFlow: `typing.cast` hands `tf.function` over unchanged, an item of a
tensor's rows given to `int` needs AutoGraph, and a model's variables keep
their static shape in a trace whose inputs have unknown dimensions."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from typing import Any, cast

import numpy as np
import pytest

from .equivalence import assert_same, load_module, run_eagerly

pytestmark = pytest.mark.tensorflow


def test_typing_cast_of_tf_function_traces_the_method() -> None:
    import tensorflow as tf

    printed: list[str] = []

    class Learner:
        @cast(Callable[..., Any], tf.function)
        def update(self, x):
            printed.append("traced")  # a Python effect: once per trace
            return x * 2.0

    learner = Learner()
    for value in (1.0, 2.0, 3.0):
        learner.update(tf.constant(value))
    assert printed == ["traced"]


_ROWS = """
    import tensorflow as tf

    updates = []

    def replay(n_updates):
        for _ in range(int(n_updates)):
            updates.append(1)

    def step(done):
        for end in tf.where(done):
            replay(end[0] + 1)
"""


def test_int_of_a_row_item_runs_eagerly_and_needs_autograph_traced() -> None:
    import tensorflow as tf

    module = load_module(_ROWS)
    done = tf.constant([0.0, 1.0, 1.0])
    run_eagerly(module.step, done)
    assert module.updates == [1] * (2 + 3)  # rows 1 and 2: 2 and 3 updates
    with pytest.raises(TypeError):
        tf.function(module.step, autograph=False)(done)


def test_a_models_variables_keep_their_static_shape_under_unknown_input_dimensions() -> None:
    import tensorflow as tf
    from tests.test_value_sources import UNFLATTEN

    solver = load_module(textwrap.dedent(UNFLATTEN).format(given="parts")).Solver
    net = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2)])
    variables = net.trainable_variables
    flat = tf.constant(np.arange(8, dtype=np.float32))
    traced = tf.function(
        lambda f: solver.unflatten(f, variables),
        input_signature=[tf.TensorSpec([None], tf.float32)],
        autograph=False,
    )
    assert_same(run_eagerly(solver.unflatten, flat, variables), traced(flat))


def test_numpy_on_items_of_numpy_results_runs_traced() -> None:
    import tensorflow as tf
    from tests.test_value_sources import _ANGLES

    source = textwrap.dedent(_ANGLES.format(indices="np.arange(8)[np.newaxis, :]"))
    layer = load_module(source).Encoding()
    x = tf.ones((2, 5, 8))
    assert_same(run_eagerly(layer.call, x), tf.function(layer.call, autograph=False)(x))


def test_a_loss_picked_after_the_tape_has_its_gradients() -> None:
    import tensorflow as tf
    from tests.test_training_loop import PICKED_LOSS

    trainer_class = load_module(textwrap.dedent(PICKED_LOSS.format(absolute="absolute"))).Trainer
    grads_seen = []
    for kind in ("squared", "absolute"):
        trainer = trainer_class()
        trainer.net = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(1)])
        trainer.opt = tf.keras.optimizers.SGD(0.1)
        trainer.kind = kind
        before = [v.numpy().copy() for v in trainer.net.trainable_variables]
        tf.function(trainer.step, autograph=False)(tf.ones((4, 3)), tf.zeros((4, 1)))
        after = [v.numpy() for v in trainer.net.trainable_variables]
        grads_seen.append(any(not np.allclose(b, a) for b, a in zip(before, after, strict=True)))
    assert grads_seen == [True, True]
