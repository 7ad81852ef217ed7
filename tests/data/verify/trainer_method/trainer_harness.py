"""Builds what `Trainer.train_step` needs: the model and optimizer its
`__init__` takes, and a few batches, the last one short."""

import numpy as np
import tensorflow as tf


def build():
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(1)])
    rng = np.random.default_rng(0)
    batches = [
        (rng.normal(size=(n, 3)).astype("float32"), rng.normal(size=(n, 1)).astype("float32"))
        for n in (8, 8, 5)
    ]
    return {"model": model, "optimizer": tf.keras.optimizers.SGD(0.1), "batches": batches}
