"""TFR304 on a step whose tape differentiates a variable the code made for
its input (`image = tf.Variable(content)`, then `tape.gradient(loss,
image)` in a texture synthesis or style transfer): the step updates the
image, and the feature network it runs stays frozen, in inference mode by
design. A step whose callers hand it a model's variables trains that model."""

from __future__ import annotations

import textwrap

from tfrewrite.api import check_source

SCRIPT = """
import tensorflow as tf

model = tf.keras.applications.VGG19(include_top=False, weights=None)
opt = tf.keras.optimizers.Adam(0.02)


def features(image):
    return model(image[None])


@tf.function
def train_step(image, target):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((features(image) - target) ** 2)
        loss += tf.reduce_mean((model(image[None]) - target) ** 2)
    grad = tape.gradient(loss, image)
    opt.apply_gradients([(grad, image)])


{driver}
"""

IMAGE = """
image = tf.Variable(tf.zeros((64, 64, 3)))
for _ in range(10):
    train_step(image, tf.zeros((1, 2, 2, 512)))
"""

WEIGHTS = """
for _ in range(10):
    train_step(model.trainable_variables, tf.zeros((1, 2, 2, 512)))
"""


def _lines(driver: str) -> list[int]:
    source = textwrap.dedent(SCRIPT.format(driver=driver))
    return sorted(f.start.line for f in check_source(source, select=["TFR304"]))


def test_a_step_updating_the_input_variable_trains_no_model() -> None:
    assert _lines(IMAGE) == []


def test_a_step_handed_a_models_variables_trains_it() -> None:
    assert _lines(WEIGHTS) == [9, 16]


def test_a_parameter_no_call_in_the_file_fills_may_hold_anything() -> None:
    assert _lines("") == [9, 16]
