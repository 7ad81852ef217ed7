import tensorflow as tf

DELTA = 1.0


class Huber:
    def __init__(self, clip=1.0):
        self.clip = clip

    @tf.function
    def __call__(self, y_true, y_pred):
        err = tf.reduce_mean(tf.abs(y_true - y_pred))
        if err > self.clip:
            err = self.clip * (err - 0.5 * self.clip)
        return err


@tf.function
def huber(y_true, y_pred):
    err = tf.reduce_mean(tf.abs(y_true - y_pred))
    if err < DELTA:
        return 0.5 * err ** 2
    return DELTA * (err - 0.5 * DELTA)


_loss = Huber()


def call_huber(y_true, y_pred):
    return _loss(y_true, y_pred)


PROBES = [
    ("huber", (tf.zeros([2]), tf.fill([2], 0.5))),
    ("huber", (tf.zeros([2]), tf.fill([2], 3.0))),
    ("call_huber", (tf.zeros([2]), tf.fill([2], 0.5))),
    ("call_huber", (tf.zeros([2]), tf.fill([2], 3.0))),
]
