"""A module flag read inside a `@tf.function` loss.

The flag is read while tracing, so flipping it later changes nothing: the
graph keeps the branch of the first call (0.6667 before and after the flip).
"""

import tensorflow as tf

use_absolute_error = False


@tf.function
def bad_loss(y_true, y_pred):
    if use_absolute_error:
        return tf.reduce_mean(tf.abs(y_true - y_pred))
    return tf.reduce_mean(tf.square(y_true - y_pred))


def switch_to_absolute_error() -> None:
    global use_absolute_error
    use_absolute_error = True


if __name__ == "__main__":
    y_true = tf.constant([0.0, 1.0, 2.0])
    y_pred = tf.constant([1.0, 2.0, 3.0]) * tf.constant([1.0, 1.0, 0.5])
    print(float(bad_loss(y_true, y_pred)))
    switch_to_absolute_error()
    print(float(bad_loss(y_true, y_pred)))  # unchanged: the flag froze at trace time
