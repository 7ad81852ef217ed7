"""A step that hands its tape to a helper applying the gradients
(`self._minimize(strategy, tape, optimizer, output["loss"], variables)`, a
Keras-2-era pattern) trains: what it computes in the tape is what the
helper differentiates, and the models called there without `training=True`
are reported (TFR304), in the helper methods the tape runs too."""

from __future__ import annotations

import textwrap

from tfrewrite.api import check_source
from tfrewrite.facts.index import build_index

SOURCE = """
import tensorflow as tf


class Restorer(tf.keras.Model):
    def __init__(self, generator, critic):
        super().__init__()
        self.generator = generator
        self.critic = critic

    def generator_metrics(self, sharp, blur):
        restored = self.generator(blur)
        realism = tf.reduce_mean(self.critic(restored))
        return {"loss": tf.reduce_mean(tf.abs(restored - sharp)) - realism}

    def generator_step(self, sharp, blur):
        with tf.GradientTape() as tape:
            output = self.generator_metrics(sharp, blur)
        self._minimize(tape, self.optimizer, output["loss"], self.generator.trainable_variables)
        return output

    def _minimize(self, tape, optimizer, loss, variables):
        gradients = tape.gradient(loss, variables)
        optimizer.apply_gradients(zip(gradients, variables))

    def train_step(self, data):
        blur, sharp = data
        return self.generator_step(sharp, blur)
"""


def test_a_step_handing_its_tape_to_a_helper_trains() -> None:
    index = build_index(textwrap.dedent(SOURCE), "restorer.py", "restorer")
    assert index.functions["Restorer.generator_step"].trains


def test_models_its_tape_runs_without_training_are_reported() -> None:
    findings = check_source(textwrap.dedent(SOURCE), select=["TFR304"])
    # The critic, which this tape does not train, runs in inference mode on purpose.
    assert [f.start.line for f in findings] == [12]  # the generator's call
    assert "runs in a train step's tape (`Restorer.generator_step`" in findings[0].message
