"""The step of `tests/test_per_call_tape_loops.py` decorated as TFR302's
unsafe fix does, run traced without AutoGraph (its loop over the tuple of
noises unrolls): the same losses and weights as the original run eagerly,
batch by batch."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from tests.projects import write_project
from tests.test_per_call_tape_loops import SCRIPT, STEPS

from tfrewrite.pipeline.engine import InputFile, RunOptions, run

from .equivalence import load_module

pytestmark = pytest.mark.tensorflow


def _train(source: str, traced: bool) -> tuple[list[float], list[np.ndarray]]:
    import tensorflow as tf

    tf.keras.utils.set_random_seed(5)
    module = load_module(source)
    step = module.train_step
    if traced:
        step = tf.function(step.python_function, autograph=False)
    model = tf.keras.Sequential([tf.keras.layers.Dense(4)])
    model.build((None, 4))
    optimizer = tf.keras.optimizers.SGD(0.05)
    rng = np.random.default_rng(1)
    losses = []
    for _ in range(3):
        images = tf.constant(rng.uniform(size=(16, 4)), tf.float32)
        noises = tuple(tf.constant(rng.normal(size=(4,)), tf.float32) for _ in range(3))
        losses.append(float(step(model, optimizer, images, noises)))
    return losses, [v.numpy() for v in model.trainable_variables]


def _fixed_steps(root: Path) -> str:
    """`steps.py` as `tfrewrite fix --unsafe-fixes .` leaves the project."""
    write_project(root, {"steps.py": STEPS, "train.py": SCRIPT})
    options = RunOptions(
        rule_codes=("TFR302", "TFR303"), root=str(root), fix=True, unsafe_fixes=True
    )
    result = run([InputFile(str(root / n)) for n in ("steps.py", "train.py")], options, jobs=1)
    (fixed,) = [r.fixed_source for r in result.files if r.path.endswith("steps.py")]
    assert fixed is not None
    return fixed


def test_the_decorated_step_trains_as_the_eager_one(tmp_path: Path) -> None:
    fixed = _fixed_steps(tmp_path)
    # The last batch may be short: the decoration relaxes the batch dimension.
    assert "@tf.function(reduce_retracing=True)\ndef train_step" in fixed
    eager_losses, eager_weights = _train(STEPS, traced=False)
    traced_losses, traced_weights = _train(fixed, traced=True)
    np.testing.assert_allclose(traced_losses, eager_losses, rtol=1e-5)
    for eager, traced in zip(eager_weights, traced_weights, strict=True):
        np.testing.assert_allclose(traced, eager, rtol=1e-5, atol=1e-6)
