"""A module that reads `tf` or `np` without binding it (a helper split out
of a notebook whose imports stayed behind) means TensorFlow and NumPy by
them: its `@tf.function` is TensorFlow's, so its train step is traced (no
TFR302). A name the module binds itself keeps its own meaning."""

from __future__ import annotations

from pathlib import Path

from tests.projects import check_project

from tfrewrite.facts.index import build_index

STEPS = """
@tf.function
def train_step(model, optimizer, x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss
"""

TRAIN = """
import tensorflow as tf

from steps import train_step


def fit(model, optimizer, batches):
    for x, y in batches:
        train_step(model, optimizer, x, y)
"""


def test_an_unbound_tf_decorates_with_tensorflows_function(tmp_path: Path) -> None:
    assert check_project(tmp_path, {"steps.py": STEPS, "train.py": TRAIN}, ("TFR302",)) == []


def test_the_aliases_are_read_only_where_the_module_uses_them_unbound() -> None:
    assert build_index("y = np.zeros(3)\n", "a.py", "a").imports == {"np": "numpy"}
    assert build_index("tf = object()\ny = tf.x\n", "b.py", "b").imports == {}
    assert build_index("y = 1\n", "c.py", "c").imports == {}
    index = build_index("import numpy as tf\ny = tf.zeros(3)\n", "d.py", "d")
    assert index.imports == {"tf": "numpy"}
