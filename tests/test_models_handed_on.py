"""What a trainer keeps from its `__init__` (`self.model = model`) is what
every site building it passes there, also when that site hands on a
parameter of its own (`Classifier.__init__(self, model)` building
`Trainer(model)`, built by a script as `Classifier(Wrapper())`), and also
from files that import no TensorFlow (indexed because they build such a
holder). A Dense-only model held so computes the same with `training=True`
(no TFR304); one with dropout is reported."""

from __future__ import annotations

from pathlib import Path

from tests.projects import check_project, found_lines

MODELS = """
    import tensorflow as tf


    class Wrapper(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = tf.keras.layers.Dense(2)

        def call(self, x):
            return self.dense(x)
"""

TRAINER = """
    import tensorflow as tf


    class Trainer:
        def __init__(self, model):
            self.model = model

        @tf.function
        def train_step(self, x, y, optimizer):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(self.model(x) - y))
            grads = tape.gradient(loss, self.model.trainable_variables)
            optimizer.apply_gradients(zip(grads, self.model.trainable_variables))
            return loss
"""

CLASSIFIER = """
    from trainer import Trainer


    class Classifier:
        def __init__(self, model):
            self.model = model
            self.trainer = Trainer(model)
"""

MAIN = """
    from classifier import Classifier
    from models import Wrapper


    def main():
        return Classifier(Wrapper())
"""

FILES = {"models.py": MODELS, "trainer.py": TRAINER, "classifier.py": CLASSIFIER, "main.py": MAIN}


def test_a_model_handed_on_through_a_constructor_is_judged_by_its_class(tmp_path: Path) -> None:
    assert check_project(tmp_path, FILES, ("TFR304",)) == []


def test_a_model_with_dropout_handed_on_is_reported(tmp_path: Path) -> None:
    dropout = "\n            self.drop = tf.keras.layers.Dropout(0.5)"
    models = MODELS.replace(
        "self.dense = tf.keras.layers.Dense(2)", "self.dense = tf.keras.layers.Dense(2)" + dropout
    ).replace("return self.dense(x)", "return self.drop(self.dense(x))")
    found = check_project(tmp_path, {**FILES, "models.py": models}, ("TFR304",))
    assert found_lines(found) == [("trainer.py", 11)]
