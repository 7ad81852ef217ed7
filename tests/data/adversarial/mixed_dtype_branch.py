import tensorflow as tf


@tf.function
def weight(labels, logits):
    w = 1
    if tf.reduce_sum(labels) > 2:
        w = 2
    return tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels, logits)) * w


PROBES = [
    ("weight", (tf.ones([4]), tf.zeros([4]))),
    ("weight", (tf.zeros([4]), tf.zeros([4]))),
]
