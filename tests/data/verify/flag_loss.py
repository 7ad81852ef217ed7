"""A module flag read in a @tf.function loss: frozen at the first trace."""
import tensorflow as tf

USE_ABSOLUTE_ERROR = False


@tf.function
def bad_loss(y_true, y_pred):
    if USE_ABSOLUTE_ERROR:
        return tf.reduce_mean(tf.abs(y_true - y_pred))
    return tf.reduce_mean(tf.square(y_true - y_pred))


def set_absolute_error():
    global USE_ABSOLUTE_ERROR
    USE_ABSOLUTE_ERROR = True


model = None
print("training at import time")  # never runs under verify
raise SystemExit("a training script that must not be executed whole")
