import numpy as np
import tensorflow as tf


@tf.function
def noisy(x):
    n = tf.constant(np.random.randn(4), dtype=tf.float32)
    return x + n


PROBES = [("noisy", (tf.ones([4]),))]
RANDOM = {"noisy"}
