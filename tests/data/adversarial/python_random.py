import random

import tensorflow as tf


@tf.function
def drop(x):
    if random.random() < 0.5:
        return x * 0.0
    return x


PROBES = [("drop", (tf.ones([3]),))]
RANDOM = {"drop"}
