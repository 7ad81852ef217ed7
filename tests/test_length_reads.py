"""TFR105 on `len()` of a tensor an op computes in traced code: only
AutoGraph gives the length there, so it is reported, without a fix.
`len()` of a parameter is only where every call site gives it one tensor
(or an `input_signature` does): otherwise it may hold a tuple or a list of
inputs (as Keras hands `call` and `train_step` what their caller gave; here
one an `isinstance` test checks)."""

from __future__ import annotations

import textwrap

from tests.length_reads import LENGTHS

from tfrewrite.api import check_source


def test_len_of_a_tensor_is_reported_and_len_of_a_parameter_given_a_tuple_is_not() -> None:
    """`noise_for(labels)`: every call site gives `labels` one tensor."""
    found = [(f.code, f.start.line, f.fix) for f in check_source(textwrap.dedent(LENGTHS))]
    assert found == [("TFR105", 8, None), ("TFR105", 21, None)]


def test_len_of_a_parameter_keras_hands_call_is_not_reported() -> None:
    """No call site says what `call` gets: Keras hands it a tuple of inputs
    as often as one tensor."""
    source = """
    import tensorflow as tf


    class Generator(tf.keras.Model):
        def call(self, labels):
            return tf.zeros((len(labels), 2))
    """
    assert not check_source(textwrap.dedent(source), select=["TFR105"])


def test_len_of_a_list_of_tensors_is_not_reported() -> None:
    # `tf.unstack` returns a Python list.
    source = """
    import tensorflow as tf


    @tf.function
    def count(x):
        steps = tf.unstack(x, axis=1)
        return tf.constant(len(steps))


    count(tf.ones((2, 3)))
    """
    assert not check_source(textwrap.dedent(source), select=["TFR105"])


def test_len_of_what_keras_hands_train_step_forwarded_to_a_helper_is_not_reported() -> None:
    """`train_step(data)` hands `data` on: the sites of `count` pass what
    Keras gave, a tuple of inputs as often as one tensor."""
    source = """
    import tensorflow as tf


    class Classifier(tf.keras.Model):
        def count(self, data):
            return tf.cast(len(data), tf.float32)

        def train_step(self, data):
            with tf.GradientTape() as tape:
                loss = self.count(data) * tf.add_n([tf.reduce_sum(w) for w in self.weights])
            grads = tape.gradient(loss, self.trainable_weights)
            self.optimizer.apply_gradients(zip(grads, self.trainable_weights))
            return {"loss": loss}
    """
    assert not check_source(textwrap.dedent(source), select=["TFR105"])


def test_len_of_a_slice_of_a_computed_tensor_is_reported() -> None:
    """`order = tf.argsort(scores)[::-1]`: a slice of what an op computes is
    a tensor too; an item of a parameter (a tuple of inputs) is not known."""
    source = """
    import tensorflow as tf


    @tf.function
    def suppress(scores, inputs):
        order = tf.argsort(scores)[::-1]
        first = inputs[0]
        keep = tf.TensorArray(tf.bool, size=len(order))
        return keep, len(first)
    """
    found = [
        (f.code, f.start.line) for f in check_source(textwrap.dedent(source), select=["TFR105"])
    ]
    assert found == [("TFR105", 9)]
