"""The `tf.cond` TFR101 writes for an `if` on a parameter whose default is
a tensor: the original run eagerly and the rewrite traced with
`autograph=False` agree, with the default and with the flag passed."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
import tensorflow as tf
from tests.defaulted_flags import TENSOR_DEFAULT
from tests.test_tensor_defaults import CALLS
from tests.tf.equivalence import assert_same, load_module, run_eagerly

from tfrewrite.api import fix_source

pytestmark = pytest.mark.tensorflow

OBSERVATION = tf.constant([0.5, -1.0, 2.0])


def _policy(source: str, autograph: bool):  # type: ignore[no-untyped-def]
    if not autograph:
        source = source.replace("@tf.function", "@tf.function(autograph=False)")
    tf.keras.utils.set_random_seed(2)
    return load_module(source).make_policy(tf.keras.layers.Dense(2))


def _both_branches(act) -> list:  # type: ignore[no-untyped-def]
    return [act(OBSERVATION), act(OBSERVATION, tf.constant(True))]


def test_the_rewrite_agrees_with_the_original_on_both_branches() -> None:
    original = textwrap.dedent(TENSOR_DEFAULT) + textwrap.dedent(CALLS)
    fixed = fix_source(original, select=["TFR101"])
    assert "tf.cond" in fixed
    expected = run_eagerly(_both_branches, _policy(original, autograph=True))
    assert not np.allclose(expected[0], expected[1])  # both branches reached
    assert_same(expected, _both_branches(_policy(fixed, autograph=False)))
    # The original needs AutoGraph: without it the tensor `if` raises.
    with pytest.raises(TypeError):
        _policy(original, autograph=False)(OBSERVATION)
