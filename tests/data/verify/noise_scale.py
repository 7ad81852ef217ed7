import numpy as np
import tensorflow as tf

NOISE_STDDEV = 0.1


def noisy_loss(y_true, y_pred):
    noise = tf.random.normal(tf.shape(y_pred), 0.0, 1.0)
    return tf.reduce_mean(tf.square(y_true - (y_pred + noise)))
