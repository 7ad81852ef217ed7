"""TFR203 on methods, shown under TensorFlow: a `tf.function` method called
with the loop's Python counter traces once per value, and with a tensor
once in all (the remedy the finding names)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.tensorflow


def test_a_method_called_with_a_python_counter_traces_once_per_value() -> None:
    import tensorflow as tf

    class Agent(tf.Module):
        def __init__(self) -> None:
            self.w = tf.Variable(1.0)

        @tf.function
        def act(self, x, step):
            return x * self.w + tf.cast(step, tf.float32)

    by_number, by_tensor = Agent(), Agent()
    for step in range(4):
        by_number.act(tf.ones(2), step)
        by_tensor.act(tf.ones(2), tf.constant(step))
    assert by_number.act.experimental_get_tracing_count() == 4
    assert by_tensor.act.experimental_get_tracing_count() == 1
