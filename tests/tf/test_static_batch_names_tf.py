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
from tests.test_static_batch_names import NAMED_ROWS, SELECT, TRACED, UNPACKED_ROWS

from tfrewrite.api import fix_source

from .equivalence import assert_same, load_module
from .test_static_shape_rewrites import UNKNOWN_BATCH, assert_fixed_for_an_unknown_batch

pytestmark = pytest.mark.tensorflow

INPUTS = [
    (tf.constant(np.arange(-3.0, 3.0, dtype=np.float32).reshape(2, 3)),),
    (tf.constant(np.linspace(-1.0, 1.0, 15, dtype=np.float32).reshape(5, 3)),),
]


@pytest.mark.parametrize("body", [body for body, _ in NAMED_ROWS])
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
