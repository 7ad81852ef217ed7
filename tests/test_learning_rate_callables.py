"""A plain function given to a Keras optimizer as its learning rate is
called by the optimizer's update (`apply_gradients`), so it runs where the
step runs: traced, what it reads is frozen at the first trace. And a `self`
attribute a loop counts with (`for self.epoch in range(n)`, or `self.epoch
= e` for `e` of `range`) is rebound to a number on every iteration: state a
traced read freezes (TFR201)."""

from __future__ import annotations

from tfrewrite.api import check_source

SCHEDULED = """\
import tensorflow as tf


class Trainer:
    def __init__(self, model):
        self.model = model
        self.epoch = 0

        def learning_rate():
            if self.epoch < 1:
                return 0.1
            return 0.0

        self.optimizer = tf.keras.optimizers.SGD(learning_rate)

    @tf.function
    def step(self, x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(self.model(x, training=True) - y))
        grads = tape.gradient(loss, self.model.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))
        return loss

    def train(self, x, y, epochs):
        for self.epoch in range(epochs):
            self.step(x, y)
"""


def _lines(source: str) -> list[int]:
    return [f.start.line for f in check_source(source, select=["TFR201"])]


def test_a_callable_learning_rate_runs_in_the_traced_update() -> None:
    assert _lines(SCHEDULED) == [10]
    message = check_source(SCHEDULED, select=["TFR201"])[0].message
    assert "`self.epoch` is Python state (rebound in `train`)" in message


def test_an_attribute_set_to_a_range_counter_is_rebound_state() -> None:
    counted = SCHEDULED.replace(
        "        for self.epoch in range(epochs):\n",
        "        for e in range(epochs):\n            self.epoch = e\n",
    )
    assert _lines(counted) == [10]


def test_an_eager_step_is_not_decorated_over_its_learning_rate() -> None:
    """Eagerly the schedule follows the epoch; decorating the step would
    freeze it, so TFR302 gives no fix and says why."""
    eager = SCHEDULED.replace("    @tf.function\n", "")
    findings = {f.code: f for f in check_source(eager)}
    assert findings["TFR302"].fix is None
    # The step stays eager: the frozen read is its blocker, not a finding.
    assert "TFR201" not in findings
    assert "`self.epoch` is Python state" in findings["TFR302"].message
