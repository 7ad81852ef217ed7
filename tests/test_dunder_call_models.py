"""TFR304 on a Keras model class that overrides `__call__` itself: calling
its objects runs that method, not Keras' `__call__`, so `training=True`
raises `TypeError` when that `__call__` takes no `training` (nor
`**kwargs`). A model whose layers ignore the flag is no finding; one that
holds batch normalization is reported without a fix that would raise."""

from __future__ import annotations

from pathlib import Path

from tests.projects import check_project

from tfrewrite.api import check_source
from tfrewrite.findings import Finding

AGENT = """
import tensorflow as tf


class Critic(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.net = tf.keras.Sequential([{layers}])

    def __call__(self, obs{extra}):
        return tf.squeeze(self.net(obs), axis=-1)


class Agent:
    def __init__(self):
        self.critic = Critic()
        self.opt = tf.keras.optimizers.Adam()

    @tf.function
    def step(self, x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(y - self.critic(x)))
        variables = self.critic.trainable_variables
        self.opt.apply_gradients(zip(tape.gradient(loss, variables), variables))
"""

DENSE = "tf.keras.layers.Dense(4)"
NORMALIZED = "tf.keras.layers.Dense(4), tf.keras.layers.BatchNormalization()"


def test_own_call_without_training_over_dense_layers_is_no_finding() -> None:
    source = AGENT.format(layers=DENSE, extra="")
    assert check_source(source, select=["TFR304"]) == []


def test_own_call_without_training_over_batch_norm_is_reported_without_a_fix() -> None:
    source = AGENT.format(layers=NORMALIZED, extra="")
    (finding,) = check_source(source, select=["TFR304"])
    assert finding.fix is None
    assert "no fix: `Critic.__call__` takes no `training` argument" in finding.message


def test_own_call_taking_training_keeps_the_fix() -> None:
    source = AGENT.format(layers=NORMALIZED, extra=", training=None")
    (finding,) = check_source(source, select=["TFR304"])
    assert finding.fix is not None


def test_own_call_taking_any_keyword_keeps_the_fix() -> None:
    source = AGENT.format(layers=NORMALIZED, extra=", **kwargs")
    (finding,) = check_source(source, select=["TFR304"])
    assert finding.fix is not None


# -- the class in another module: the project facts judge it -----------------------------

CRITIC_MODULE = """
import tensorflow as tf


class Critic(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.net = tf.keras.layers.Dense(4)

    def __call__(self, obs{extra}):
        return self.net(obs)
"""

TRAIN_MODULE = """
import tensorflow as tf
from nets.critic import Critic


def main(ds):
    critic = Critic()
    opt = tf.keras.optimizers.Adam()
    for x, y in ds:
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(y - critic(x)))
        grads = tape.gradient(loss, critic.trainable_variables)
        opt.apply_gradients(zip(grads, critic.trainable_variables))
"""


def _check_project(tmp_path: Path, extra: str) -> list[Finding]:
    files = {
        "nets/__init__.py": "",
        "nets/critic.py": CRITIC_MODULE.format(extra=extra),
        "train.py": TRAIN_MODULE,
    }
    return check_project(tmp_path, files, ("TFR304",))


def test_own_call_of_a_class_of_another_module_without_training(tmp_path: Path) -> None:
    """`Critic.__call__(self, obs)` over a `Dense`: nothing reads `training`."""
    assert _check_project(tmp_path, "") == []


def test_own_call_of_a_class_of_another_module_taking_any_keyword(tmp_path: Path) -> None:
    """With `**kwargs` a keyword binds, and where it goes is not known: reported."""
    (finding,) = _check_project(tmp_path, ", **kwargs")
    assert finding.code == "TFR304"
