"""Methods of objects verify builds itself: both sides' objects start equal,
and a sampler whose output takes a few values compares as the same
distribution when the two sides compute those values a few ulps apart.

The model class needs constructor arguments (verify guesses them from
their names) and builds its network lazily, on the first call: eagerly on
the original's side, inside a trace on the rewrite's. Keras 3 fixes an
unseeded initializer's seed when the layer is constructed, from Python's
random stream."""

from __future__ import annotations

import textwrap

import pytest
from tests.tf.verify_pairs import failures, verify_pair

from tfrewrite.verify.checks import Options

pytestmark = pytest.mark.tensorflow

OPTIONS = Options(samples=1000, search=16)

MODEL = """
import numpy as np
import tensorflow as tf
from tensorflow import keras


class Policy(keras.Model):
    def __init__(self, obs_dim, act_dim):
        super().__init__()
        self.net = keras.Sequential(
            [
                keras.layers.Dense(32, activation="tanh"),
                keras.layers.Dense(act_dim, activation="softmax"),
            ]
        )

    def call(self, state):
        probs = self.net(state)
        {body}
"""

LOG_PROBS_ORIGINAL = "return np.log(probs)"
LOG_PROBS_REWRITE = "return tf.math.log(probs)"

SAMPLE_ORIGINAL = """logits = tf.math.log(probs)
        action = tf.random.categorical(logits, 1)[:, 0]
        log_pi = tf.gather(logits, action, batch_dims=1)
        return action.numpy(), log_pi"""
SAMPLE_REWRITE = SAMPLE_ORIGINAL.replace("action.numpy()", "tf.stop_gradient(action)")


def _results(original_body: str, rewrite_body: str) -> list[dict]:
    original = textwrap.dedent(MODEL).replace("{body}", original_body)
    rewrite = textwrap.dedent(MODEL).replace("{body}", rewrite_body)
    return verify_pair(original, rewrite, OPTIONS, path="policy.py")


def test_objects_built_from_guessed_arguments_start_with_equal_weights() -> None:
    results = _results(LOG_PROBS_ORIGINAL, LOG_PROBS_REWRITE)
    assert [r["verdict"] for r in results] == ["equivalent"], failures(results) or results


def test_a_sampled_log_probability_is_the_same_distribution_on_both_sides() -> None:
    results = _results(SAMPLE_ORIGINAL, SAMPLE_REWRITE)
    assert [r["verdict"] for r in results] == ["equivalent"], failures(results) or results


def test_a_sampler_drawing_from_other_probabilities_is_a_mismatch() -> None:
    broken = SAMPLE_REWRITE.replace("tf.math.log(probs)", "tf.math.log(probs) * 2")
    results = _results(SAMPLE_ORIGINAL, broken)
    assert [r["verdict"] for r in results] == ["mismatch"], results
