import tensorflow as tf


@tf.function
def repeated(y_true, y_pred):
    rounds = 3 if tf.reduce_sum(y_true) > 0 else 1
    total = 0.0
    for _ in range(rounds):
        total += tf.reduce_mean(y_pred)
    return total


PROBES = [
    ("repeated", (tf.ones([3]), tf.ones([3]))),
    ("repeated", (-tf.ones([3]), tf.ones([3]))),
]
