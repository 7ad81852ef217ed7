import numpy as np
import tensorflow as tf


@tf.function
def pick(x):
    i = np.random.randint(0, 3)
    return x[i]


PROBES = [("pick", (tf.constant([1.0, 2.0, 3.0]),))]
RANDOM = {"pick"}
