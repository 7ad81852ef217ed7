"""TFR302 withholds its decorator from a step a loop calls with a Python
number that changes every iteration (a step counter setting a warm-up):
decorated, the step would trace a new graph on every call (what TFR203
reports of a decorated one). Passed as a tensor, the step is decorated."""

from __future__ import annotations

import textwrap

import pytest

from tfrewrite.api import check_source, fix_source

STEP = """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
opt = tf.keras.optimizers.Adam()


def train_step(x, y, iteration):
    warmup = tf.minimum(1.0, tf.cast(iteration + 1, tf.float32) / 2.0)
    with tf.GradientTape() as tape:
        loss = warmup * tf.reduce_mean((model(x) - y) ** 2)
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))
    return loss


def train(batches):
    iteration = 0
    for x, y in batches:
        train_step(x, y, {argument})
        iteration += 1
"""


@pytest.mark.parametrize("argument", ["iteration", "iteration=iteration"])
def test_a_changing_python_number_withholds_the_decorator(argument: str) -> None:
    source = STEP.replace("{argument}", argument)
    [finding] = check_source(textwrap.dedent(source), select=["TFR302"])
    assert finding.fix is None
    assert "line 20 calls the step with the Python number `iteration`" in finding.message
    assert "pass `tf.constant(iteration)` there" in finding.message
    assert fix_source(source, select=["TFR302"], unsafe_fixes=True) == source


def test_arithmetic_on_the_loop_counter_withholds_the_decorator() -> None:
    source = STEP.replace("{argument}", "step + 1").replace(
        "    for x, y in batches:", "    for step, (x, y) in enumerate(batches):"
    )
    [finding] = check_source(textwrap.dedent(source), select=["TFR302"])
    assert finding.fix is None
    assert "the Python int `step`" in finding.message


def test_the_number_passed_as_a_tensor_is_decorated() -> None:
    source = STEP.replace("{argument}", "tf.constant(iteration)")
    fixed = fix_source(source, select=["TFR302"])
    assert "@tf.function\ndef train_step" in fixed
