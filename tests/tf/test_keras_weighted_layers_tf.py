"""The table of Keras layers that create variables, measured again on the
installed Keras, and what TFR204 reports about a layer built in traced code
measured under TensorFlow.

The committed `src/tfrewrite/facts/keras_weighted_layers.py` must be what
`scripts/keras_weighted_layers.py` gives now (when TensorFlow and Keras are
the versions it was generated from). A `Conv1D` built in `call` gives other
outputs on every eager call and raises under `tf.function`; weightless
layers built in `call`, and a layer created once behind `if ... is None`,
run traced as they ran eagerly. The training loop over such a model stays
eager: extracted into a `@tf.function` step it raises.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path
from types import ModuleType

import keras
import numpy as np
import pytest
import tensorflow as tf
from tests.test_layer_creation import ENCODER as LAYER_CREATION_ENCODER

from tfrewrite.api import check_source, fix_source
from tfrewrite.facts import keras_weighted_layers

from .equivalence import assert_same, load_module, load_path

pytestmark = pytest.mark.tensorflow

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "keras_weighted_layers.py"
SINGLETON = "singleton tf.Variables created on the first call"


def table_script() -> ModuleType:
    if str(SCRIPT.parent) not in sys.path:
        sys.path.insert(0, str(SCRIPT.parent))  # it imports its sibling's probes
    return load_path(SCRIPT, "keras_weighted_layers_script")


def test_the_committed_table_is_what_the_installed_keras_gives() -> None:
    recorded = (keras_weighted_layers.TENSORFLOW_VERSION, keras_weighted_layers.KERAS_VERSION)
    installed = (tf.__version__, keras.__version__)
    if installed != recorded:
        pytest.skip(
            f"the table was generated from TensorFlow {recorded[0]} (Keras {recorded[1]}); "
            f"TensorFlow {installed[0]} (Keras {installed[1]}) is installed"
        )
    script = table_script()
    weighted, seeded, undecided = script.weighted_layers()
    assert weighted == keras_weighted_layers.WEIGHTED_LAYERS, (
        "regenerate: python scripts/keras_weighted_layers.py"
    )
    assert seeded == keras_weighted_layers.SEED_ONLY_LAYERS
    assert undecided == keras_weighted_layers.UNDECIDED_LAYERS
    rendered = script.render(*installed, weighted, seeded, undecided)
    assert rendered == Path(keras_weighted_layers.__file__).read_text()


def _tfr204(source: str) -> list[int]:
    return [f.start.line for f in check_source(textwrap.dedent(source), select=["TFR204"])]


ENCODER = LAYER_CREATION_ENCODER.format(package="tensorflow.keras")


def test_a_conv_built_in_call_differs_per_eager_call_and_raises_traced() -> None:
    assert _tfr204(ENCODER) == [13]
    module = load_module(ENCODER)
    x = tf.random.stateless_uniform((2, 9, 3), seed=(1, 2))
    encoder = module.Encoder(4)
    first, second = encoder(x), encoder(x)
    assert not np.allclose(first.numpy(), second.numpy())  # fresh weights each call
    with pytest.raises(ValueError, match=SINGLETON):
        tf.function(module.Encoder(4))(x)


DROPOUT = """
import tensorflow as tf


class Block(tf.keras.layers.Layer):
    def call(self, x):
        return tf.keras.layers.Dropout(0.5)(x, training=True)
"""


def test_a_keras_3_dropout_built_in_call_raises_traced() -> None:
    """Its seed generator's state is a `tf.Variable`, created on construction."""
    assert _tfr204(DROPOUT) == [7]
    block = load_module(DROPOUT).Block()
    assert block(tf.ones((2, 4))).shape == (2, 4)
    with pytest.raises(ValueError, match=SINGLETON):
        tf.function(block)(tf.ones((2, 4)))


WEIGHTLESS = """
import tensorflow as tf
from tensorflow.keras import layers


class Head(tf.keras.layers.Layer):
    def call(self, x):
        h = layers.MaxPool1D(pool_size=3, strides=3)(x)
        h = layers.Activation("relu")(h)
        h = layers.Concatenate()([h, h])
        h = layers.Reshape((-1,))(h)
        return layers.Flatten()(h)
"""


def test_weightless_layers_built_in_call_run_traced_as_eagerly() -> None:
    assert _tfr204(WEIGHTLESS) == []
    module = load_module(WEIGHTLESS)
    traced = tf.function(module.Head())
    for shape in ((2, 9, 3), (3, 12, 3), (2, 6, 5)):  # each a new trace
        x = tf.random.stateless_normal(shape, seed=(3, 4))
        assert_same(module.Head()(x), traced(x), what=str(shape))


LAZY = """
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


def test_a_layer_created_once_behind_a_guard_runs_traced() -> None:
    """The documented singleton pattern: created on the first trace only,
    then the same weights on every call and every later trace."""
    assert _tfr204(LAZY) == []
    lazy = load_module(LAZY).Lazy()
    x = tf.random.stateless_normal((2, 6, 3), seed=(5, 6))
    first = lazy(x)
    assert_same(first, lazy(x))
    assert lazy(tf.ones((3, 9, 3))).shape == (3, 7, 4)  # a retrace keeps the layer
    assert len(lazy.conv.weights) == 2


LOOP = """
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
    x = tf.random.stateless_normal((8, 10, 3), seed=(1, 1))
    y = tf.random.stateless_normal((8, 1), seed=(2, 2))
    losses = []
    for step in range(3):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(net(x) - y))
        grads = tape.gradient(loss, net.trainable_variables)
        optimizer.apply_gradients(zip(grads, net.trainable_variables))
        losses.append(float(loss))
    return losses
"""


def test_the_loop_over_a_model_building_a_conv_in_call_stays_eager() -> None:
    """Extracted into a `@tf.function` step (what TFR303 alone would write),
    the loop raises; with TFR204 reporting `Net.call`, the extraction is
    refused and the loop runs as it did."""
    extracted = fix_source(textwrap.dedent(LOOP), select=["TFR303"], unsafe_fixes=True)
    assert "@tf.function" in extracted
    with pytest.raises(ValueError, match=SINGLETON):
        load_module(extracted).main()
    fixed = fix_source(textwrap.dedent(LOOP), select=["TFR3", "TFR204"], unsafe_fixes=True)
    assert "@tf.function" not in fixed
    assert len(load_module(fixed).main()) == 3
