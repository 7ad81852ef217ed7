"""A model whose `call` defaults `training` to True, defined in one module
and trained in another's step without the flag; and one defaulting to None
beside it. Shared by the source and TensorFlow tests."""

MODELS = """
import tensorflow as tf


class Generator(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.dense = tf.keras.layers.Dense(4)
        self.norm = tf.keras.layers.BatchNormalization()

    def call(self, x, training=True):
        return self.norm(self.dense(x), training=training)


class Critic(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.dense = tf.keras.layers.Dense(4)
        self.norm = tf.keras.layers.BatchNormalization()

    def call(self, x, training=None):
        return self.norm(self.dense(x), training=training)
"""

STEP = """
import tensorflow as tf

from models import Critic, Generator

generator = Generator()
critic = Critic()
optimizer = tf.keras.optimizers.SGD(0.1)


@tf.function
def train_step(x):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(critic(generator(x))))
    variables = generator.trainable_variables + critic.trainable_variables
    optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
    return loss
"""
