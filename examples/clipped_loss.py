"""Python control flow on tensors inside a traced loss.

This works only because AutoGraph rewrites the `if` at trace time; with
`tf.function(autograph=False)` it fails. TFR101 rewrites it into `tf.cond`.
"""

import tensorflow as tf


@tf.function
def clipped_loss(y_true, y_pred):
    error = tf.reduce_mean(tf.abs(y_true - y_pred))
    if error > 1.0:
        # Large errors: switch to a linear penalty.
        return error - 0.5
    return 0.5 * error * error


def huberish(y_true, y_pred):
    diff = tf.reduce_max(tf.abs(y_true - y_pred))
    scale = 1.0
    if diff > 2.0:
        scale = 2.0 / diff
    return tf.reduce_mean(tf.square((y_true - y_pred) * scale))


if __name__ == "__main__":
    import numpy as np
    from tensorflow import keras

    model = keras.Sequential([keras.Input(shape=(3,)), keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss=huberish)
    x = np.random.rand(32, 3).astype("float32")
    model.fit(x, x.sum(axis=1, keepdims=True), epochs=1, verbose=0)
    print(float(clipped_loss(tf.constant([0.0, 3.0]), tf.constant([0.0, 0.0]))))
