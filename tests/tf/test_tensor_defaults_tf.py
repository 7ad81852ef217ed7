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

from tfrewrite.api import fix_source

pytestmark = pytest.mark.tensorflow


def _policy(source: str, autograph: bool):  # type: ignore[no-untyped-def]
    if not autograph:
        source = source.replace("@tf.function", "@tf.function(autograph=False)")
    namespace: dict[str, object] = {}
    exec(compile(source, "<policy>", "exec"), namespace)
    tf.keras.utils.set_random_seed(2)
    layer = tf.keras.layers.Dense(2)
    return namespace["make_policy"](layer)  # type: ignore[operator]


def test_the_rewrite_agrees_with_the_original_on_both_branches() -> None:
    original = textwrap.dedent(TENSOR_DEFAULT) + textwrap.dedent(CALLS)
    fixed = fix_source(original, select=["TFR101"])
    assert "tf.cond" in fixed
    observation = tf.constant([0.5, -1.0, 2.0])
    tf.config.run_functions_eagerly(True)
    try:
        act = _policy(original, autograph=True)
        expected = [act(observation).numpy(), act(observation, tf.constant(True)).numpy()]
    finally:
        tf.config.run_functions_eagerly(False)
    act = _policy(fixed, autograph=False)
    got = [act(observation).numpy(), act(observation, tf.constant(True)).numpy()]
    assert not np.allclose(expected[0], expected[1])  # both branches reached
    for a, b in zip(got, expected, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    # The original needs AutoGraph: without it the tensor `if` raises.
    with pytest.raises(TypeError):
        _policy(original, autograph=False)(observation)
