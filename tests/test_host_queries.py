"""A device picked by a host query in a traced step (`'/GPU:0' if
tf.test.is_gpu_available() else '/CPU:0'`) is a Python choice made once
per trace: `tf.test` answers with Python values, never tensors, so the
conditional is no tensor conditional (TFR101). A tensor condition beside
it still is."""

from __future__ import annotations

from pathlib import Path

from tests.projects import check_project, found_lines

STEP = """
    import tensorflow as tf


    class Agent:
        def __init__(self, critic):
            self.critic = critic
            self.optimizer = tf.keras.optimizers.Adam()

        @tf.function
        def update(self, states, targets):
            with tf.device("/GPU:0" if tf.test.is_gpu_available() else "/CPU:0"):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(self.critic(states) - targets))
                grads = tape.gradient(loss, self.critic.trainable_variables)
                self.optimizer.apply_gradients(zip(grads, self.critic.trainable_variables))
            scale = 2.0 if tf.reduce_max(targets) > 1.0 else 1.0
            return loss * scale
"""


def test_a_host_query_is_no_tensor_condition(tmp_path: Path) -> None:
    found = check_project(tmp_path, {"agent.py": STEP}, ("TFR101",))
    assert found_lines(found) == [("agent.py", 16)]
