"""TFR108's examples under TensorFlow: each reported example runs eagerly
and raises when traced (without AutoGraph, as Keras 3 traces a layer's
`call`, and with it, as `@tf.function` does); each valid one runs traced."""

from __future__ import annotations

import textwrap

import pytest

from tfrewrite.rules import RULES_BY_CODE
from tfrewrite.rules.base import Invalid, Valid

from .equivalence import load_module, python_function, run_eagerly

pytestmark = pytest.mark.tensorflow

RULE = RULES_BY_CODE["TFR108"]
INPUTS = {
    "mask": lambda tf: (tf.ones((2, 5, 3)),),
    "normalized": lambda tf: ([tf.ones([2]), tf.ones([2])], [tf.ones([2]), tf.ones([2])]),
    "halves": lambda tf: (tf.range(4.0),),
}


def _function(example: Invalid | Valid):
    source = example.before if isinstance(example, Invalid) else example.code
    module = load_module(textwrap.dedent(source))
    name = next(n for n in INPUTS if hasattr(module, n))
    return python_function(getattr(module, name)), name


@pytest.mark.parametrize("example", [e for e in RULE.examples if isinstance(e, Invalid)])
@pytest.mark.parametrize("autograph", [False, True])
def test_a_reported_example_runs_eagerly_and_raises_traced(example: Invalid, autograph: bool):
    import tensorflow as tf

    function, name = _function(example)
    args = INPUTS[name](tf)
    run_eagerly(function, *args)
    with pytest.raises((TypeError, tf.errors.OperatorNotAllowedInGraphError)):
        tf.function(function, autograph=autograph)(*args)


@pytest.mark.parametrize(
    "example",
    [e for e in RULE.examples if isinstance(e, Valid) and "@tf.function" in e.code],
)
def test_a_valid_example_runs_traced(example: Valid) -> None:
    import tensorflow as tf

    function, name = _function(example)
    tf.function(function, autograph=False)(*INPUTS[name](tf))
