"""A layer keeping its sublayers in a list it fills itself and calling
each in a loop (`for block in self.blocks: x = block(x)`) runs only what
it built: TFR304 judges it by those constructor calls, in whichever module
the classes live. Blocks of `Dense` layers ignore `training` (no finding);
a block holding `Dropout`, or a list the class was handed, may not."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.projects import check_project, found_lines

from tfrewrite.facts.index import build_index

BLOCKS = """
    import tensorflow as tf


    class Block(tf.keras.layers.Layer):
        def __init__(self, units):
            super().__init__()
            self.dense = tf.keras.layers.Dense(units, activation="tanh")

        def call(self, x):
            return {body}
"""

STACK = """
    import tensorflow as tf
    from lib.blocks import Block


    class Stack(tf.keras.Model):
        def __init__(self, sizes{handed}):
            super().__init__()
            blocks = [Block(sizes[0])]
            for units in sizes[1:]:
                blocks.append({appended})
            self.blocks = blocks
            self.head = tf.keras.layers.Dense(1)

        def call(self, x, **kwargs):
            for block in self.blocks:
                x = block(x)
            return self.head(x)


    class Wrapper(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.stack = Stack([8, 8]{handed_value})

        def call(self, x, training=None):
            return self.stack(x)
"""

TRAIN = """
    import tensorflow as tf
    from lib.stack import Wrapper

    model = Wrapper()
    optimizer = tf.keras.optimizers.Adam()


    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss
"""


def _found(
    tmp_path: Path,
    body: str = "self.dense(x)",
    appended: str = "Block(units)",
    handed: bool = False,
) -> list[tuple[str, int]]:
    stack = STACK.replace("{appended}", appended)
    stack = stack.replace("{handed}", ", extra" if handed else "")
    stack = stack.replace("{handed_value}", ", tf.keras.layers.Dropout(0.5)" if handed else "")
    files = {
        "lib/__init__.py": "",
        "lib/blocks.py": BLOCKS.replace("{body}", body),
        "lib/stack.py": stack,
        "train.py": TRAIN,
    }
    return found_lines(check_project(tmp_path, files, ("TFR304",)))


def test_a_loop_over_built_dense_blocks_ignores_training(tmp_path: Path) -> None:
    assert _found(tmp_path) == []


def test_a_block_holding_dropout_is_reported(tmp_path: Path) -> None:
    body = "tf.keras.layers.Dropout(0.5)(self.dense(x))"
    assert _found(tmp_path, body=body) == [("train.py", 11)]


@pytest.mark.parametrize("appended", ["extra", "tf.keras.layers.Dropout(0.5)"])
def test_a_list_holding_what_the_class_did_not_build_is_reported(
    tmp_path: Path, appended: str
) -> None:
    assert _found(tmp_path, appended=appended, handed=True) == [("train.py", 11)]


def test_the_index_records_built_lists_and_their_loop_variables() -> None:
    source = """
class Stack:
    def __init__(self, sizes, given):
        blocks = [Block(sizes[0])]
        blocks.append(Block(4))
        self.blocks = blocks
        self.built = [Block(n) for n in sizes]
        self.given = given
        self.mixed = [Block(4), given]
        self.later = None

    def call(self, x):
        for block in self.blocks:
            x = block(x)
        for i, layer in enumerate(self.built):
            x = layer(x)
        for unit in self.mixed:
            x = unit(x)
        for unit in [x]:
            pass
        return [b(x) for b in self.later]
"""
    index = build_index(source, "stack.py", "stack")
    built = index.classes["Stack"].built_lists
    assert built == {"blocks": True, "built": True, "given": False, "mixed": False}
    assert index.functions["Stack.call"].loop_attributes == {
        "block": "blocks",
        "layer": "built",
        "unit": "",
        "b": "later",
    }
