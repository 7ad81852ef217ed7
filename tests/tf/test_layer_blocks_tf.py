"""Measured for `tests/test_layer_blocks.py`: the generator built from the
block function computes the same with `training=True` as without (no
TFR304 finding); with batch normalization in the block, or a `Lambda`
running a `Dropout`, it does not."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from tests.layer_blocks import source

from .equivalence import load_file_module

pytestmark = pytest.mark.tensorflow


@pytest.mark.parametrize(
    ("changes", "kwargs"),
    [
        (False, {}),
        (True, {"last": "layers.BatchNormalization()(out)"}),
        (True, {"wrapped": "lambda parts: layers.Dropout(0.5)(parts[0])"}),
    ],
)
def test_training_changes_only_blocks_that_read_it(
    tmp_path: Path, changes: bool, kwargs: dict[str, str]
) -> None:
    import tensorflow as tf

    generator = load_file_module(source(**kwargs), tmp_path).build_generator(8)
    rng = np.random.default_rng(0)
    image = tf.constant(rng.normal(size=(2, 8, 8, 4)), tf.float32)
    style = tf.constant(rng.normal(size=(2, 8)), tf.float32)
    inference = generator([image, style]).numpy()
    training = generator([image, style], training=True).numpy()
    assert np.allclose(inference, training) is not changes
