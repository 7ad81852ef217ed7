"""A decorated loss handed to `compile` in another module, fixed with the
project: its decorator goes (TFR301) and every other hazard in it is fixed in
the same `fix`, so the loss is graph-safe where it still runs traced, in
`fit`'s step (Keras 3 traces it without AutoGraph). Before this, the loss
lost its decorator, was taken for eager, and `fit` raised on the tensor `if`
left in it."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import tensorflow as tf
from test_loss_contexts import COMPILE, LOSSES, STEP

from tfrewrite.pipeline.engine import InputFile, RunOptions, run
from tfrewrite.rules import RULE_CODES

from .equivalence import assert_same, load_module, python_function, run_eagerly
from .fdcapture import capture_fds

pytestmark = pytest.mark.tensorflow

# Errors of about 0.1, 0.3, 0.7 and 1.5: every rung of `banded`'s ladder,
# and both sides of `loud`'s `err > 1.0`.
TARGETS = [np.full((2, 3), v, "float32") for v in (0.1, 0.3, 0.7, 1.5)]
ZEROS = np.zeros((2, 3), "float32")


def _fixed_losses(tmp_path: Path, training: str) -> str:
    files = {"losses.py": LOSSES, "train.py": training}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    options = RunOptions(rule_codes=RULE_CODES, root=str(tmp_path), fix=True, unsafe_fixes=True)
    result = run([InputFile(str(tmp_path / n)) for n in files], options, jobs=1)
    assert result.findings == []
    [text] = [r.fixed_source for r in result.files if r.path.endswith("losses.py")]
    assert "@tf.function" not in text and "if err" not in text and "np.mean" not in text
    assert "np.random" not in text
    return text


@pytest.mark.parametrize("training", [COMPILE, STEP], ids=["compile", "train-step"])
def test_every_fix_in_an_undecorated_loss_holds_traced_without_autograph(tmp_path, training):
    original = load_module(LOSSES)
    fixed = load_module(_fixed_losses(tmp_path, training))
    for name in ("banded", "summed", "loud", "jittered"):
        eager = python_function(getattr(original, name))
        traced = tf.function(getattr(fixed, name), autograph=False)
        for y_true in TARGETS:
            with capture_fds() as expected_out:
                expected = run_eagerly(eager, y_true, ZEROS)
            with capture_fds() as actual_out:
                actual = traced(y_true, ZEROS)
            # `jittered` adds a fresh draw of N(0, 0.01) on large errors.
            atol = 0.06 if name == "jittered" else 1e-6
            assert_same(expected, actual, atol=atol, what=f"{name} on {float(y_true[0, 0])}")
            # One "large ..." line per call where the error is large, as eagerly.
            assert [line.split()[0] for line in actual_out.stdout_lines()] == [
                line.split()[0] for line in expected_out.stdout_lines()
            ]


def _history(losses, run_eagerly_: bool) -> list[float]:
    keras = tf.keras
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(3)])
    model.compile(
        optimizer=keras.optimizers.SGD(0.1),
        loss=losses.banded,
        metrics=[losses.summed],
        run_eagerly=run_eagerly_,
    )
    x = np.linspace(-1.0, 1.0, 24, dtype="float32").reshape(8, 3)
    y = 3.0 * x
    history = model.fit(x, y, batch_size=4, epochs=3, verbose=0, shuffle=False)
    return history.history["loss"]


def test_fit_trains_the_fixed_loss_as_the_original_trains_eagerly(tmp_path):
    original = load_module(LOSSES)
    eager = SimpleNamespace(
        banded=python_function(original.banded), summed=python_function(original.summed)
    )
    fixed = load_module(_fixed_losses(tmp_path, COMPILE))
    expected = _history(eager, run_eagerly_=True)
    actual = _history(fixed, run_eagerly_=False)
    np.testing.assert_allclose(actual, expected, rtol=1e-5)
