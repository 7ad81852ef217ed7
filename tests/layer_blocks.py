"""Sources shared by `tests/test_layer_blocks.py` and its TF test: a
functional generator built from a block function that applies layers to its
inputs (a dense style, a convolution, `add`, and `Lambda` layers wrapping
functions of the project), trained in a traced step."""

from __future__ import annotations

SOURCE = """
import tensorflow as tf
from tensorflow.keras import layers


def normalize(parts):
    x, scale = parts
    mean = tf.reduce_mean(x, axis=[1, 2], keepdims=True)
    return (x - mean) * tf.reshape(scale, [-1, 1, 1, x.shape[-1]])


def crop(parts):
    return parts[0][:, : parts[1].shape[1], : parts[1].shape[2], :]


def block(x, style, filters):
    scale = layers.Dense(filters)(style)
    out = layers.Conv2D(filters, 3, padding="same")(x)
    out = layers.add([out, layers.Lambda(crop)([out, x])])
    out = layers.Lambda({wrapped})([out, scale])
    return {last}


def build_generator(size):
    image = layers.Input((size, size, 4))
    style = layers.Input((8,))
    x = block(image, style, 4)
    return tf.keras.Model([image, style], layers.Conv2D(3, 1)(block(x, style, 4)))


class Trainer:
    def __init__(self):
        self.generator = build_generator(8)
        self.opt = tf.keras.optimizers.SGD(0.01)

    @tf.function
    def step(self, image, style):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(self.generator([image, style]) ** 2)
        grads = tape.gradient(loss, self.generator.trainable_variables)
        self.opt.apply_gradients(zip(grads, self.generator.trainable_variables))
        return loss
"""


def source(wrapped: str = "normalize", last: str = "layers.LeakyReLU(0.2)(out)") -> str:
    return SOURCE.format(wrapped=wrapped, last=last).lstrip()
