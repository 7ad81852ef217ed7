"""Which verify target runs each fix (`verify PATH`): the function that
holds it, the module-level training loop replayed around it, every traced
function for the switch that turned graphs off; a fix in code no target runs
gets a "not proven" target that names it. No TensorFlow: targets only."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tfrewrite.config import load_settings
from tfrewrite.verify.command import targets_for_paths
from tfrewrite.verify.settings import VerifySettings

SCRIPT = """
    import numpy as np
    import tensorflow as tf

    tf.config.run_functions_eagerly(True)


    @tf.function
    def noisy(x):
        return x + np.random.normal(0.0, 1.0)


    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    optimizer = tf.keras.optimizers.SGD(0.1)
    data = tf.data.Dataset.from_tensor_slices((tf.ones((8, 2)), tf.ones((8, 1)))).batch(4)
    for x, y in data:
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
"""


def test_each_fix_is_held_by_the_target_that_runs_it(tmp_path: Path) -> None:
    path = tmp_path / "script.py"
    path.write_text(textwrap.dedent(SCRIPT))
    settings = load_settings(None)
    settings = type(settings)(**{**settings.__dict__, "root": tmp_path, "unsafe_fixes": True})
    targets = targets_for_paths([path], settings, VerifySettings(xla=False))
    held = {t.qualname: t.fixes for t in targets if t.fixes}
    fixes = sorted(f for t in targets for f in t.fixes)
    assert fixes == ["TFR102 line 10", "TFR303 line 17", "TFR307 line 5"]
    assert "TFR102 line 10" in held["noisy"]
    # The extracted step is proven by replaying the loop it came from.
    [loop] = [t for t in targets if "TFR303 line 17" in t.fixes]
    assert loop.loop is not None
    # The switch that made every function eager is checked through them.
    [switch] = [t for t in targets if "TFR307 line 5" in t.fixes]
    assert switch.problem is None and switch.rewrite_source is not None


MAIN_BLOCK = """
    import tensorflow as tf

    if __name__ == "__main__":
        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        optimizer = tf.keras.optimizers.SGD(0.1)
        data = tf.data.Dataset.from_tensor_slices((tf.ones((8, 2)), tf.ones((8, 1)))).batch(4)

        def train_step(x, y):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))

        for epoch in range(2):
            for x, y in data:
                train_step(x, y)
"""


def test_a_step_defined_in_the_main_block_is_held_by_the_loop_there(tmp_path: Path) -> None:
    path = tmp_path / "train.py"
    path.write_text(textwrap.dedent(MAIN_BLOCK))
    settings = load_settings(None)
    settings = type(settings)(**{**settings.__dict__, "root": tmp_path})
    targets = targets_for_paths([path], settings, VerifySettings(xla=False))
    [holder] = [t for t in targets if t.fixes]
    assert holder.fixes == ("TFR302 line 9",)
    assert holder.loop is not None and holder.problem is None


# One `tf.cond` rewrite beside a tensor `if` that is refused (a `return` in one
# branch): the function still needs AutoGraph, and says which line keeps it.
PARTLY_REWRITTEN = """
    import tensorflow as tf


    @tf.function
    def window_end(sequence, start):
        end = start + 3
        if end >= tf.shape(sequence)[0] - 1:
            return tf.shape(sequence)[0] - 1
        following = sequence[end + 1]
        if tf.reduce_sum(following) > 2.0:
            end = end + 1
        return end


    @tf.function
    def clipped(x):
        if tf.reduce_sum(x) > 2.0:
            x = x * 0.5
        return x
"""


def test_a_rewrite_that_keeps_a_tensor_if_is_not_run_without_autograph(tmp_path: Path) -> None:
    path = tmp_path / "windows.py"
    path.write_text(textwrap.dedent(PARTLY_REWRITTEN))
    settings = load_settings(None)
    settings = type(settings)(**{**settings.__dict__, "root": tmp_path})
    targets = {t.qualname: t for t in targets_for_paths([path], settings, VerifySettings())}
    assert targets["window_end"].needs_autograph == "line 8: TFR101 not rewritten"
    assert targets["clipped"].needs_autograph is None


LAYER_LOOP = """
    import tensorflow as tf


    class Cross(tf.keras.layers.Layer):
        def __init__(self, depth=2):
            super().__init__()
            self.depth = depth

        def build(self, input_shape):
            width = int(input_shape[-1])
            self.kernels = [
                self.add_weight(name=f"w{i}", shape=(width, 1), initializer="random_normal")
                for i in range(self.depth)
            ]

        def call(self, inputs):
            x = inputs
            for i in range(self.depth):
                x = x + inputs * tf.matmul(x, self.kernels[i])
                print(x)
            return x
    """


def test_a_changed_loop_that_trains_nothing_is_its_function_s(tmp_path: Path) -> None:
    """A print fixed inside a layer's `for` over its depth is proven by
    calling the layer's `call`, not by replaying that loop as training."""
    path = tmp_path / "layers.py"
    path.write_text(textwrap.dedent(LAYER_LOOP))
    settings = load_settings(None)
    settings = type(settings)(**{**settings.__dict__, "root": tmp_path, "unsafe_fixes": True})
    targets = targets_for_paths([path], settings, VerifySettings(xla=False))
    [target] = [t for t in targets if t.fixes]
    assert target.qualname == "Cross.call"
    assert target.loop is None and target.problem is None
