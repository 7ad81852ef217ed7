"""TFR108 on a decoder's loop over a name that is a `tf.range` when the
length is unknown (`tests/test_some_path_tensor_loops.py`), reported without
a fix: called eagerly the layer runs on both paths; traced with a known
length it runs, and with an unknown one Keras 3 runs `call` without
AutoGraph and the loop raises."""

from __future__ import annotations

import pytest
from tests.test_some_path_tensor_loops import _source

from .equivalence import load_module

pytestmark = pytest.mark.tensorflow


def test_the_loop_raises_only_where_the_length_is_unknown() -> None:
    import keras
    import tensorflow as tf

    if not keras.__version__.startswith("3."):
        pytest.skip("Keras 2 converted `call` with AutoGraph")
    decoder = load_module(_source()).Decoder()
    x = tf.ones((2, 3, 5))
    assert decoder(x).shape == (2, 3, 4)  # eagerly: the static length
    known = tf.function(decoder)
    assert known(x).shape == (2, 3, 4)
    unknown = tf.function(decoder, input_signature=[tf.TensorSpec((2, None, 5))])
    with pytest.raises(Exception, match="not allowed|Iterating over a symbolic"):
        unknown(x)
