"""TFR301 on a loss a script hands a trainer's constructor: the trainer
keeps it (`self.loss_fn = loss_fn`) and its undecorated step calls it in
the tape, so the loss's decorator compiles only the loss. What `__init__`
keeps is what every call site passes there (`param_functions`); a
trainer one site builds with another loss, or with no loss, learns nothing."""

from __future__ import annotations

from pathlib import Path

from tests.handed_losses import FILES, SCRIPT
from tests.projects import check_project, found_lines


def test_a_loss_handed_to_the_trainer_is_a_loss(tmp_path: Path) -> None:
    found = check_project(tmp_path, FILES, ("TFR301", "TFR302"))
    assert found_lines(found) == [("losses.py", 4), ("trainer.py", 10)]


def test_a_site_passing_something_else_leaves_the_parameter_unknown(tmp_path: Path) -> None:
    other = SCRIPT.replace(
        "return trainer.fit(batches, 2)",
        (
            "trainer.fit(batches, 2)\n"
            "    return Trainer(model, loss_fn=lambda p, t: p - t).fit(batches, 1)"
        ),
    )
    files = {**FILES, "script.py": other}
    found = check_project(tmp_path, files, ("TFR301",))
    assert found_lines(found) == []


# A model keeping its default loss: a string default its constructor
# replaces with a decorated loss of the module before keeping it.
DEFAULT_LOSS = """
import tensorflow as tf


@tf.function
def sse(y_true, y_pred):
    return tf.reduce_sum(tf.square(y_true - y_pred), axis=1)


class AutoEncoder:
    def __init__(self, loss="default"):
        if loss == "default":
            loss = sse
        self.loss = loss
        self.net = tf.keras.layers.Dense(2)
        self.optimizer = tf.keras.optimizers.SGD(0.1)

    def train_step(self, x):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(self.loss(x, self.net(x)))
        grads = tape.gradient(loss, self.net.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.net.trainable_variables))

    def epoch(self, batches):
        for x in batches:
            self.train_step(x)
"""


def test_a_default_the_constructor_keeps_is_a_loss(tmp_path: Path) -> None:
    found = check_project(tmp_path, {"model.py": DEFAULT_LOSS}, ("TFR301", "TFR302"))
    assert [(f.code, f.start.line) for f in found] == [("TFR301", 4), ("TFR302", 17)]
