"""Sources shared by `tests/test_passed_layer_classes.py` and its TF test:
a detection head built from a backbone class its constructor is handed
(`Head(3, Backbone)`), and output convolutions a loop builds into local
names before appending them to a list the head keeps."""

from __future__ import annotations

BACKBONES = """
import tensorflow as tf


class Plain(tf.keras.layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.conv = tf.keras.layers.Conv2D(4, 3, padding="same")

    def call(self, x):
        return [self.conv(x)]


class Noisy(tf.keras.layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.conv = tf.keras.layers.Conv2D(4, 3, padding="same")
        self.drop = tf.keras.layers.Dropout(0.5)

    def call(self, x):
        return [self.drop(self.conv(x))]
"""

HEAD = """
import tensorflow as tf


class Head(tf.keras.Model):
    def __init__(self, n, backbone, **kwargs):
        super().__init__(**kwargs)
        self.backbone = backbone(name="backbone")
        self.outs = []
        for _ in range(2):
            conv = tf.keras.layers.{out}
            self.outs.append(conv)

    def call(self, x, **kwargs):
        return [out(f) for f, out in zip(self.backbone(x) * 2, self.outs)]
"""

TRAINER = """
import tensorflow as tf

from backbones import {backbone}
from head import Head


class Trainer:
    def __init__(self):
        self.head = Head(3, {backbone})
        self.opt = tf.keras.optimizers.SGD(0.1)

    @tf.function
    def step(self, x):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(self.head(x)[0])
        grads = tape.gradient(loss, self.head.trainable_variables)
        self.opt.apply_gradients(zip(grads, self.head.trainable_variables))
        return loss
"""


def project(backbone: str = "Plain", out: str = 'Conv2D(n, 1, padding="same")') -> dict[str, str]:
    return {
        "backbones.py": BACKBONES,
        "head.py": HEAD.format(out=out),
        "trainer.py": TRAINER.format(backbone=backbone),
    }
