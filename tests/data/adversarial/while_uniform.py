import numpy as np
import tensorflow as tf


@tf.function
def loopy(x):
    while np.random.uniform() > 0.5:
        x = x + 1.0
    return x


PROBES = [("loopy", (tf.zeros([2]),))]
RANDOM = {"loopy"}
