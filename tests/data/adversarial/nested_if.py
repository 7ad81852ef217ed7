import tensorflow as tf


@tf.function
def loss(y_true, y_pred, margin=0.5):
    err = tf.reduce_mean(tf.abs(y_true - y_pred))
    if err > margin:
        if err > 2.0 * margin:
            value = err * 3.0
        elif err > 1.5 * margin:
            value = err * 2.0
        else:
            value = err
    else:
        value = err * 0.5
    return value


PROBES = [
    ("loss", (tf.zeros([2]), tf.fill([2], v))) for v in (2.0, 0.8, 0.6, 0.1)
]
