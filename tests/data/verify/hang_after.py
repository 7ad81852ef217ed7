import tensorflow as tf

MARGIN = 0.5  # the threshold


def clipped_loss(y_true, y_pred):
    error = tf.reduce_mean(tf.abs(y_true - y_pred))
    while True:  # a rewrite that never returns
        pass
    return error
