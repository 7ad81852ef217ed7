"""TFR308 on a layer handed its weighted cell by its builder
(`tests/test_project_weighted_sublayers.py`), and on one whose layers are
bound to local names and kept as a list (`tests/test_layer_method_decorator.py`):
with `@tf.function` on the layer's `call`, Keras 3 builds it inside that
function and those weights get no gradient; without it (the fix) every
weight gets one."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
from tests.test_project_weighted_sublayers import CELLS, RECURRENT

from tfrewrite.api import fix_source

from .equivalence import load_module

pytestmark = pytest.mark.tensorflow

SOURCE = textwrap.dedent(CELLS) + textwrap.dedent(
    RECURRENT.replace("CELL", "Cell(8)").replace("from cells import Cell\n", "")
)


def _gradients(source: str) -> list[object]:
    import tensorflow as tf

    model = load_module(source).Model()
    x = tf.constant(np.linspace(-1.0, 1.0, 12, dtype=np.float32).reshape(3, 4))
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(model(x))
    return tape.gradient(loss, model.trainable_variables)


def test_the_decorated_call_leaves_the_cell_without_gradients() -> None:
    gradients = _gradients(SOURCE)
    assert gradients and all(g is None for g in gradients)


def test_without_the_decorator_every_weight_gets_a_gradient() -> None:
    fixed = fix_source(SOURCE, select=["TFR308"], unsafe_fixes=True)
    assert "@tf.function" not in fixed
    gradients = _gradients(fixed)
    assert len(gradients) == 2 and all(g is not None for g in gradients)


def test_layers_bound_to_names_and_listed_get_gradients_once_fixed() -> None:
    """`tests/test_layer_method_decorator.py`'s extractor: decorated, its
    listed layers' weights get no gradient; fixed, every one does."""
    import tensorflow as tf
    from tests.test_layer_method_decorator import NAMED_LAYERS

    source = NAMED_LAYERS.replace("LAST", "tf.keras.layers.Dense(2)")
    x = tf.constant(np.linspace(-1.0, 1.0, 2 * 6 * 6 * 1, dtype=np.float32).reshape(2, 6, 6, 1))

    def gradients(text: str) -> list[object]:
        model = load_module(text).Extractor()
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(model(x))
        return tape.gradient(loss, model.trainable_variables)

    decorated = gradients(source)
    assert decorated and all(g is None for g in decorated)
    fixed = fix_source(source, select=["TFR308"], unsafe_fixes=True)
    assert "@tf.function" not in fixed
    undecorated = gradients(fixed)
    assert len(undecorated) == 4 and all(g is not None for g in undecorated)
