"""TFR201 on an attribute of a Keras model that a script changes between
`fit` calls (`model.depth = d` in the loop that grows a tree). Keras
traces `call` once per traced `fit`/`predict` function and keeps that
function, so the change is lost, unless the script compiles the model
again after it: `compile` drops the traced functions and the next `fit`
traces anew, reading the new value (`tests/tf/test_recompiled_models_tf.py`)."""

from __future__ import annotations

import textwrap

from tfrewrite.api import check_source

SCRIPT = """
import tensorflow as tf


class Tree(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.depth = 1
        self.head = tf.keras.layers.Dense(1)

    def call(self, x):
        return self.head(x) * self.depth


def grow(x, y, rounds):
    model = Tree()
    model.compile(optimizer="adam", loss="mse")
    for depth in range(2, rounds):
        model.depth = depth
{recompile}        model.fit(x, y, epochs=1)
"""

RECOMPILE = '        model.compile(optimizer="adam", loss="mse")\n'


def _findings(recompile: str) -> list[int]:
    source = textwrap.dedent(SCRIPT.format(recompile=recompile))
    return [f.start.line for f in check_source(source, select=["TFR201"])]


def test_a_change_the_next_fit_never_sees_is_frozen() -> None:
    assert _findings("") == [12]


def test_a_change_followed_by_compile_is_traced_anew() -> None:
    assert _findings(RECOMPILE) == []
