"""TFR109 under TensorFlow: `and`/`or`/`not` testing a tensor outside an
`if`. The original runs eagerly and raises traced without AutoGraph (as
Keras 3 runs a layer's `call`); the rewrite equals the original eagerly and
runs traced with `autograph=False`, on inputs that make each operand decide."""

from __future__ import annotations

import textwrap

import pytest
import tensorflow as tf

from tfrewrite.api import check_source, fix_source

from .equivalence import assert_rewrite_equivalent, load_module, python_function, run_eagerly

pytestmark = pytest.mark.tensorflow

CASES = {
    # A `tf.while_loop` condition: length limit and an early stop.
    "loop_condition": (
        """
        import tensorflow as tf

        @tf.function
        def decode(tokens, done):
            def keep_going(tokens, done):
                return tf.shape(tokens)[1] < 6 and not tf.reduce_all(done)

            def step(tokens, done):
                grown = tf.concat([tokens, tokens[:, -1:] + 1], axis=1)
                return grown, tf.logical_or(done, grown[:, -1] > 3)

            return tf.while_loop(
                keep_going, step, (tokens, done),
                shape_invariants=(tf.TensorShape([None, None]), tf.TensorShape([None])),
            )[0]
        """,
        "decode",
        [
            (tf.constant([[0]]), tf.constant([False])),
            (tf.constant([[2]]), tf.constant([False])),
            (tf.constant([[5]]), tf.constant([True])),
        ],
    ),
    # A flag assigned from `or` of two scalar tests, then used as a mask.
    "flag_assigned": (
        """
        import tensorflow as tf

        @tf.function
        def gate(x):
            wide = tf.reduce_max(x) > 2.0 or tf.reduce_min(x) < -2.0
            return tf.where(wide, tf.clip_by_value(x, -2.0, 2.0), x)
        """,
        "gate",
        [(tf.constant([1.0, 3.0]),), (tf.constant([-3.0, 0.0]),), (tf.constant([0.5, 1.0]),)],
    ),
}


def _d(text: str) -> str:
    return textwrap.dedent(text).lstrip()


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_original_raises_traced_without_autograph(case: str) -> None:
    source, name, inputs = CASES[case]
    original = python_function(getattr(load_module(_d(source)), name))
    run_eagerly(original, *inputs[0])
    with pytest.raises((TypeError, tf.errors.OperatorNotAllowedInGraphError)):
        tf.function(original, autograph=False)(*inputs[0])


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_rewrite_equals_the_original_and_needs_no_autograph(case: str) -> None:
    source, name, inputs = CASES[case]
    findings = [f for f in check_source(_d(source)) if f.code == "TFR109"]
    assert findings and all(f.fix is not None for f in findings)
    fixed = fix_source(_d(source), select=["TFR109"])
    assert "logical_" in fixed
    assert_rewrite_equivalent(_d(source), fixed, name, inputs, autograph=False)
