"""TFR308 under TensorFlow 2.21 and Keras 3: a Keras model without `build`
whose `call` has `@tf.function` gets no gradients for the weights its
sublayers create, in a custom tape (eager or traced) and in `fit`; the
rewrite without the decorator trains, the same as eagerly, in a train step
traced without AutoGraph."""

from __future__ import annotations

import numpy as np
import pytest
from tests.test_layer_method_decorator import BLOCKS

from tfrewrite.api import fix_source

from .equivalence import load_module

pytestmark = pytest.mark.tensorflow


def _gradients(model, x):
    import tensorflow as tf

    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(model(x))
    return tape.gradient(loss, model.trainable_variables)


def _inputs():
    import tensorflow as tf

    return tf.constant(np.linspace(-1.0, 1.0, 2 * 8 * 2, dtype=np.float32).reshape(2, 8, 2))


def test_the_decorated_call_leaves_every_weight_without_a_gradient() -> None:
    import keras

    model = load_module(BLOCKS).Stack(2)
    gradients = _gradients(model, _inputs())
    assert gradients and all(g is None for g in gradients)
    model = load_module(BLOCKS).Stack(2)
    model.compile(optimizer="sgd", loss="mse")
    with pytest.raises(ValueError, match="No gradients provided"):
        model.fit(_inputs(), np.zeros((2, 4, 4), "float32"), verbose=0)
    assert keras.__version__.startswith("3.")


def test_without_the_decorator_the_model_trains_traced_as_eagerly() -> None:
    import tensorflow as tf

    fixed = fix_source(BLOCKS, select=["TFR308"], unsafe_fixes=True)
    assert "@tf.function" not in fixed
    module = load_module(fixed)
    x = _inputs()

    def train(step_fn):
        tf.keras.utils.set_random_seed(7)
        model = module.Stack(2)
        model(x)  # build
        optimizer = tf.keras.optimizers.SGD(0.1)

        def step():
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(model(x) ** 2)
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
            return loss

        run = step_fn(step)
        return [float(run()) for _ in range(3)]

    eager = train(lambda f: f)
    traced = train(lambda f: tf.function(f, autograph=False))
    assert eager[-1] < eager[0]  # it trains
    np.testing.assert_allclose(traced, eager, rtol=1e-5)


def test_a_class_built_by_its_own_call_in_init_trains() -> None:
    """The shape TFR308 leaves alone: `__init__` runs the decorated `call`
    itself, so every weight gets a gradient through `model(x)` as through
    `model.call(x)`."""
    import tensorflow as tf
    from tests.test_layer_method_decorator import SELF_BUILT

    module = load_module(SELF_BUILT)
    x = tf.ones([4, 3])
    for run in (lambda m: m(x), lambda m: m.call(x)):
        model = module.Head(3)
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(run(model))
        gradients = tape.gradient(loss, model.trainable_variables)
        assert len(gradients) == 4 and all(g is not None for g in gradients)


def test_a_serving_signature_on_call_leaves_the_weights_without_gradients() -> None:
    """What TFR308 reports, with no fix, for a signed `call`."""
    signed = BLOCKS.replace(
        "    @tf.function\n", "    @tf.function(input_signature=[tf.TensorSpec([None, 8, 2])])\n"
    )
    model = load_module(signed).Stack(2)
    gradients = _gradients(model, _inputs())
    assert gradients and all(g is None for g in gradients)


def test_a_sequential_told_its_input_shape_trains_under_the_decorator() -> None:
    """Keras builds it where it is made: every weight gets a gradient through
    the decorated `call` (what TFR308 leaves alone)."""
    from tests.test_layer_method_decorator import SHAPED

    source = SHAPED.replace("{first}", "tf.keras.layers.Dense(2, input_shape=(obs_dim,))")
    model = load_module(source).Actor(4)
    assert model.mu.built
    import tensorflow as tf

    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(model(tf.ones((3, 4))))
    gradients = tape.gradient(loss, model.trainable_variables)
    assert gradients and all(g is not None for g in gradients)


def test_a_sequential_filled_by_add_gets_gradients_only_when_told_its_shape() -> None:
    """What TFR308 reports for a `Sequential` filled by `.add` (no gradient
    for any weight under the decorated `call`), and leaves alone when its
    first layer tells the input's shape (built as it is filled)."""
    import tensorflow as tf
    from tests.test_layer_method_decorator import ADDED

    states, actions = tf.ones((3, 3)), tf.ones((3, 2))
    for first, trains in (
        ("tf.keras.layers.Dense(8)", False),
        ("tf.keras.layers.Dense(8, input_shape=(5,))", True),
    ):
        model = load_module(ADDED.replace("{first}", first)).Critic(2)
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(model(states, actions))
        gradients = tape.gradient(loss, model.trainable_variables)
        assert len(gradients) == 6
        assert all((g is not None) == trains for g in gradients), first
