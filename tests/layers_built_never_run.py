"""A block that builds a batch normalization in `__init__` and never runs
it, a model holding such blocks and a list of `Dense` layers it fills in a
loop, and the train step calling the model without `training=True`. Shared
by the source and TensorFlow tests."""

MODEL = """
import tensorflow as tf


class Block(tf.keras.layers.Layer):
    def __init__(self, units):
        super().__init__()
        self.norm = tf.keras.layers.BatchNormalization()
        self.dense = tf.keras.layers.Dense(units, activation="relu")

    def call(self, x):
        return self.dense(x)


class Net(tf.keras.Model):
    def __init__(self, sizes):
        super().__init__()
        self.block = Block(8)
        self.hidden = []
        for units in sizes:
            self.hidden.append(tf.keras.layers.Dense(units, activation="relu"))
        self.out = tf.keras.layers.Dense(1)

    def call(self, x):
        x = self.block(x)
        for layer in self.hidden:
            x = layer(x)
        return self.out(x)


net = Net([4, 4])
optimizer = tf.keras.optimizers.SGD(0.1)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(net(x) - y))
    grads = tape.gradient(loss, net.trainable_variables)
    optimizer.apply_gradients(zip(grads, net.trainable_variables))
    return loss
"""
