"""TFR303 on a tape block under an `if` in the training loop (a delayed
actor update every few iterations): it runs eagerly too, and is reported
without a fix beside the loop's own step."""

from __future__ import annotations

import textwrap

from tfrewrite.api import check_source

SOURCE = """
import tensorflow as tf

critic = tf.keras.Sequential([tf.keras.layers.Dense(1)])
actor = tf.keras.Sequential([tf.keras.layers.Dense(1)])
critic_opt = tf.keras.optimizers.Adam(1e-3)
actor_opt = tf.keras.optimizers.Adam(1e-3)

for step, (state, target) in enumerate([(tf.ones((4, 3)), tf.zeros((4, 1)))] * 10):
    with tf.GradientTape() as critic_tape:
        critic_loss = tf.reduce_mean(tf.square(critic(state) - target))
    grads = critic_tape.gradient(critic_loss, critic.trainable_variables)
    critic_opt.apply_gradients(zip(grads, critic.trainable_variables))
    if step % 2 == 0:
        with tf.GradientTape() as actor_tape:
            actor_loss = -tf.reduce_mean(critic(actor(state)))
        grads = actor_tape.gradient(actor_loss, actor.trainable_variables)
        actor_opt.apply_gradients(zip(grads, actor.trainable_variables))
"""


def test_the_guarded_tape_is_reported_beside_the_loop_step() -> None:
    found = check_source(textwrap.dedent(SOURCE), select=["TFR303"])
    assert [(f.code, f.start.line) for f in found] == [("TFR303", 10), ("TFR303", 15)]
    guarded = found[1]
    assert guarded.fix is None and "the `if` on line 14" in guarded.message


def test_an_if_whose_branch_applies_nothing_holds_no_step() -> None:
    source = SOURCE.replace(
        "        actor_opt.apply_gradients(zip(grads, actor.trainable_variables))\n", ""
    )
    found = check_source(textwrap.dedent(source), select=["TFR303"])
    assert [f.start.line for f in found] == [10]
