"""TFR108 in code AutoGraph converts: a `for` over a tensor, or over
Python's `range` of a tensor bound, runs traced only through AutoGraph
(reported, no fix); a loop over `tf.range(...)`, AutoGraph's documented
idiom, is not reported. A step whose only such loop is that is still
decorated: AutoGraph runs the loop as the original did."""

from __future__ import annotations

import textwrap

from tests.autograph_loops import COLLAPSE

from tfrewrite.api import check_source, fix_source


def test_loops_over_a_tensor_and_a_tensor_range_are_reported() -> None:
    found = [(f.code, f.start.line, f.fix) for f in check_source(textwrap.dedent(COLLAPSE))]
    assert found == [("TFR108", 9, None), ("TFR108", 18, None)]


def test_a_parameter_is_not_taken_for_a_tensor_to_loop_over() -> None:
    source = """
    import tensorflow as tf


    @tf.function
    def total(values):
        result = 0.0
        for value in values:
            result += value
        return result
    """
    assert not check_source(textwrap.dedent(source), select=["TFR108"])


def test_such_a_loop_does_not_keep_a_step_from_its_decorator() -> None:
    source = """
    import tensorflow as tf

    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    optimizer = tf.keras.optimizers.SGD(0.1)


    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        worst = tf.math.top_k(tf.reshape(tf.abs(model(x) - y), [-1]), k=2).values
        total = tf.constant(0.0)
        for value in worst:
            total += value
        return loss, total


    for x, y in [(tf.ones((4, 3)), tf.zeros((4, 1)))] * 3:
        train_step(x, y)
    """
    fixed = fix_source(textwrap.dedent(source), select=["TFR108", "TFR302"])
    assert "@tf.function\ndef train_step" in fixed
