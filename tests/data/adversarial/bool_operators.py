import tensorflow as tf


# The right operand would index out of range where the left one decides:
# it must stay lazy. `not` of a reduction, `or` with a numeric comparison.
@tf.function(autograph=False)
def first_positive(x):
    return tf.size(x) > 0 and x[0] > 0.0


@tf.function(autograph=False)
def any_negative_or_large(x):
    flag = tf.reduce_min(x) < 0.0 or tf.reduce_max(x) > 10.0
    return tf.where(flag, -x, x)


@tf.function(autograph=False)
def none_set(mask):
    return not tf.reduce_any(mask)


PROBES = [
    ("first_positive", (tf.constant([1.0, -2.0]),)),
    ("first_positive", (tf.constant([-1.0]),)),
    ("first_positive", (tf.zeros([0]),)),
    ("any_negative_or_large", (tf.constant([1.0, 2.0]),)),
    ("any_negative_or_large", (tf.constant([-1.0, 2.0]),)),
    ("any_negative_or_large", (tf.constant([1.0, 20.0]),)),
    ("none_set", (tf.constant([False, False]),)),
    ("none_set", (tf.constant([False, True]),)),
]
