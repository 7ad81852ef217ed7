"""A loss is what a tape differentiates, whatever it takes: TFR301 moves the
decorator of a four-argument loss (`denoise_loss(pred, noisy, clean,
scale)`) off it, as it does for `loss(y_true, y_pred)`; a library call
differentiated (`tf.reduce_sum(h)`) is no project loss."""

from __future__ import annotations

from tfrewrite.api import check_source, fix_source
from tfrewrite.facts.index import build_index

DENOISE = """\
import tensorflow as tf


@tf.function
def denoise_loss(pred, noisy, clean, scale):
    target = (noisy - clean) / tf.square(scale)
    return tf.reduce_mean(tf.square(pred + target) * tf.square(scale))


@tf.function
def step(net, opt, noisy, clean, scale):
    with tf.GradientTape() as tape:
        pred = net(noisy, training=True)
        loss = denoise_loss(pred, noisy, clean, scale)
    grads = tape.gradient(loss, net.trainable_variables)
    opt.apply_gradients(zip(grads, net.trainable_variables))
    return loss


def run(net, opt, batches):
    for clean in batches:
        step(net, opt, clean + 0.1, clean, tf.ones([1]))
"""


def test_a_four_argument_loss_differentiated_in_a_traced_step() -> None:
    (finding,) = check_source(DENOISE, select=["TFR301"])
    assert finding.start.line == 4
    assert "the train step `step` that calls it is already traced" in finding.message
    fixed = fix_source(DENOISE, select=["TFR301"])
    assert fixed == DENOISE.replace("@tf.function\ndef denoise_loss", "def denoise_loss")


def test_the_tape_records_every_arity_and_which_calls_are_label_prediction_pairs() -> None:
    index = build_index(DENOISE, "m.py", "m")
    assert [(t.callee, t.pair) for t in index.tape_losses] == [("m.denoise_loss", False)]
