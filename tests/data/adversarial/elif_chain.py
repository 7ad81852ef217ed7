import tensorflow as tf


@tf.function
def piecewise(x):
    m = tf.reduce_mean(x)
    if m > 3.0:
        y = x * 4.0
    elif m > 2.0:
        y = x * 3.0
    elif m > 1.0:
        y = x * 2.0
    elif m > 0.0:
        y = x + 1.0
    else:
        y = -x
    return y


PROBES = [("piecewise", (tf.fill([2], v),)) for v in (4.0, 2.5, 1.5, 0.5, -1.0)]
