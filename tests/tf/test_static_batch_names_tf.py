"""TFR107 through names and counts under TensorFlow: a batch dimension read
into a name (`rows = h.shape[0]`) and given as a shape or a count makes the
original fail once the trace does not know the batch; the rewrite computes
the same values eagerly and runs traced without AutoGraph on an unknown
batch. A Keras layer helper called with a list unpacks a tensor from it."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf
from tests.function_sources import with_body
from tests.test_static_batch_names import BRANCH_ROWS, NAMED_ROWS, SELECT, TRACED, UNPACKED_ROWS

from tfrewrite.api import fix_source

from .equivalence import assert_same, load_module
from .test_static_shape_rewrites import UNKNOWN_BATCH, assert_fixed_for_an_unknown_batch

pytestmark = pytest.mark.tensorflow

INPUTS = [
    (tf.constant(np.arange(-3.0, 3.0, dtype=np.float32).reshape(2, 3)),),
    (tf.constant(np.linspace(-1.0, 1.0, 15, dtype=np.float32).reshape(5, 3)),),
]


@pytest.mark.parametrize("body", [body for body, _ in NAMED_ROWS] + [BRANCH_ROWS])
def test_the_rewrite_survives_an_unknown_batch_and_keeps_the_values(body):
    source = with_body(TRACED, body)
    rewritten = fix_source(source, select=SELECT)
    assert rewritten != source
    assert_fixed_for_an_unknown_batch(source, rewritten, INPUTS)


def test_a_layer_helper_unpacking_a_list_argument():
    rewritten = fix_source(UNPACKED_ROWS, select=SELECT)
    before, after = load_module(UNPACKED_ROWS).PadRows(), load_module(rewritten).PadRows()
    original = tf.function(lambda x: before(x), input_signature=UNKNOWN_BATCH)
    with pytest.raises((ValueError, TypeError)):
        original(*INPUTS[0])
    traced = tf.function(lambda x: after(x), input_signature=UNKNOWN_BATCH, autograph=False)
    for (x,) in INPUTS:
        assert_same(before(x), traced(x), what=f"layer on {x.shape}")


def test_split_by_a_static_batch_raises_on_an_unknown_batch_and_the_dynamic_count_cannot_help():
    """Why TFR107 reports `tf.split(h, dims[0])` without a fix: the static
    count fails once the batch is unknown, and a tensor count is refused."""
    from tests.test_static_batch_names import SPLIT_BY_ROWS

    module = load_module(SPLIT_BY_ROWS)
    images = tf.ones((3, 8, 8, 1))
    assert len(module.pieces(images)) == 3
    unknown = [tf.TensorSpec([None, 8, 8, 1])]
    with pytest.raises(ValueError):
        tf.function(module.pieces.python_function, input_signature=unknown)(images)
    with pytest.raises(ValueError, match="Rank-0 tensors are not supported"):
        tf.function(lambda x: tf.split(x, tf.shape(x)[0]), input_signature=unknown)(images)


def test_a_batch_dimension_handed_to_a_helper_fails_traced_until_it_is_the_dynamic_one():
    from tests.test_static_batch_names import GRID

    rewritten = fix_source(GRID, select=SELECT, unsafe_fixes=True)
    before, after = load_module(GRID), load_module(rewritten)
    images = tf.ones((3, 2, 4))
    unknown = [tf.TensorSpec([None, 2, 4])]
    with pytest.raises((ValueError, TypeError)):
        tf.function(before.with_grid.python_function, input_signature=unknown)(images)
    traced = tf.function(after.with_grid.python_function, input_signature=unknown, autograph=False)
    for batch in (images, tf.ones((5, 2, 4)) * 2.0):
        assert_same(before.with_grid.python_function(batch), traced(batch), what="grid")


HELD_METHOD = """
import tensorflow as tf


class Decoder:
    def reset_state(self, batch_size):
        return tf.zeros((batch_size, 4))


class Captioner:
    def __init__(self):
        self.decoder = Decoder()

    @tf.function
    def start(self, captions):
        state = self.decoder.reset_state(batch_size=captions.shape[0])
        return state + tf.reduce_sum(captions)
"""


def test_a_batch_dimension_handed_to_a_held_objects_method_until_it_is_the_dynamic_one():
    rewritten = fix_source(HELD_METHOD, select=SELECT, unsafe_fixes=True)
    assert "batch_size=tf.shape(captions)[0]" in rewritten
    before, after = load_module(HELD_METHOD).Captioner(), load_module(rewritten).Captioner()

    def start(obj):
        function = type(obj).start.python_function
        return lambda captions: function(obj, captions)

    unknown = [tf.TensorSpec([None, 3])]
    with pytest.raises((ValueError, TypeError)):
        tf.function(start(before), input_signature=unknown)(tf.ones((2, 3)))
    traced = tf.function(start(after), input_signature=unknown, autograph=False)
    for batch in (tf.ones((2, 3)), tf.ones((5, 3)) * 2.0):
        assert_same(start(before)(batch), traced(batch), what="state")
