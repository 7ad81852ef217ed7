"""Measured: a model's `call` reading its input's static batch size, run by
the step `fix` decorates (TFR302), gives traced what it gives eagerly over
batches of different sizes, a short last one included: each batch size is
traced with its shape (AutoGraph on and off). With `reduce_retracing=True`
the relaxed trace sees the batch size as `None`, and the same `call` raises:
what TFR107 reports."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf
from tests.concrete_shapes import MODEL_AND_LOOP
from tests.tf.equivalence import load_file_module

from tfrewrite.api import fix_source

pytestmark = pytest.mark.tensorflow


def _batches() -> list[tuple[tf.Tensor, tf.Tensor]]:
    rng = np.random.default_rng(0)
    return [
        (
            tf.constant(rng.normal(size=(n, 3)), tf.float32),
            tf.constant(rng.normal(size=(n, 2)), tf.float32),
        )
        for n in (4, 4, 3, 2)
    ]


def _losses(source: str, tmp_path: Path, prefix: str) -> list[float]:
    tf.keras.utils.set_random_seed(1)
    module = load_file_module(source, tmp_path, prefix=prefix)
    return module.train(_batches())


@pytest.mark.parametrize("autograph", [True, False])
def test_the_decorated_step_agrees_with_the_eager_one(tmp_path: Path, autograph: bool) -> None:
    fixed = fix_source(MODEL_AND_LOOP, select=["TFR302"])
    assert "@tf.function" in fixed and "reduce_retracing" not in fixed
    if not autograph:
        fixed = fixed.replace("@tf.function", "@tf.function(autograph=False)")
    eager = _losses(MODEL_AND_LOOP, tmp_path, "eager")
    traced = _losses(fixed, tmp_path, "traced")
    assert traced == pytest.approx(eager, rel=1e-5)


def test_a_relaxed_trace_sees_no_batch_size(tmp_path: Path) -> None:
    relaxed = MODEL_AND_LOOP.replace(
        "\ndef train_step", "\n@tf.function(reduce_retracing=True)\ndef train_step"
    )
    with pytest.raises((TypeError, ValueError)):
        _losses(relaxed, tmp_path, "relaxed")
