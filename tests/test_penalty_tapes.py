"""TFR304 asks which tape records a model call and what that tape trains. A
call under `with tape.stop_recording():` is not recorded by that tape, and
a gradient penalty's own tape differentiates the critic with respect to the
inputs it watches: it trains nothing, so the critic call there is not a
train step's call. The step's own tapes still report their calls."""

from __future__ import annotations

import textwrap

from tfrewrite.api import check_source

STEP = """
import tensorflow as tf

generator = tf.keras.Sequential([tf.keras.layers.Dense(4), tf.keras.layers.Dropout(0.3)])
critic = tf.keras.Sequential([tf.keras.layers.Dropout(0.3), tf.keras.layers.Dense(1)])
g_opt = tf.keras.optimizers.Adam()
c_opt = tf.keras.optimizers.Adam()


def train_step(real, z):
    with tf.GradientTape() as g_tape, tf.GradientTape() as c_tape:
        fake = generator(z)
        score = critic(real) - critic(fake)
        with g_tape.stop_recording():
            with c_tape.stop_recording():
                mix = tf.random.uniform([]) * real + (1.0 - tf.random.uniform([])) * fake
                with tf.GradientTape() as penalty_tape:
                    penalty_tape.watch(mix)
                    mixed = critic(mix)
                slope = penalty_tape.gradient(mixed, [mix])
        c_loss = tf.reduce_mean(score) + tf.reduce_mean(tf.square(slope[0]))
        g_loss = -tf.reduce_mean(critic(fake))
    g_opt.apply_gradients(zip(g_tape.gradient(g_loss, generator.variables), generator.variables))
    c_opt.apply_gradients(zip(c_tape.gradient(c_loss, critic.variables), critic.variables))
"""


def test_a_penalty_tape_and_stopped_recording_train_no_model() -> None:
    lines = [f.start.line for f in check_source(textwrap.dedent(STEP), select=["TFR304"])]
    assert lines == [12, 13, 13, 22]  # not the penalty's `critic(mix)` on line 19


def test_without_stop_recording_the_step_tape_records_the_penalty_call() -> None:
    """Written inside the critic's tape with no pause, the penalty's call is
    recorded by it, and reported with the others."""
    source = textwrap.dedent(STEP).replace(
        "        with g_tape.stop_recording():\n", "        if True:\n"
    )
    source = source.replace("            with c_tape.stop_recording():\n", "            if True:\n")
    lines = [f.start.line for f in check_source(source, select=["TFR304"])]
    assert 19 in lines
