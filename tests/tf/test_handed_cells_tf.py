"""TFR308 on a layer handed its weighted cell by its builder
(`tests/test_project_weighted_sublayers.py`): with `@tf.function` on the
layer's `call`, Keras 3 builds it inside that function and the cell's
weights get no gradient; without it (the fix) every weight gets one."""

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
