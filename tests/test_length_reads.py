"""TFR105 on `len()` of a tensor an op computes in traced code: only
AutoGraph gives the length there, so it is reported, without a fix.
`len()` of a parameter is not: it may hold a tuple or a list of inputs (as
Keras hands `call` and `train_step` what their caller gave; here one an
`isinstance` test checks)."""

from __future__ import annotations

import textwrap

from tests.length_reads import LENGTHS

from tfrewrite.api import check_source


def test_len_of_a_computed_tensor_is_reported_and_len_of_a_parameter_is_not() -> None:
    found = [(f.code, f.start.line, f.fix) for f in check_source(textwrap.dedent(LENGTHS))]
    assert found == [("TFR105", 8, None)]


def test_len_of_a_list_of_tensors_is_not_reported() -> None:
    # `tf.unstack` returns a Python list.
    source = """
    import tensorflow as tf


    @tf.function
    def count(x):
        steps = tf.unstack(x, axis=1)
        return tf.constant(len(steps))


    count(tf.ones((2, 3)))
    """
    assert not check_source(textwrap.dedent(source), select=["TFR105"])
