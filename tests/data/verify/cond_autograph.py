import tensorflow as tf

MARGIN = 0.5  # the threshold


def clipped_loss(y_true, y_pred):
    error = tf.reduce_mean(tf.abs(y_true - y_pred))  # mean absolute error
    if error > 0.3:
        loss = error * MARGIN
    else:
        loss = tf.square(error)
    return loss


if __name__ == "__main__":
    clipped_loss(tf.ones([2]), tf.zeros([2]))
