"""What the forwarded call-site evidence finds, shown real: a variable
passed to a module-level Keras model reaches `float()` in a helper its
`call` passes it on to. Eagerly the step runs; traced, `float()` meets a
symbolic tensor and raises `TypeError`. The extraction of an inline tape
block that reaches it goes only together with the cast TFR105 writes, and
the rewritten loop trains as the original does eagerly."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf
from tests.test_forwarded_evidence import INLINE_LOOP, MODEL, TRACED_STEP

from tfrewrite.api import fix_source

from .equivalence import load_file_module, python_function

pytestmark = pytest.mark.tensorflow

INLINE = (
    MODEL
    + """

tf.keras.utils.set_random_seed(0)
net, opt = Net(), keras.optimizers.SGD(0.1)
counter = tf.Variable(0)
"""
    + INLINE_LOOP.replace("1.0)", "1)")
)


def test_the_traced_step_raises_where_the_eager_one_runs(tmp_path) -> None:
    module = load_file_module(TRACED_STEP, tmp_path, "forwarded_step")
    batch = tf.ones((4, 3))
    python_function(module.train_step)(batch)  # eagerly: `float()` reads the variable
    with pytest.raises(TypeError, match="float"):
        module.train_step(batch)


def test_the_extracted_loop_with_the_cast_trains_as_the_eager_original(tmp_path) -> None:
    fixed = fix_source(INLINE, unsafe_fixes=True)
    assert "@tf.function(reduce_retracing=True)\ndef net_train_step(xb):" in fixed
    assert "tf.cast(step + 1, tf.float32)" in fixed
    original = load_file_module(INLINE, tmp_path, "inline_original")
    rewritten = load_file_module(fixed, tmp_path, "inline_rewritten")
    assert int(rewritten.counter.numpy()) == int(original.counter.numpy()) == 2
    for before, after in zip(original.net.get_weights(), rewritten.net.get_weights(), strict=True):
        np.testing.assert_allclose(before, after, rtol=1e-6, atol=1e-6)
