"""A loss that prints its inputs for debugging.

Under `@tf.function` the `print` fires once, while tracing, and shows
`Tensor("y_pred:0", ...)` instead of values. TFR103 rewrites it to `tf.print`,
which runs on every call and prints the values.
"""

import tensorflow as tf


@tf.function
def debug_loss(y_true, y_pred):
    error = y_true - y_pred
    print("error:", error)
    print(f"mean abs error {tf.reduce_mean(tf.abs(error))}")
    print("tracing debug_loss")  # a trace-time message: left alone
    return tf.reduce_mean(tf.square(error))


if __name__ == "__main__":
    y_true = tf.constant([1.0, 2.0, 3.0])
    for step in range(3):
        debug_loss(y_true, y_true * (1.0 + 0.1 * step))
