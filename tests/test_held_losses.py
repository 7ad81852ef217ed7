"""Losses a class holds as attributes (`self.critic_loss = critic_loss` in
`__init__`), differentiated by steps nested in one of its methods (`fit`
defining `@tf.function def critic_step(...)`): the nested steps call through
the method's `self`, so the losses are what the tapes differentiate (TFR301
on their own decorators, redundant inside the traced steps), and what they
return is a tensor (a Keras loss object called on the spot makes one), so a
Python `if` on it is a tensor condition (TFR101)."""

from __future__ import annotations

import textwrap

from tfrewrite.api import check_source, fix_source
from tfrewrite.facts.index import build_index
from tfrewrite.facts.project import compute_facts

SOURCE = """
import keras
import tensorflow as tf


@tf.function
def reconstruction_loss(x, x_hat):
    return 10.0 * tf.math.sqrt(keras.losses.MeanSquaredError()(x, x_hat))


@tf.function
def critic_loss(real, fake):
    real_loss = keras.losses.BinaryCrossentropy(from_logits=True)(tf.ones_like(real), real)
    fake_loss = keras.losses.BinaryCrossentropy(from_logits=True)(tf.zeros_like(fake), fake)
    return real_loss + fake_loss


class Trainer:
    def __init__(self, encoder, critic):
        self.encoder = encoder
        self.critic = critic
        self.reconstruction_loss = reconstruction_loss
        self.critic_loss = critic_loss
        self.optimizer = keras.optimizers.Adam()

    def fit(self, batches):
        @tf.function
        def encoder_step(x):
            with tf.GradientTape() as tape:
                loss = self.reconstruction_loss(x, self.encoder(x))
            grads = tape.gradient(loss, self.encoder.trainable_variables)
            self.optimizer.apply_gradients(zip(grads, self.encoder.trainable_variables))
            return loss

        @tf.function
        def critic_step(x):
            with tf.GradientTape() as tape:
                loss = self.critic_loss(self.critic(x), self.critic(self.encoder(x)))
            if loss > 0.15:
                grads = tape.gradient(loss, self.critic.trainable_variables)
                self.optimizer.apply_gradients(zip(grads, self.critic.trainable_variables))
            return loss

        for x in batches:
            encoder_step(x)
            critic_step(x)
"""


def test_held_losses_of_nested_steps_are_differentiated() -> None:
    findings = check_source(textwrap.dedent(SOURCE), select=["TFR301"])
    assert [f.start.line for f in findings] == [6, 11]
    assert "the train step `encoder_step` that calls it is already traced" in findings[0].message
    fixed = fix_source(textwrap.dedent(SOURCE), select=["TFR301"])
    assert fixed.count("@tf.function") == 2  # the two steps keep theirs


def test_what_a_held_loss_returns_is_a_tensor() -> None:
    index = build_index(textwrap.dedent(SOURCE), "trainer.py", "trainer")
    compute_facts([index])
    assert index.functions["critic_loss"].returns_tensor
    assert "trainer.Trainer.critic_loss" in index.callee_tensor_results


def test_a_python_if_on_a_held_loss_result_is_a_tensor_condition() -> None:
    findings = check_source(textwrap.dedent(SOURCE), select=["TFR101"])
    assert [f.start.line for f in findings] == [39]
    assert "Python `if` on a tensor" in findings[0].message


def test_a_helper_returning_an_unpacked_op_result_returns_a_tensor() -> None:
    source = """
    import tensorflow as tf


    def counts(x):
        _, _, count = tf.unique_with_counts(x)
        return count


    def pair(x):
        first, second = x, x
        return first
    """
    index = build_index(textwrap.dedent(source), "ops.py", "ops")
    assert index.functions["counts"].returns_tensor
    assert not index.functions["pair"].returns_tensor
