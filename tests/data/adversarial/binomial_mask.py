import numpy as np
import tensorflow as tf


@tf.function
def masked(x):
    m = np.random.binomial(1, 0.5, size=(4,))
    return tf.cast(x, tf.float32) * m.astype(np.float32)


PROBES = [("masked", (tf.ones([4]),))]
RANDOM = {"masked"}
