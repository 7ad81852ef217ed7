"""TFR304 and a step handed a model that a script chooses by a branch:
`training=True` changes nothing only when it changes nothing for every
model the name may hold. A `tf.Module` whose own `__call__` swallows
keyword arguments (`**kwargs`) and runs only `Dense` layers ignores it
like a Keras model that takes none."""

from __future__ import annotations

import textwrap

from tfrewrite.api import check_source

SOURCE = textwrap.dedent(
    """
    import tensorflow as tf


    class Plain(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = tf.keras.layers.Dense(1)

        def call(self, x):
            return self.dense(x)


    class Normed(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = tf.keras.layers.Dense(1)
            self.norm = tf.keras.layers.BatchNormalization()

        def call(self, x):
            return self.norm(self.dense(x))


    class Perceptron(tf.Module):
        def __init__(self):
            super().__init__()
            self.dense = tf.keras.layers.Dense(1)

        def __call__(self, x, *args, **kwargs):
            return self.dense(x)


    @tf.function
    def train_step(model, optimizer, x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))


    def main(kind, batches):
        if kind == "plain":
            model = Plain()
        else:
            model = CHOSEN()
        optimizer = tf.keras.optimizers.SGD()
        for x, y in batches:
            train_step(model, optimizer, x, y)
    """
)


def test_a_model_the_branch_may_choose_with_batch_normalization_is_reported() -> None:
    [finding] = check_source(SOURCE.replace("CHOSEN", "Normed"), select=["TFR304"])
    assert "`model(...)`" in finding.message


def test_every_model_ignoring_training_is_not_reported() -> None:
    assert check_source(SOURCE.replace("CHOSEN", "Perceptron"), select=["TFR304"]) == []


def test_a_module_swallowing_keywords_and_running_dense_layers_is_not_reported() -> None:
    source = SOURCE.replace("CHOSEN", "Perceptron").replace("model = Plain()", "model = None")
    assert check_source(source, select=["TFR304"]) == []
