"""TFR204 for Keras layers built in traced code: a layer class that creates
variables when it is built and first called (`Conv1D`, `Dense`, Keras 3's
`Dropout` and its seed), constructed in a `call` or a `tf.function`, is
reported; weightless layers, layers built in `__init__`/`build`, and layers
built once behind a guard are not. Which classes create variables is the
table `facts/keras_weighted_layers.py`, measured on Keras
(`tests/tf/test_keras_weighted_layers_tf.py`)."""

from __future__ import annotations

import textwrap

import pytest

from tfrewrite.api import check_source, fix_source
from tfrewrite.facts.keras_weighted_layers import (
    SEED_ONLY_LAYERS,
    UNDECIDED_LAYERS,
    WEIGHTED_LAYERS,
)
from tfrewrite.facts.vocabulary import creates_variables, weighted_layer


def _check(source: str) -> list[tuple[int, str]]:
    return [
        (f.start.line, f.message) for f in check_source(textwrap.dedent(source), select=["TFR204"])
    ]


ENCODER = """
import tensorflow as tf
from {package} import layers


class Encoder(tf.keras.layers.Layer):
    def __init__(self, dim):
        super(Encoder, self).__init__()
        self._pool = layers.MaxPool1D(pool_size=3, strides=3)
        self._dim = dim

    def call(self, x):
        h = layers.Conv1D(filters=self._dim, kernel_size=3, activation=tf.nn.relu)(x)
        h = self._pool(h)
        return layers.Flatten()(h)
"""


@pytest.mark.parametrize(
    "package", ["tensorflow.keras", "tensorflow.python.keras", "keras", "tf_keras"]
)
def test_a_weighted_layer_built_in_call_is_reported_under_every_keras_spelling(
    package: str,
) -> None:
    found = _check(ENCODER.format(package=package))
    assert len(found) == 1, found
    line, message = found[0]
    assert line == 13
    assert "`Conv1D` layer is built on every call of traced `Encoder.call`" in message
    assert "singleton tf.Variables" in message
    assert "build the layer once in `__init__` or `build` and call it here" in message


def test_the_finding_has_no_fix() -> None:
    source = textwrap.dedent(ENCODER.format(package="tensorflow.keras"))
    assert fix_source(source, select=["TFR204"], unsafe_fixes=True) == source


def test_a_layer_built_in_a_tf_function_through_its_full_name_is_reported() -> None:
    found = _check(
        """
        import tensorflow as tf

        @tf.function
        def project(x):
            return tf.keras.layers.Dense(4)(x)
        """
    )
    assert [line for line, _ in found] == [6]
    assert "`Dense` layer" in found[0][1]


def test_a_layer_assigned_then_called_is_reported_where_it_is_built() -> None:
    found = _check(
        """
        import keras

        class Block(keras.layers.Layer):
            def call(self, x):
                norm = keras.layers.LayerNormalization()
                return norm(x)
        """
    )
    assert [line for line, _ in found] == [6]


def test_dropout_built_in_call_is_reported_for_its_seed_variable() -> None:
    """Keras 3's `Dropout` creates a seed generator's variable when it is
    constructed: traced, that raises like a weight does."""
    found = _check(
        """
        import tensorflow as tf

        class Block(tf.keras.layers.Layer):
            def call(self, x, training=False):
                return tf.keras.layers.Dropout(0.5)(x, training=training)
        """
    )
    assert len(found) == 1
    assert "random seed generator (Keras 3)" in found[0][1]


def test_keras_2_dropout_has_no_seed_variable() -> None:
    assert weighted_layer("tf_keras.layers.Dropout") is None
    assert weighted_layer("tf_keras.layers.Dense") == "Dense"
    assert weighted_layer("tensorflow.keras.layers.Dropout") == "Dropout"


@pytest.mark.parametrize(
    "call",
    [
        "layers.Flatten()(x)",
        "layers.MaxPool1D(3, 3)(x)",
        'layers.Activation("relu")(x)',
        "layers.Concatenate()([x, x])",
        "layers.Reshape((-1,))(x)",
        "layers.GlobalAveragePooling1D()(x)",
    ],
)
def test_a_weightless_layer_built_in_call_is_not_reported(call: str) -> None:
    source = """
        import tensorflow as tf
        from tensorflow.keras import layers

        class Head(tf.keras.layers.Layer):
            def call(self, x):
                return CALL
        """
    assert _check(source.replace("CALL", call)) == []


def test_layers_built_in_init_and_build_are_not_reported() -> None:
    assert (
        _check(
            """
            import tensorflow as tf
            from tensorflow.keras import layers

            class Net(tf.keras.Model):
                def __init__(self):
                    super().__init__()
                    self.conv = layers.Conv1D(4, 3)

                def build(self, input_shape):
                    self.head = layers.Dense(1)

                def call(self, x):
                    return self.head(layers.Flatten()(self.conv(x)))
            """
        )
        == []
    )


def test_a_layer_created_once_behind_a_guard_is_not_reported() -> None:
    assert (
        _check(
            """
            import tensorflow as tf
            from tensorflow.keras import layers

            class Lazy(tf.Module):
                def __init__(self):
                    self.conv = None

                @tf.function
                def __call__(self, x):
                    if self.conv is None:
                        self.conv = layers.Conv1D(4, 3)
                    return self.conv(x)
            """
        )
        == []
    )


def test_a_layer_built_in_untraced_code_is_not_reported() -> None:
    assert (
        _check(
            """
            import tensorflow as tf

            def make_model():
                return tf.keras.Sequential([tf.keras.layers.Dense(4), tf.keras.layers.Dense(1)])
            """
        )
        == []
    )


def test_the_training_loop_over_such_a_model_is_not_extracted() -> None:
    """TFR303's extraction would trace `Net.call`, which builds `Conv1D`:
    the finding without a fix in a function the step reaches refuses it."""
    source = textwrap.dedent(
        """
        import tensorflow as tf
        from tensorflow.keras import layers


        class Net(tf.keras.Model):
            def __init__(self):
                super().__init__()
                self.head = layers.Dense(1)

            def call(self, x):
                h = layers.Conv1D(filters=4, kernel_size=3, activation=tf.nn.relu)(x)
                return self.head(layers.Flatten()(h))


        def main():
            net = Net()
            optimizer = tf.keras.optimizers.SGD(0.01)
            x = tf.random.normal((8, 10, 3))
            y = tf.random.normal((8, 1))
            for step in range(3):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(net(x) - y))
                grads = tape.gradient(loss, net.trainable_variables)
                optimizer.apply_gradients(zip(grads, net.trainable_variables))
                print(step, float(loss))
        """
    )
    found = {f.code: f for f in check_source(source, select=["TFR3", "TFR204"])}
    assert found["TFR204"].start.line == 12
    assert "line 12 in `Net.call`: TFR204" in found["TFR303"].message
    fixed = fix_source(source, select=["TFR3", "TFR204"], unsafe_fixes=True)
    assert "@tf.function" not in fixed
    assert "for step in range(3):\n        with tf.GradientTape() as tape:" in fixed


def test_the_table_holds_what_the_rule_relies_on() -> None:
    assert {"Conv1D", "Dense", "LSTM", "Embedding", "BatchNormalization"} <= WEIGHTED_LAYERS
    assert SEED_ONLY_LAYERS <= WEIGHTED_LAYERS
    weightless = {"Flatten", "MaxPool1D", "Activation", "Concatenate", "Reshape", "Add"}
    assert not weightless & (WEIGHTED_LAYERS | set(UNDECIDED_LAYERS))
    assert creates_variables("tensorflow.keras.layers.Conv1D") == "a Keras `Conv1D` layer"
    assert creates_variables("tensorflow.keras.layers.Flatten") is None
    assert weighted_layer("tensorflow.keras.models.Dense") is None  # not a layer path
