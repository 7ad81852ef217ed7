"""`len()` of a tensor, which TFR105 reports without a fix: traced with
AutoGraph it gives what it gives eagerly; with `autograph=False` it raises.
So does `len()` of a parameter every call site gives one tensor. The
`len()` of a parameter holding a tuple, which it leaves alone, runs either
way."""

from __future__ import annotations

from pathlib import Path

import pytest
import tensorflow as tf
from tests.length_reads import LENGTHS
from tests.tf.equivalence import assert_same, load_file_module, run_eagerly

pytestmark = pytest.mark.tensorflow


def test_len_of_a_tensor_needs_autograph_and_a_tuple_does_not(tmp_path: Path) -> None:
    converted = load_file_module(LENGTHS, tmp_path)
    plain = load_file_module(
        LENGTHS.replace("@tf.function", "@tf.function(autograph=False)"), tmp_path
    )
    expected = run_eagerly(converted.run)
    assert_same(expected, converted.run())
    data = tf.ones((4, 3))
    assert_same(expected[1], plain.pair_sum((data, data)))
    with pytest.raises(TypeError):
        plain.tiled_state(data, tf.constant([[1.0, 2.0]]))
    with pytest.raises(TypeError):
        plain.noise_for(tf.constant([1, 2, 3]))


SLICED = """
import tensorflow as tf


@tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
def keep_all(scores):
    order = tf.argsort(scores)[::-1]
    keep = tf.TensorArray(tf.bool, size=len(order))
    for i in tf.range(len(order)):
        keep = keep.write(i, True)
    return keep.stack()
"""


def test_len_of_a_slice_of_a_computed_tensor_needs_autograph(tmp_path: Path) -> None:
    """`tests/test_length_reads.py`'s slice of `tf.argsort`: AutoGraph gives
    its length as eagerly; without AutoGraph `len` of it raises."""
    converted = load_file_module(SLICED, tmp_path)
    plain = load_file_module(
        SLICED.replace("@tf.function(", "@tf.function(autograph=False, "), tmp_path
    )
    scores = tf.constant([0.3, 0.1, 0.2])
    assert converted.keep_all(scores).numpy().tolist() == [True, True, True]
    with pytest.raises(TypeError):
        plain.keep_all(scores)
