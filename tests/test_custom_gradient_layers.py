"""TFR304 on a model whose last layer applies a function with a custom
gradient (`@tf.custom_gradient`, returning the output and its `grad`):
such a function computes tensors and defines its gradient function, and
builds no layer, so a model of `Dense` layers ending in it computes the
same with `training=True`. A step in another module differentiating it
needs no flag; the same model with batch normalization does."""

from __future__ import annotations

from pathlib import Path

from tests.projects import check_project, found_lines

from tfrewrite.findings import Finding

NETWORK = """
    import tensorflow as tf


    class Policy(tf.keras.Model):
        def __init__(self, actions):
            super().__init__()
            self.hidden = tf.keras.layers.Dense(16, activation="relu")
            self.extra = {extra}
            self.head = Clipped(actions)

        def call(self, state):
            return self.head(self.extra(self.hidden(state)))


    class Clipped(tf.keras.layers.Layer):
        def __init__(self, outputs):
            super().__init__()
            self.outputs = outputs

        def build(self, input_shape):
            self.kernel = self.add_weight("kernel", shape=[int(input_shape[-1]), self.outputs])

        def call(self, x):
            return soft_clip(tf.matmul(x, self.kernel))


    @tf.custom_gradient
    def soft_clip(x):
        y = tf.where(tf.abs(x) > 1.0, tf.sign(x), x)

        def grad(upstream):
            slope = tf.where(tf.abs(x) > 1.0, 0.01, 1.0)
            return slope * upstream

        return y, grad
"""

AGENT = """
    import tensorflow as tf

    from nets import Policy


    class Agent:
        def __init__(self):
            self.policy = Policy(2)
            self.optimizer = tf.keras.optimizers.Adam()

        @tf.function
        def learn(self, states):
            with tf.GradientTape() as tape:
                loss = -tf.reduce_mean(self.policy(states))
            grads = tape.gradient(loss, self.policy.trainable_variables)
            self.optimizer.apply_gradients(zip(grads, self.policy.trainable_variables))
            return loss
"""


def _check(tmp_path: Path, extra: str) -> list[Finding]:
    files = {"nets.py": NETWORK.format(extra=extra), "agent.py": AGENT}
    return check_project(tmp_path, files, ("TFR304",))


def test_a_custom_gradient_function_builds_no_layer(tmp_path: Path) -> None:
    assert _check(tmp_path, 'tf.keras.layers.Dense(16, activation="tanh")') == []


def test_the_model_with_batch_normalization_is_still_reported(tmp_path: Path) -> None:
    findings = _check(tmp_path, "tf.keras.layers.BatchNormalization()")
    assert found_lines(findings) == [("agent.py", 14)]
