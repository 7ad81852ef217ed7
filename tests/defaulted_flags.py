"""Sources shared by the fast and TensorFlow tests of parameters whose
default is a tensor."""

TENSOR_DEFAULT = """
import tensorflow as tf


def make_policy(layer):
    @tf.function
    def act(observation, greedy=tf.constant(False)):
        mean = layer(tf.expand_dims(observation, 0))[0]
        if greedy:
            return mean
        else:
            return mean + 1.0

    return act
"""
