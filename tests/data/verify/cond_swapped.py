import tensorflow as tf

MARGIN = 0.5  # the threshold


def clipped_loss(y_true, y_pred):
    error = tf.reduce_mean(tf.abs(y_true - y_pred))
    loss = tf.cond(error > 0.3, lambda: tf.square(error), lambda: error * MARGIN)
    return loss


if __name__ == "__main__":
    clipped_loss(tf.ones([2]), tf.zeros([2]))
