"""What a Keras class hands a helper from its own Python lists
(`self.losses`, `self.trainable_variables`: measured by
`scripts/keras_list_properties.py`) is a Python value, even where the helper
is differentiated as the loss: its `if regularization_losses:` tests a list,
and stays Python code (no TFR101)."""

from __future__ import annotations

import textwrap

from tfrewrite.api import check_source
from tfrewrite.facts.keras_list_properties import LIST_PROPERTIES

SOURCE = """
import tensorflow as tf


def scaled(loss, regularization_losses=None):
    loss = tf.reduce_mean(loss)
    if regularization_losses:
        loss = loss + tf.math.add_n(regularization_losses)
    return loss


class Detector(tf.keras.Model):
    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            loss = scaled(tf.square(self(x, training=True) - y), self.{attribute})
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {{"loss": loss}}
"""


def test_a_keras_list_handed_to_a_loss_helper_is_a_python_value() -> None:
    assert {"losses", "trainable_variables", "layers"} <= LIST_PROPERTIES
    assert check_source(textwrap.dedent(SOURCE.format(attribute="losses"))) == []


def test_another_attribute_handed_there_may_be_a_tensor() -> None:
    """`self.penalty` is no Keras list: the helper's first two parameters
    stay the loss's tensors, and its `if` on one is reported (where the
    parameter has no `None` default, whose truth test asks whether it was
    given)."""
    source = SOURCE.format(attribute="penalty").replace(
        "regularization_losses=None", "regularization_losses"
    )
    [finding] = check_source(textwrap.dedent(source))
    assert finding.code == "TFR101" and finding.start.line == 7
    assert check_source(textwrap.dedent(SOURCE.format(attribute="penalty"))) == []
