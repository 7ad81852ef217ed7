import tensorflow as tf


@tf.function
def step(x):
    loss = tf.reduce_sum(x)
    print("loss %s at %d" % (loss, 3))
    print(f"loss {loss}")
    return loss


PROBES = [("step", (tf.ones([3]),))]
