"""TFR108 on a `for` loop over a tensor in code Keras traces: Keras 3 runs
`call`, compiled losses and `train_step` without AutoGraph, so the loop
that a `@tf.function` would convert raises there (`facts.tensor_iteration.
tensor_loops`)."""

from __future__ import annotations

import textwrap

from tfrewrite.api import check_source

MODEL = """
    import tensorflow as tf


    class Pooled(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.blocks = [tf.keras.layers.Dense(4), tf.keras.layers.Dense(4)]
            self.head = tf.keras.layers.Dense(1)

        @staticmethod
        def ends(x):
            _, _, count = tf.unique_with_counts(tf.cast(x[:, 0], tf.int32))
            return tf.cumsum(count)

        def call(self, inputs):
            total = tf.zeros_like(inputs)
            for {target} in {iterable}:
                total = total + {body}
            return self.head(total)
"""


def _lines(target: str, iterable: str, body: str) -> list[int]:
    source = textwrap.dedent(MODEL.format(target=target, iterable=iterable, body=body))
    return [f.start.line for f in check_source(source.lstrip(), select=["TFR108"])]


def test_a_loop_over_a_helpers_tensor_in_call_is_reported():
    assert _lines("end", "self.ends(inputs)", "tf.cast(end, tf.float32)") == [17]


def test_a_loop_over_an_ops_tensor_in_call_is_reported():
    assert _lines("i", "tf.range(3)", "tf.cast(i, tf.float32)") == [17]


def test_a_loop_over_the_layers_it_holds_is_not_reported():
    assert _lines("block", "self.blocks", "block(inputs)") == []


def test_a_loop_over_call_inputs_is_not_reported():
    # Keras hands `call` what its caller gave: often a list of inputs.
    assert _lines("x", "inputs", "x") == []


def test_a_loop_over_a_tensor_in_a_tf_function_is_left_to_autograph():
    source = """
        import tensorflow as tf

        @tf.function
        def total(x):
            s = tf.constant(0.0)
            for i in tf.range(3):
                s += tf.cast(i, tf.float32)
            return s + x
    """
    assert check_source(textwrap.dedent(source).lstrip(), select=["TFR108"]) == []
