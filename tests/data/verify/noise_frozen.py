import numpy as np
import tensorflow as tf

NOISE_STDDEV = 0.1


def noisy_loss(y_true, y_pred):
    noise = tf.constant(np.random.normal(0.0, NOISE_STDDEV, size=y_pred.shape), tf.float32)
    return tf.reduce_mean(tf.square(y_true - (y_pred + noise)))
