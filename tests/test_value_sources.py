"""Where a value comes from decides what it is: a decorator given through
`typing.cast`, the rows and items of a tensor, a model's variable lists, a
batch count computed from a size. Each shape is one a hand-labelled public
repository showed tfrewrite reading wrongly, written small."""

from __future__ import annotations

import textwrap

from tfrewrite.api import check_source


def _codes(source: str, *codes: str) -> list[tuple[str, int]]:
    findings = check_source(textwrap.dedent(source).lstrip(), select=list(codes))
    return [(f.code, f.start.line) for f in findings]


# -- `typing.cast(T, tf.function)` is `tf.function` ---------------------------------------

_CAST_STEP = """
    from typing import Any, Callable, cast

    import tensorflow as tf

    class Learner:
        def __init__(self, net):
            self.net = net
            self.opt = tf.keras.optimizers.SGD(0.1)

        @cast(Callable[..., Any], {decorator})
        def update(self, x, y):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(self.net(x, training=True) - y))
            grads = tape.gradient(loss, self.net.trainable_variables)
            self.opt.apply_gradients(zip(grads, self.net.trainable_variables))
            print("loss", loss)
            return loss

        def fit(self, batches):
            for x, y in batches:
                self.update(x, y)
"""


def test_a_step_decorated_through_typing_cast_is_traced():
    found = _codes(_CAST_STEP.format(decorator="tf.function"), "TFR103", "TFR302")
    # traced: its print runs once (TFR103); decorated: no TFR302 asking for it
    assert found == [("TFR103", 16)]


def test_options_given_through_typing_cast_are_kept():
    source = _CAST_STEP.format(decorator="tf.function(jit_compile=True)")
    assert _codes(source, "TFR103", "TFR302") == [("TFR103", 16)]


def test_a_cast_of_something_else_is_no_tf_function():
    found = _codes(_CAST_STEP.format(decorator="staticmethod"), "TFR103", "TFR302")
    # not traced yet: a train step run eagerly, which TFR302 decorates
    assert ("TFR302", 11) in found


# -- the rows and items of a tensor are tensors ----------------------------------------------

_ROWS = """
    import tensorflow as tf

    class Agent:
        def replay(self, n_updates):
            for _ in range(int(n_updates)):
                self.learn()

        def learn(self):
            pass

        @tf.function(reduce_retracing=True)
        def step(self, done):
            {body}
"""


def test_an_item_of_a_tensor_handed_on_makes_its_parameter_a_tensor():
    source = _ROWS.format(body="ends = tf.where(done)\n            self.replay(ends[0])")
    assert _codes(source, "TFR105") == [("TFR105", 5)]


def test_a_row_of_a_tensor_iterated_over_is_a_tensor():
    source = _ROWS.format(body="for end in tf.where(done):\n                self.replay(end[0])")
    assert _codes(source, "TFR105") == [("TFR105", 5)]


def test_a_python_count_handed_on_is_not_reported():
    source = _ROWS.format(body="for end in [1, 2]:\n                self.replay(end)")
    assert _codes(source, "TFR105") == []


# -- a model's variable lists are Python lists of variables ------------------------------------

UNFLATTEN = """
    import tensorflow as tf

    class Solver:
        def __init__(self, net):
            self.net = net

        @staticmethod
        def unflatten(flat, variables):
            start, parts = 0, []
            for v in variables:
                size = tf.reduce_prod(v.shape)
                parts.append(tf.reshape(flat[start:start + size], v.shape))
                start += size
            return parts

        @tf.function(reduce_retracing=True)
        def step(self, flat, parts):
            return self.unflatten(flat, {given})
"""


def test_the_static_shape_of_a_models_variable_is_not_reported():
    assert _codes(UNFLATTEN.format(given="self.net.trainable_variables"), "TFR107") == []


def test_the_static_shape_of_what_a_caller_may_pass_as_tensors_is_still_reported():
    assert _codes(UNFLATTEN.format(given="parts"), "TFR107") == [("TFR107", 12)]


# -- a batch count computed from the number of examples ----------------------------------------

_EPOCH = """
    import tensorflow as tf

    def train(images, labels, step):
        steps = {steps}
        data = tf.data.Dataset.from_tensor_slices((images, labels)).batch(BATCH_SIZE)
        total = 0.0
        for x, y in data:
            total += step(x, y)
        return total / steps
"""


def test_a_sum_of_batch_means_over_examples_floor_divided_by_batch_size_is_reported():
    assert _codes(_EPOCH.format(steps="len(images) // BATCH_SIZE"), "TFR306") == [("TFR306", 9)]


def test_a_ceiling_of_examples_over_batch_size_counts_batches_too():
    source = "import math\n" + textwrap.dedent(
        _EPOCH.format(steps="math.ceil(len(images) / BATCH_SIZE)")
    )
    assert _codes(source, "TFR306") == [("TFR306", 11)]


def test_a_division_by_the_number_of_examples_is_not_reported():
    assert _codes(_EPOCH.format(steps="len(images)"), "TFR306") == []


# -- an item of what a host call returns is a host value ------------------------------------------

_ANGLES = """
    import numpy as np
    import tensorflow as tf

    class Encoding(tf.keras.layers.Layer):
        @staticmethod
        def angles(pos, i, d_model):
            return pos / np.power(10000, (2 * (i // 2)) / np.float32(d_model))

        def call(self, x):
            table = self.angles(np.arange(x.shape[1])[:, np.newaxis], {indices}, 8)
            return x + tf.cast(table, x.dtype)
"""


def test_numpy_on_items_of_numpy_results_is_not_reported():
    indices = "np.arange(8)[np.newaxis, :]"
    assert _codes(_ANGLES.format(indices=indices), "TFR104") == []


def test_numpy_on_an_item_of_a_tensor_handed_over_is_still_reported():
    indices = "tf.range(8)[tf.newaxis, :]"
    assert _codes(_ANGLES.format(indices=indices), "TFR104") == [("TFR104", 7)]
