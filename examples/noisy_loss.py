"""A loss that adds label noise with NumPy.

Keras traces the loss given to `compile`, so `np.random.normal` runs once, at
trace time: every batch gets the same "noise". Run `tfrewrite check` on this
file to see TFR102; `tfrewrite fix --diff` shows the `tf.random.normal` rewrite.
"""

import numpy as np
import tensorflow as tf
from tensorflow import keras


def noisy_mse(y_true, y_pred):
    # Label smoothing by jitter: fresh noise on every batch is the intent.
    noise = np.random.normal(0.0, 0.05, size=y_true.shape)
    return tf.reduce_mean(tf.square(y_true + noise - y_pred))


def build_model() -> keras.Model:
    model = keras.Sequential([keras.Input(shape=(4,)), keras.layers.Dense(1)])
    model.compile(optimizer="adam", loss=noisy_mse)
    return model


if __name__ == "__main__":
    x = np.random.rand(64, 4).astype("float32")
    y = x.sum(axis=1, keepdims=True)
    build_model().fit(x, y, epochs=2, verbose=0)
