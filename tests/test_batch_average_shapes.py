"""TFR306 on what a list of per-batch values becomes before it is averaged:
`np.mean(np.array(losses))` averages the same values as `np.mean(losses)`;
`sum([sum(v) for v in per_batch]) / examples` adds each batch's values up
before dividing once (the mean over examples); and an average in the
branch of an `if` that compares the last batch's entry with another's is
code that tells a short last batch apart itself."""

from __future__ import annotations

import textwrap

from tfrewrite.api import check_source, fix_source

EVALUATE = """
import numpy as np


def evaluate(model, val_batches):
    losses = []
    scores_per_batch = []
    for x, y in val_batches:
        losses.append(model.test_on_batch(x, y))
        scores_per_batch.append(np.abs(model.predict_on_batch(x) - y).ravel())
    {averages}
"""


def test_an_array_of_the_per_batch_values_is_averaged_the_same() -> None:
    source = textwrap.dedent(EVALUATE).replace("{averages}", "return np.mean(np.array(losses))")
    [finding] = check_source(source, select=["TFR306"])
    assert "`losses`" in finding.message
    fixed = fix_source(source, select=["TFR306"], unsafe_fixes=True)
    assert "np.average(np.array(losses), weights=batch_sizes)" in fixed


def test_each_batch_added_up_then_divided_once_is_the_mean_over_examples() -> None:
    averages = (
        "return sum([sum(s) for s in scores_per_batch]) / sum(len(s) for s in scores_per_batch)"
    )
    source = textwrap.dedent(EVALUATE).replace("{averages}", averages)
    assert check_source(source, select=["TFR306"]) == []


def test_an_average_the_code_guards_by_the_last_batch_is_not_reported() -> None:
    averages = """if scores_per_batch[-2].shape != scores_per_batch[-1].shape:
        return sum([sum(s) for s in scores_per_batch]) / sum(len(s) for s in scores_per_batch)
    else:
        return np.mean(scores_per_batch)"""
    source = textwrap.dedent(EVALUATE).replace("{averages}", averages)
    assert check_source(source, select=["TFR306"]) == []


FOLDS = """
import numpy as np


def cross_validate(distances, labels, {loop}):
    rates = []
    for index, (train_part, test_part) in enumerate({loop}):
        rates.append(np.mean(distances[test_part] < 0.5) == labels[test_part])
    return np.mean(np.array(rates), 0)
"""


def test_a_loop_named_for_folds_is_no_loop_over_batches() -> None:
    """`ds` names a dataset as a word of a name (`train_ds`), not inside
    one (`folds`)."""
    assert check_source(textwrap.dedent(FOLDS.format(loop="folds")), select=["TFR306"]) == []
    [finding] = check_source(textwrap.dedent(FOLDS.format(loop="val_ds")), select=["TFR306"])
    assert "`rates`" in finding.message


SAMPLER = """
import tensorflow as tf


def sample(energy, x, num_steps, step_size):
    total = 0.0
    for _ in range(num_steps):
        with tf.GradientTape() as tape:
            tape.watch(x)
            e = tf.reduce_sum(energy(x))
        grad = tape.gradient(e, x)
        total += tf.reduce_mean(tf.abs(grad))
        x = x - step_size * grad
    return x, total / num_steps
"""


def test_steps_that_move_one_input_are_no_loop_over_batches() -> None:
    """Langevin sampling differentiates its input, not variables: its steps
    run on one batch, and their average weighs each step the same."""
    assert check_source(textwrap.dedent(SAMPLER), select=["TFR306"]) == []


CRITIC = """
import tensorflow as tf


class GAN(tf.keras.Model):
    def train_step(self, batch):
        real, noise = batch
        critic_losses = []
        for _ in range(self.critic_updates):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(self.critic(self.generator(noise))) - tf.reduce_mean(
                    self.critic(real)
                )
            grads = tape.gradient(loss, self.critic.trainable_variables)
            self.c_opt.apply_gradients(zip(grads, self.critic.trainable_variables))
            critic_losses.append(loss)
        return {{"c_loss": tf.reduce_mean(critic_losses)}}
"""


def test_updates_repeated_on_one_batch_are_no_loop_over_batches() -> None:
    """A critic updated `critic_updates` times on the step's one batch: the
    mean of those losses weighs updates, not batches. A counted loop that
    draws a batch each pass (`next(batches)`) is a loop over batches."""
    assert check_source(textwrap.dedent(CRITIC.format()), select=["TFR306"]) == []
    drawing = (
        CRITIC.format()
        .replace("real, noise = batch\n", "batches = iter(batch)\n")
        .replace(
            "with tf.GradientTape", "real, noise = next(batches)\n            with tf.GradientTape"
        )
    )
    [finding] = check_source(textwrap.dedent(drawing), select=["TFR306"])
    assert "`critic_losses`" in finding.message


def test_a_list_made_afresh_in_each_pass_holds_one_batch_not_one_value_per_batch() -> None:
    # `penalties` starts empty for every batch and collects one value per
    # unrolled iteration of the model on that batch: its mean is no average
    # over batches. `batch_losses`, kept across batches, is.
    source = """
    import numpy as np
    import tensorflow as tf


    def train(model, optimizer, batches, steps):
        batch_losses = []
        for x, y in batches:
            with tf.GradientTape() as tape:
                penalties = []
                h = x
                for _ in range(steps):
                    h = model(h, training=True)
                    penalties.append(tf.reduce_sum(tf.nn.relu(-h)))
                loss = tf.reduce_mean(tf.square(h - y)) + tf.reduce_mean(penalties)
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            batch_losses.append(float(loss))
        return np.mean(batch_losses)
    """
    findings = check_source(textwrap.dedent(source), select=["TFR306"])
    assert ["`batch_losses`" in f.message for f in findings] == [True]
