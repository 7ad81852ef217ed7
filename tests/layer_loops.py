"""A layer whose `call` loops over `tf.range` of a tensor, in a module of
its own; a script that trains it with its own `@tf.function` step, and one
that hands a model holding it to Keras `fit`. Shared by the source and
TensorFlow tests."""

LAYERS = """
import tensorflow as tf


class TimeSum(tf.keras.layers.Layer):
    def __init__(self, units):
        super().__init__()
        self.dense = tf.keras.layers.Dense(units)

    def call(self, x):
        total = tf.zeros_like(x[:, 0])
        for t in tf.range(tf.shape(x)[1]):
            total += x[:, t]
        return self.dense(total)
"""

OWN_STEP = """
import tensorflow as tf

from layers import TimeSum

layer = TimeSum(1)
optimizer = tf.keras.optimizers.SGD(0.01)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(y - layer(x)))
    grads = tape.gradient(loss, layer.trainable_variables)
    optimizer.apply_gradients(zip(grads, layer.trainable_variables))
    return loss


def train(batches):
    for x, y in batches:
        train_step(x, y)
"""

KERAS_FIT = """
import tensorflow as tf

from layers import TimeSum


def train(x, y):
    model = tf.keras.Sequential([tf.keras.Input((5, 3)), TimeSum(1)])
    model.compile(optimizer="sgd", loss="mse")
    model.fit(x, y, epochs=1, verbose=0)
    return model
"""
