"""A loss with two tracing hazards, each after non-ASCII text on its line."""

import numpy as np
import tensorflow as tf


@tf.function
def noisy_loss(y_true, y_pred):
    print("λ😀 y_pred =", y_pred)
    tag, noise = "σ😀", np.random.normal(0.0, 0.1, size=(3,))
    return tf.reduce_mean(tf.square(y_true + noise - y_pred))
