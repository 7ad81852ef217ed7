"""Builds what the train steps need: a small seeded model, an optimizer, batches."""
import keras
import numpy as np


def build():
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8, activation="relu"), keras.layers.Dense(1)])
    rng = np.random.default_rng(0)
    batches = [
        (rng.standard_normal((16, 4)).astype("float32"), rng.standard_normal((16, 1)).astype("float32"))
        for _ in range(4)
    ]
    return {"model": model, "optimizer": keras.optimizers.SGD(learning_rate=0.05), "batches": batches}
