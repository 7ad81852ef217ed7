"""A number a setter replaces: `self.epoch = 0` in `__init__`, and `def
set_epoch(self, value): self.epoch = value` called from elsewhere (a Keras
callback, once per epoch). A traced `call` reading `self.epoch` bakes in
the value of its first trace (TFR201). A setter's argument is taken to be
what the set-up gave the attribute: a number. An attribute set up as an
object, or never set up, says nothing of what the setter stores."""

from __future__ import annotations

import textwrap

from tfrewrite.api import check_source

LOSS = """
import tensorflow as tf


class Annealed(tf.keras.losses.Loss):
    def __init__(self, warmup=5):
        super().__init__()
        self.warmup = warmup
        self.step = {initial}

    def call(self, y_true, y_pred):
        weight = tf.minimum(1.0, self.step / self.warmup)
        return tf.reduce_mean(tf.square(y_true - y_pred)) * weight

    def advance(self, count):
        self.step = count


class Advance(tf.keras.callbacks.Callback):
    def __init__(self, loss):
        super().__init__()
        self.loss = loss

    def on_epoch_begin(self, epoch, logs=None):
        self.loss.advance(epoch)
"""


def test_a_number_a_setter_replaces_is_frozen_in_the_traced_call() -> None:
    [finding] = check_source(textwrap.dedent(LOSS.format(initial="0")), select=["TFR201"])
    assert finding.start.line == 12
    assert "`self.step` is Python state (rebound in `advance`)" in finding.message


def test_an_attribute_set_up_as_an_object_says_nothing_of_the_setter() -> None:
    initial = "tf.Variable(0.0, trainable=False)"
    assert check_source(textwrap.dedent(LOSS.format(initial=initial)), select=["TFR201"]) == []
    assert check_source(textwrap.dedent(LOSS.format(initial="None")), select=["TFR201"]) == []
