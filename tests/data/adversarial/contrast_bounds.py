import numpy as np
import tensorflow as tf


@tf.function
def augment(img):
    c = np.random.uniform(0.5, 1.5)
    return tf.image.random_contrast(img, c, c + 0.1)


PROBES = [("augment", (tf.reshape(tf.range(48, dtype=tf.float32), [4, 4, 3]),))]
RANDOM = {"augment"}
