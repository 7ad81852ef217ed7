"""A model whose `call` reads its input's static batch size, trained by a
step that a Python loop calls undecorated (TFR302 decorates it): every
trace of `call` sees the whole shape of the batch it is given."""

MODEL_AND_LOOP = """
import tensorflow as tf


class Decoder(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.out = tf.keras.layers.Dense(2)

    def call(self, x):
        batch_size = x.shape[0]
        start = tf.ones((batch_size, 1))
        return self.out(tf.concat([start, x], axis=1))


model = Decoder()
optimizer = tf.keras.optimizers.SGD(0.1)


def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


def train(batches):
    losses = []
    for x, y in batches:
        losses.append(float(train_step(x, y)))
    return losses
"""
