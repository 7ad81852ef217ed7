"""TFR101 on an optimizer's step counter: `optimizer.iterations` is a
scalar integer variable that every `apply_gradients` counts up, so a Python
`if` on it in traced code is a tensor condition. The optimizer is known
from where it comes from: a Keras optimizer constructor bound to a module
name or to `self.<attr>`, or a Keras model's own `self.optimizer`."""

from __future__ import annotations

from tfrewrite.api import check_source, fix_source

MODULE_OPTIMIZER = """\
import tensorflow as tf

optimizer = tf.keras.optimizers.SGD(0.1)


@tf.function
def warmup_scale(x):
    if optimizer.iterations < 3:
        x = x * 0.5
    return x
"""

MODULE_OPTIMIZER_FIXED = """\
import tensorflow as tf

optimizer = tf.keras.optimizers.SGD(0.1)


@tf.function
def warmup_scale(x):
    x = tf.cond(optimizer.iterations < 3, lambda: x * 0.5, lambda: x)
    return x
"""

HELD_OPTIMIZER = """\
import tensorflow as tf


class Trainer:
    def __init__(self):
        self.optimizer = tf.keras.optimizers.Adam(1e-3)
        self.seen = tf.Variable(0)

    @tf.function
    def scale(self, x):
        if self.optimizer.iterations % 2 == 0:
            x = x * 2.0
        if self.seen > 1:
            x = x + 1.0
        return x
"""

HELD_OPTIMIZER_FIXED = """\
import tensorflow as tf


class Trainer:
    def __init__(self):
        self.optimizer = tf.keras.optimizers.Adam(1e-3)
        self.seen = tf.Variable(0)

    @tf.function
    def scale(self, x):
        x = tf.cond(self.optimizer.iterations % 2 == 0, lambda: x * 2.0, lambda: x)
        x = tf.cond(self.seen > 1, lambda: x + 1.0, lambda: x)
        return x
"""

MODEL_OPTIMIZER = """\
import tensorflow as tf


class Regressor(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.dense = tf.keras.layers.Dense(1)

    def call(self, x):
        return self.dense(x)

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(self(x, training=True) - y))
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        if self.optimizer.iterations % 2 == 0:
            loss = loss * 0.0
        return {"scaled_loss": loss}
"""


def test_a_module_optimizer_counter_condition_becomes_tf_cond() -> None:
    (finding,) = check_source(MODULE_OPTIMIZER, select=["TFR101"])
    assert finding.start.line == 8
    assert finding.fix is not None and finding.fix.applicability.value == "safe"
    assert fix_source(MODULE_OPTIMIZER, select=["TFR101"]) == MODULE_OPTIMIZER_FIXED


def test_an_optimizer_and_a_scalar_variable_held_on_self() -> None:
    """`tf.Variable(0)` on `self` is a scalar: its condition is rewritten, not refused."""
    assert [f.start.line for f in check_source(HELD_OPTIMIZER, select=["TFR101"])] == [11, 13]
    assert fix_source(HELD_OPTIMIZER, select=["TFR101"]) == HELD_OPTIMIZER_FIXED


def test_a_keras_models_own_optimizer_in_train_step() -> None:
    (finding,) = check_source(MODEL_OPTIMIZER, select=["TFR101"])
    assert finding.start.line == 18
    fixed = fix_source(MODEL_OPTIMIZER, select=["TFR101"])
    assert "loss = tf.cond(\n            self.optimizer.iterations % 2 == 0," in fixed


def test_an_attribute_of_another_object_stays_a_python_value() -> None:
    source = MODULE_OPTIMIZER.replace(
        "optimizer = tf.keras.optimizers.SGD(0.1)",
        "import types\n\noptimizer = types.SimpleNamespace(iterations=0)",
    )
    assert check_source(source, select=["TFR101"]) == []
