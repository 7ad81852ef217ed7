"""TFR304 on a model whose `call` does not name `training`: Keras hands
`critic(x, training=True)` to its dropout through the call context, so
the fixed step trains with dropout on (traced as eagerly), where the
original step ran it in inference mode."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
import tensorflow as tf
from test_model_bindings import CONTEXT_ONLY

from tfrewrite.api import fix_source

from .equivalence import load_module, python_function

pytestmark = pytest.mark.tensorflow


def test_the_fixed_step_runs_dropout_through_the_call_context() -> None:
    source = textwrap.dedent(CONTEXT_ONLY)
    fixed = fix_source(source, select=["TFR304"], unsafe_fixes=True)
    x = tf.ones([64, 4])
    original, rewritten = load_module(source), load_module(fixed)
    for module in (original, rewritten):
        module.critic(x)  # build
        module.critic.set_weights(
            [np.full(w.shape, 0.1, np.float32) for w in module.critic.get_weights()]
        )
    inference = float(tf.reduce_mean(original.critic(x) ** 2))
    assert np.isclose(float(python_function(original.update)(x)), inference)  # dropout off
    tf.keras.utils.set_random_seed(3)
    traced = float(tf.function(python_function(rewritten.update), autograph=False)(x))
    assert not np.isclose(traced, inference)  # dropout on: half the units zeroed, the rest doubled
