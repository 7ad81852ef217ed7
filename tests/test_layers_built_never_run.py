"""TFR304 asks what a model runs, not what it builds: a batch normalization
a block builds and never calls reads no `training` flag, and neither does
a list of `Dense` layers filled in a loop (`self.hidden.append(Dense(...))`
is judged by the layer it appends). Once the block's `call` runs the
normalization, or the list holds a `Dropout`, the call is reported."""

from __future__ import annotations

import textwrap

from tests.layers_built_never_run import MODEL

from tfrewrite.api import check_source

SOURCE = textwrap.dedent(MODEL)


def test_a_model_running_no_layer_that_reads_training_is_not_reported() -> None:
    assert check_source(SOURCE, select=["TFR304"]) == []


def test_a_block_running_its_normalization_is_reported() -> None:
    source = SOURCE.replace("return self.dense(x)", "return self.norm(self.dense(x))")
    [finding] = check_source(source, select=["TFR304"])
    assert "`net(...)`" in finding.message


def test_a_list_holding_a_dropout_is_reported() -> None:
    source = SOURCE.replace(
        'self.hidden.append(tf.keras.layers.Dense(units, activation="relu"))',
        "self.hidden.append(tf.keras.layers.Dropout(0.5))",
    )
    assert len(check_source(source, select=["TFR304"])) == 1


def test_a_layer_holding_a_handed_cell_of_dense_layers_is_not_reported() -> None:
    # `Recurrence(Cell(8))` keeps the cell it is handed: what every call
    # site hands it is what it runs.
    source = textwrap.dedent(
        """
        import tensorflow as tf


        class Cell(tf.keras.layers.Layer):
            def __init__(self, units):
                super().__init__()
                self.dense = tf.keras.layers.Dense(units)

            def call(self, x):
                return self.dense(x)


        class Recurrence(tf.keras.layers.Layer):
            def __init__(self, cell):
                super().__init__()
                self.cell = cell

            def call(self, x):
                return self.cell(x)


        class Net(tf.keras.Model):
            def __init__(self):
                super().__init__()
                self.rnn = Recurrence(Cell(8))

            def call(self, x):
                return self.rnn(x)


        net = Net()


        @tf.function
        def train_step(x, y, optimizer):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(net(x) - y))
            grads = tape.gradient(loss, net.trainable_variables)
            optimizer.apply_gradients(zip(grads, net.trainable_variables))
        """
    )
    assert check_source(source, select=["TFR304"]) == []
    dropping = source.replace("return self.dense(x)", "return tf.keras.layers.Dropout(0.5)(x)")
    assert len(check_source(dropping, select=["TFR304"])) == 1
