"""Hazards found running tfrewrite on public notebooks, shown real under
TensorFlow: the step tfrewrite now leaves undecorated fails or trains the
wrong model once decorated, and runs as written eagerly."""

from __future__ import annotations

import pytest
import tensorflow as tf

from tfrewrite.api import check_source, fix_source

from .equivalence import load_file_module, load_module

pytestmark = pytest.mark.tensorflow

SECTIONS = """\
import tensorflow as tf


class Net(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.dense = tf.keras.layers.Dense(2)

    def call(self, x):
        return self.dense(x)


def train_step(net, x, optimizer):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(net(x))
    variables = net.trainable_variables
    optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
    return loss


batches = [tf.ones((2, 3)), tf.ones((2, 3))]
opt = tf.keras.optimizers.SGD(0.1)
net = Net()
for x in batches:
    train_step(net, x, opt)

opt = tf.keras.optimizers.SGD(0.1)
net = Net()
for x in batches:
    train_step(net, x, opt)
"""


def test_a_step_handed_a_second_model_fails_once_decorated(tmp_path):
    [finding] = check_source(SECTIONS, select=["TFR302"])
    assert (
        finding.fix is None and "model, optimizer or metric the step is handed" in finding.message
    )
    eager = load_file_module(SECTIONS, tmp_path, "new_objects_eager")
    assert len(eager.net.trainable_variables) == 2  # the second model trained too
    decorated = SECTIONS.replace("def train_step", "@tf.function\ndef train_step")
    with pytest.raises(Exception):  # noqa: B017, PT011 - Keras 2 and 3 raise differently
        load_file_module(decorated, tmp_path, "new_objects_traced")


def test_a_step_reading_a_rebuilt_model_trains_the_first_one_once_decorated(tmp_path):
    source = (
        SECTIONS.replace("def train_step(net, x, optimizer):", "def train_step(x):")
        .replace("train_step(net, x, opt)", "train_step(x)")
        .replace("optimizer.apply", "opt.apply")
    )
    [finding] = check_source(source, select=["TFR302"])
    assert finding.fix is None and "model, optimizer or metric the step reads" in finding.message
    eager = load_file_module(source, tmp_path, "rebuilt_eager")
    assert len(eager.net.trainable_variables) == 2
    decorated = load_file_module(
        source.replace("def train_step", "@tf.function\ndef train_step"), tmp_path, "rebuilt_traced"
    )
    # The traced step still calls the first `net`: the second is never built.
    assert decorated.net.trainable_variables == []


POSITIONAL_TRAINING = """\
import tensorflow as tf


class Transformer(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.dropout = tf.keras.layers.Dropout(0.99)

    def call(self, inp, training, mask):
        return self.dropout(inp, training=training)


transformer = Transformer()


@tf.function
def train_step(inp):
    with tf.GradientTape() as tape:
        tape.watch(inp)
        predictions = transformer(inp, True, None)
    return predictions
"""


def test_a_positional_training_flag_already_trains_and_a_keyword_would_raise(tmp_path):
    """Keras 2 hands the positional `True` to `call` (Keras 3 refuses a
    positional bool, with or without the keyword): `call` itself shows that it
    is the training flag, and that `training=True` would be given twice."""
    assert check_source(POSITIONAL_TRAINING, select=["TFR304"]) == []
    module = load_file_module(POSITIONAL_TRAINING, tmp_path, "positional_training")
    ones = tf.ones((1, 200))
    dropped = module.transformer.call(ones, True, None) == 0.0
    assert float(tf.reduce_sum(tf.cast(dropped, tf.float32))) > 100  # dropout is on
    with pytest.raises(TypeError, match="multiple values"):
        module.transformer.call(ones, True, None, training=True)


BACKBONE_STEP = """\
import tensorflow as tf

SEEN = []


class Probe(tf.keras.layers.Layer):
    def call(self, inputs, training=None):
        SEEN.append(training)
        return inputs


class ClippedModel(tf.keras.Model):
    def __init__(self, backbone):
        super().__init__()
        self.backbone = backbone

    def train_step(self, data):
        images, labels = data
        with tf.GradientTape() as tape:
            predictions = self.backbone(images)
            loss = tf.reduce_mean(tf.square(labels - predictions))
        params = self.backbone.trainable_variables
        gradients = tape.gradient(loss, params)
        self.optimizer.apply_gradients(zip(gradients, params))
        return {"loss": loss}


def fit_once():
    backbone = tf.keras.Sequential([tf.keras.layers.Dense(2), Probe()])
    model = ClippedModel(backbone)
    model.compile(optimizer="sgd")
    model.fit(tf.ones((4, 3)), tf.ones((4, 2)), epochs=1, verbose=0)
    return SEEN
"""


def test_a_backbone_called_in_a_train_step_override_runs_in_inference_mode(tmp_path):
    """`fit` traces `train_step`, but only `self(x, training=True)` tells the
    layers they train: the backbone called directly sees no `training`."""
    original = load_file_module(BACKBONE_STEP, tmp_path, "backbone_original")
    assert True not in original.fit_once()
    fixed_source = fix_source(BACKBONE_STEP, select=["TFR304"], unsafe_fixes=True)
    assert "self.backbone(images, training=True)" in fixed_source
    fixed = load_file_module(fixed_source, tmp_path, "backbone_fixed")
    assert True in fixed.fit_once()


CARRIED_TENSOR = """\
import tensorflow as tf

tf.random.set_seed(0)
model = tf.keras.Sequential([tf.keras.layers.Dense(1, kernel_initializer="ones")])
optimizer = tf.keras.optimizers.SGD(0.1)
batches = [(tf.ones((2, 3)) * i, tf.ones((2, 1))) for i in range(3)]
total = tf.zeros(())
for x, y in batches:
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
        total = total + loss
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
"""


def test_an_extracted_step_returns_the_tensor_it_carries_to_the_next_batch(tmp_path):
    fixed_source = fix_source(CARRIED_TENSOR, select=["TFR303"], unsafe_fixes=True)
    assert "total = train_step(x, y, total)" in fixed_source
    original = load_file_module(CARRIED_TENSOR, tmp_path, "carried_original")
    fixed = load_file_module(fixed_source, tmp_path, "carried_fixed")
    assert abs(float(original.total) - float(fixed.total)) < 1e-5
    assert float(fixed.total) > float(original.loss)  # three batches summed, not one
    for a, b in zip(original.model.get_weights(), fixed.model.get_weights(), strict=True):
        assert abs(a - b).max() < 1e-5


REBOUND_PARAMETER = """\
import tensorflow as tf

layer = tf.keras.layers.Dense(1, kernel_initializer="ones")


@tf.function
def f(x):
    if x > 0:
        x = x * x
    x = layer(tf.reshape(x, (1, 1)))
    return x
"""


def test_a_parameter_tested_before_it_is_rebound_gives_a_cond_that_needs_no_autograph(tmp_path):
    """The `if` on the argument, rebound after it, becomes a `tf.cond`: equal
    to the original run eagerly, traced without AutoGraph, on both branches."""
    fixed_source = fix_source(REBOUND_PARAMETER + "\nf(tf.constant(2.0))\n", select=["TFR101"])
    assert "tf.cond(x > 0" in fixed_source
    original = load_file_module(REBOUND_PARAMETER, tmp_path, "rebound_original")
    fixed = load_file_module(fixed_source, tmp_path, "rebound_fixed")
    traced = tf.function(fixed.f.python_function, autograph=False)
    for value in (-3.0, 0.0, 2.0):
        expected = original.f.python_function(tf.constant(value))
        assert float(traced(tf.constant(value))[0, 0]) == pytest.approx(float(expected[0, 0]))
    with pytest.raises(Exception):  # noqa: B017, PT011 - the Python `if` on a symbolic tensor
        tf.function(original.f.python_function, autograph=False)(tf.constant(2.0))


EPISODE_UPDATE = """\
import numpy as np
import tensorflow as tf

policy = tf.keras.Sequential([tf.keras.layers.Dense(2, activation="softmax")])
optimizer = tf.keras.optimizers.SGD(0.1)


def update(states, actions, returns):
    with tf.GradientTape() as tape:
        probs = policy(states, training=True)
        picked = tf.reduce_sum(tf.one_hot(actions, 2) * probs, axis=-1)
        loss = -tf.reduce_mean(returns * tf.math.log(picked))
    grads = tape.gradient(loss, policy.trainable_variables)
    optimizer.apply_gradients(zip(grads, policy.trainable_variables))
    return loss


losses = []
for episode in range(2):
    states = np.ones((4, 3), np.float32)
    actions = np.array([0, 1, 1, 0])
    returns = np.zeros(4)
    returns[:] = [1.0, 2.0, 3.0, 4.0]
    losses.append(float(update(states, actions, returns)))
"""


def test_a_float64_numpy_array_an_undecorated_step_mixes_with_tensors_fails_once_traced(tmp_path):
    [finding] = check_source(EPISODE_UPDATE, select=["TFR302"])
    assert finding.fix is None and "makes `returns` a NumPy array" in finding.message
    eager = load_file_module(EPISODE_UPDATE, tmp_path, "numpy_returns_eager")
    assert len(eager.losses) == 2
    decorated = EPISODE_UPDATE.replace("def update", "@tf.function\ndef update")
    with pytest.raises(TypeError, match="float64"):
        load_file_module(decorated, tmp_path, "numpy_returns_traced")
    # Made float32, the same step takes the decorator and computes the same losses.
    float32 = EPISODE_UPDATE.replace("np.zeros(4)", "np.zeros(4, np.float32)")
    fixed_source = fix_source(float32, select=["TFR302"])
    assert "@tf.function\ndef update" in fixed_source
    tf.keras.utils.set_random_seed(0)
    expected = load_file_module(float32, tmp_path, "numpy_float32_eager").losses
    tf.keras.utils.set_random_seed(0)
    traced = load_file_module(fixed_source, tmp_path, "numpy_float32_traced").losses
    assert traced == pytest.approx(expected, rel=1e-5)


WRAPPED_STEP = """\
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.SGD(0.1)
calls = []


def counted(fun):
    def wrapper(*args):
        calls.append(1)
        return fun(*args)

    return wrapper


@counted
def step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


for i in range(3):
    step(tf.ones((2, 3)), tf.ones((2, 1)))
"""


def test_a_step_under_a_python_wrapper_runs_the_wrapper_once_when_decorated(tmp_path):
    """Why the fix over an unknown decorator is unsafe: the wrapper's Python
    runs on every call eagerly, only at trace time under `@tf.function`."""
    [finding] = check_source(WRAPPED_STEP, select=["TFR302"])
    assert finding.fix is not None and finding.fix.applicability.value == "unsafe"
    fixed_source = fix_source(WRAPPED_STEP, select=["TFR302"], unsafe_fixes=True)
    assert "@tf.function\n@counted\ndef step" in fixed_source
    assert len(load_file_module(WRAPPED_STEP, tmp_path, "wrapped_eager").calls) == 3
    # Traced: once per trace (twice, as the first call builds the variables), not per call.
    assert len(load_file_module(fixed_source, tmp_path, "wrapped_traced").calls) < 3


def test_a_step_taking_the_loops_python_counter_traces_on_every_batch():
    """Why TFR303 does not extract a step reading `batch_index`: handed the
    Python int, the `tf.function` traces once per batch."""
    source = """\
import tensorflow as tf

traces = []


@tf.function(reduce_retracing=True)
def train_step(x, batch_index):
    traces.append(1)
    tf.print("batch", batch_index, "x", x)


for batch_index in range(4):
    train_step(tf.constant(1.0), batch_index)
for batch_index in range(4):
    train_step(tf.constant(1.0), tf.constant(batch_index))
"""
    assert len(load_module(source).traces) == 5  # four for the ints, one for the tensors


def test_removing_the_decorator_of_a_tf_function_demo_changes_what_it_does():
    """Why a notebook's `@tf.function def f` must keep its decorator when
    another notebook differentiates an `f` of its own: the demo's Python
    side effect runs once traced, on every call without the decorator."""
    source = """\
import tensorflow as tf

traces = []


@tf.function
def f(x):
    traces.append(x)
    return x + 1


f(tf.constant(1.0))
f(tf.constant(2.0))
"""
    assert check_source(source, select=["TFR301"]) == []
    assert len(load_module(source).traces) == 1
    assert len(load_module(source.replace("@tf.function\n", "")).traces) == 2
