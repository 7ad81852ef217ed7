"""A project whose trainer keeps the loss its constructor is handed
(`self.loss_fn = loss_fn`) and calls it in its step's tape, while a script
builds the trainer with a decorated loss of a third module. Shared by the
fast and the TensorFlow tests."""

LOSSES = """
import tensorflow as tf


@tf.function
def spectral_loss(predicted, target):
    gap = tf.signal.rfft(predicted) - tf.signal.rfft(target)
    return tf.reduce_mean(tf.square(tf.abs(gap)))


def unused_helper(x):
    return x
"""

TRAINER = """
import tensorflow as tf


class Trainer:
    def __init__(self, model, loss_fn=None):
        self.model = model
        self.loss_fn = loss_fn
        self.optimizer = tf.keras.optimizers.SGD(0.05)

    def train_step(self, x, y):
        with tf.GradientTape() as tape:
            loss = self.loss_fn(self.model(x, training=True), y)
        grads = tape.gradient(loss, self.model.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))
        return loss

    def fit(self, batches, epochs):
        losses = []
        for _ in range(epochs):
            for x, y in batches:
                losses.append(float(self.train_step(x, y)))
        return losses
"""

SCRIPT = """
from losses import spectral_loss
from trainer import Trainer


def run(model, batches):
    trainer = Trainer(model, loss_fn=spectral_loss)
    return trainer.fit(batches, 2)
"""

FILES = {"losses.py": LOSSES, "trainer.py": TRAINER, "script.py": SCRIPT}
