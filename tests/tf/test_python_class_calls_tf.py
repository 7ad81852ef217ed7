"""Why decorating a step that builds a plain Python object is not a safe fix:
the class's code runs at trace time on symbolic tensors. Eagerly the step
runs; traced, the same step fails (`tfrewrite` offers the decoration only as
an unsafe fix, which `verify` then judges)."""

from __future__ import annotations

import importlib.util
import textwrap

import pytest
from tests.test_python_class_calls import DECODER

pytestmark = pytest.mark.tensorflow

STEP = """
net = tf.keras.Sequential([tf.keras.layers.Dense(1)])
sgd = tf.keras.optimizers.SGD(0.1)


def fit_batch(rows):
    features, labels = Decoder(rows).values()
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((net(features, training=True) - labels) ** 2)
    grads = tape.gradient(loss, net.trainable_variables)
    sgd.apply_gradients(zip(grads, net.trainable_variables))
    return loss
"""


def test_the_step_runs_eagerly_and_fails_traced(tmp_path) -> None:
    import tensorflow as tf

    path = tmp_path / "decoded_step.py"
    path.write_text(textwrap.dedent(DECODER).lstrip() + STEP)
    spec = importlib.util.spec_from_file_location("decoded_step", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    rows = tf.constant(["1 2 3", "4 5 6"])
    assert float(module.fit_batch(rows)) >= 0.0
    with pytest.raises(AttributeError, match="numpy"):
        tf.function(module.fit_batch)(rows)


def test_a_method_of_a_plain_object_built_around_the_step_fails_traced(tmp_path) -> None:
    """The shape `test_python_class_calls` refuses to decorate: the object's
    method iterates the batch and reads `.numpy()`, which only runs eagerly."""
    import tensorflow as tf
    from tests.test_python_class_calls import CLOSURE_STEP, FLIPPER

    path = tmp_path / "flipping_step.py"
    step_source = textwrap.dedent(CLOSURE_STEP).replace("from flipping import Flipper\n", "")
    path.write_text(textwrap.dedent(FLIPPER).lstrip() + step_source)
    spec = importlib.util.spec_from_file_location("flipping_step", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    data = [(tf.ones((2, 3)), tf.ones((2, 1)))] * 2
    module.train(data)  # eager: runs
    flipper = module.Flipper()
    with pytest.raises((AttributeError, NotImplementedError, TypeError)):
        tf.function(lambda x: flipper.flip_batch(x))(tf.ones((2, 3)))
