"""The hazards tfrewrite now finds where Keras traces a function no
`@tf.function` decorates, shown real under `model.fit`: what a lambda given
to `compile` calls, a `functools.partial` given as the loss, what a lambda
given to a `Lambda` layer calls. The original misbehaves under `fit` (which
traces) and behaves as intended with `run_eagerly=True`; the code `tfrewrite
fix` writes behaves under `fit` as the original does eagerly."""

from __future__ import annotations

import re
import textwrap

import numpy as np
import pytest
import tensorflow as tf

from tfrewrite.api import check_source, fix_source

from .equivalence import load_file_module
from .fdcapture import capture_fds

pytestmark = pytest.mark.tensorflow


def _codes(source: str) -> list[str]:
    return sorted(f.code for f in check_source(source))


LAMBDA_LOSS = textwrap.dedent(
    """\
    import tensorflow as tf
    from tensorflow import keras


    def helper(y_true, y_pred, w=1.0):
        if tf.reduce_mean(y_pred) > 0:
            return w * tf.reduce_mean(tf.square(y_true - y_pred))
        return tf.reduce_mean(tf.abs(y_true - y_pred))


    def train(x, y, eagerly=False):
        model = keras.Sequential(
            [keras.Input((3,)), keras.layers.Dense(1, kernel_initializer="ones")]
        )
        model.compile(
            optimizer="sgd",
            loss=lambda y_true, y_pred: helper(y_true, y_pred, w=3.0),
            run_eagerly=eagerly,
        )
        return model.fit(x, y, batch_size=4, epochs=1, verbose=0, shuffle=False).history["loss"]
    """
)


def test_a_tensor_if_in_what_a_compiled_lambda_calls_raises_under_fit(tmp_path) -> None:
    # The first batch predicts positive values, the second negative ones:
    # both branches are taken.
    x = np.concatenate([np.full((4, 3), 0.5), np.full((4, 3), -2.0)]).astype("float32")
    y = np.linspace(-1.0, 1.0, 8, dtype="float32").reshape(8, 1)
    assert _codes(LAMBDA_LOSS) == ["TFR101"]
    original = load_file_module(LAMBDA_LOSS, tmp_path, "lambda_loss_original")
    expected = original.train(x, y, eagerly=True)
    with pytest.raises(tf.errors.OperatorNotAllowedInGraphError):
        original.train(x, y)
    fixed_source = fix_source(LAMBDA_LOSS)
    assert "tf.cond(" in fixed_source and _codes(fixed_source) == []
    fixed = load_file_module(fixed_source, tmp_path, "lambda_loss_fixed")
    np.testing.assert_allclose(fixed.train(x, y), expected, rtol=1e-5)


PARTIAL_LOSS = textwrap.dedent(
    """\
    import functools

    import numpy as np
    import tensorflow as tf
    from tensorflow import keras


    def pinball(y_true, y_pred, quantile=0.5):
        noise = np.random.normal(0.0, 1.0)
        err = y_true - y_pred + noise
        return tf.reduce_mean(tf.maximum(quantile * err, (quantile - 1.0) * err))


    def train(x, y, eagerly=False):
        model = keras.Sequential(
            [keras.Input((3,)), keras.layers.Dense(1, kernel_initializer="zeros")]
        )
        model.compile(
            optimizer=keras.optimizers.SGD(0.0),
            loss=functools.partial(pinball, quantile=0.9),
            run_eagerly=eagerly,
        )
        means = []
        record = keras.callbacks.LambdaCallback(
            on_train_batch_end=lambda batch, logs: means.append(float(logs["loss"]))
        )
        model.fit(x, y, batch_size=1, epochs=1, verbose=0, callbacks=[record])
        return means
    """
)


def _distinct(means: list[float]) -> int:
    return len({round(m, 6) for m in means})


def test_numpy_noise_in_a_partial_loss_is_one_sample_under_fit(tmp_path) -> None:
    """Nothing trains (the learning rate is 0) and every sample is the
    same, so the loss of each batch differs only by its noise: the running
    mean Keras logs stays put when the noise is one constant."""
    x = np.ones((8, 3), "float32")
    y = np.ones((8, 1), "float32")
    assert _codes(PARTIAL_LOSS) == ["TFR102"]
    original = load_file_module(PARTIAL_LOSS, tmp_path, "partial_loss_original")
    assert _distinct(original.train(x, y, eagerly=True)) > 1
    assert _distinct(original.train(x, y)) == 1  # sampled once, while tracing
    fixed_source = fix_source(PARTIAL_LOSS)
    assert "tf.random.normal(" in fixed_source and _codes(fixed_source) == []
    fixed = load_file_module(fixed_source, tmp_path, "partial_loss_fixed")
    assert _distinct(fixed.train(x, y)) > 1


LAMBDA_LAYER = textwrap.dedent(
    """\
    import tensorflow as tf
    from tensorflow import keras


    def shift(x):
        print("shift", x)
        return x + 1.0


    def build(eagerly=False):
        inputs = keras.Input(shape=(3,))
        shifted = keras.layers.Lambda(lambda v: shift(v))(inputs)
        model = keras.Model(inputs, keras.layers.Dense(1)(shifted))
        model.compile(optimizer="sgd", loss="mse", run_eagerly=eagerly)
        return model
    """
)


def _fit_output(module, x, y, eagerly=False) -> str:
    model = module.build(eagerly)  # building calls the layer on symbolic inputs
    with capture_fds() as out:
        model.fit(x, y, batch_size=4, epochs=1, verbose=0, shuffle=False)
    return out.stdout


def _printed_numbers(text: str) -> list[float]:
    """The numbers with a fraction printed (not a shape, not a dtype)."""
    return [float(n) for n in re.findall(r"-?\d+\.\d*", text)]


def test_a_print_in_what_a_lambda_layer_calls_shows_no_values_under_fit(tmp_path) -> None:
    # No whole numbers: `tf.print` writes 1.0 as "1", NumPy as "1.".
    x = (np.arange(24, dtype="float32").reshape(8, 3) + 0.5) / 4.0
    y = np.ones((8, 1), "float32")
    assert _codes(LAMBDA_LAYER) == ["TFR103"]
    original = load_file_module(LAMBDA_LAYER, tmp_path, "lambda_layer_original")
    eager = _fit_output(original, x, y, eagerly=True)
    assert eager.count("shift") == 2  # once per batch, with its values
    assert _printed_numbers(eager) == x.ravel().tolist()
    traced = _fit_output(original, x, y)
    assert traced.count("shift") <= 1 and _printed_numbers(traced) == []
    fixed_source = fix_source(LAMBDA_LAYER, unsafe_fixes=True)
    assert "tf.print(" in fixed_source and _codes(fixed_source) == []
    fixed = _fit_output(load_file_module(fixed_source, tmp_path, "lambda_layer_fixed"), x, y)
    assert fixed.count("shift") == 2
    assert _printed_numbers(fixed) == x.ravel().tolist()
