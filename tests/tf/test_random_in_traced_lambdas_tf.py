"""A NumPy or Python draw in a lambda given to `Dataset.map` (TFR102 /
TFR106, reported without a fix): `map` traces the lambda once, so every
element gets the same sample; `tf.random` in its place draws per element."""

from __future__ import annotations

import random

import numpy as np
import pytest

pytestmark = pytest.mark.tensorflow


def _noise(mapped) -> list[float]:
    return [round(float(v) - i, 6) for i, v in enumerate(mapped)]


def test_a_draw_in_a_mapped_lambda_is_one_sample_for_every_element() -> None:
    import tensorflow as tf

    tf.random.set_seed(0)
    base = tf.data.Dataset.range(6).map(lambda x: tf.cast(x, tf.float32))
    frozen_numpy = _noise(base.map(lambda x: x + np.random.rand()))
    frozen_python = _noise(base.map(lambda x: x + random.random()))
    fresh = _noise(base.map(lambda x: x + tf.random.uniform([])))
    assert len(set(frozen_numpy)) == 1 and len(set(frozen_python)) == 1
    assert len(set(fresh)) == 6
