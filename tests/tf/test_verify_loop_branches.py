"""A rewrite proven by replaying its training loop is `equivalent` only when
every `tf.cond` it introduced took both branches during the replay: a branch
the script's data never reaches is not proven, however well the rest matched
(the same rule as for a function checked on its own inputs). So are the
batches of a train step's harness."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.tf.trainer_sources import DATASET
from tests.tf.verify_pairs import FAST, verify_with_callers

from tfrewrite.verify.checks import Request, verify
from tfrewrite.workspace.line_names import place_lines

pytestmark = pytest.mark.tensorflow

SCRIPT = (
    DATASET
    + """

def train(data):
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(1)])
    optimizer = tf.keras.optimizers.SGD(0.05)

    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x) - y))
            if tf.shape(x)[0] < ROWS:
                loss = loss * 0.5
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    for x, y in data:
        loss = train_step(x, y)


def main():
    train(make_dataset())


if __name__ == "__main__":
    main()
"""
)
IF = """            if tf.shape(x)[0] < ROWS:
                loss = loss * 0.5
"""
COND = """            loss = tf.cond(tf.shape(x)[0] < ROWS, lambda: loss * {scale}, lambda: loss)
"""
STEP = "    def train_step(x, y):"
DECORATED = "    @tf.function(reduce_retracing=True)\n    def train_step(x, y):"


def _pair(rows: int, scale: str) -> tuple[str, str]:
    original = SCRIPT.replace("ROWS", str(rows))
    rewrite = original.replace(STEP, DECORATED).replace(
        IF.replace("ROWS", str(rows)), COND.format(scale=scale).replace("ROWS", str(rows))
    )
    assert "tf.cond" in rewrite and "@tf.function" in rewrite
    return original, rewrite


def _cond_line(rewrite: str) -> int:
    return next(i for i, line in enumerate(rewrite.splitlines(), start=1) if "tf.cond" in line)


def test_a_branch_the_replayed_data_never_reaches_is_not_proven() -> None:
    # Batches of 16 rows and a short one of 8: no batch has fewer than 2 rows,
    # so the (wrong) true branch never runs, and everything else matches.
    original, rewrite = _pair(2, "0.7")
    [result] = verify_with_callers(original, rewrite)
    assert result["verdict"] == "not proven", result
    assert all(c["ok"] for c in result["checks"]), result
    line = _cond_line(rewrite)
    assert result["branches"] == [{"line": line, "true": False, "false": True}]
    text = place_lines("\n".join(result["warnings"]))
    assert f"the true branch of the tf.cond on line {line} was never taken" in text, text
    assert "harness" in text


def test_a_replay_whose_data_takes_both_branches_is_equivalent() -> None:
    # The short batch (8 rows) takes the true branch, the full ones the false one.
    original, rewrite = _pair(16, "0.5")
    [result] = verify_with_callers(original, rewrite)
    assert result["verdict"] == "equivalent", result
    assert result["branches"] == [{"line": _cond_line(rewrite), "true": True, "false": True}]


def test_a_wrong_branch_the_replayed_data_reaches_is_a_mismatch() -> None:
    original, rewrite = _pair(16, "0.7")
    [result] = verify_with_callers(original, rewrite)
    assert result["verdict"] == "mismatch", result


# --- a train step with a harness: its batches must take both branches -----------

HARNESS = """
import keras
import numpy as np


def build():
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    rng = np.random.default_rng(0)
    batches = [
        (rng.normal(size=(n, 3)).astype("float32"), rng.normal(size=(n, 1)).astype("float32"))
        for n in (16, 16, 8)
    ]
    return {"model": model, "optimizer": keras.optimizers.SGD(0.05), "batches": batches}
"""

STEP_MODULE = """
import tensorflow as tf


def train_step(model, optimizer, x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
        if tf.shape(x)[0] < ROWS:
            loss = loss * 0.5
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss
"""


def _harness_verdict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rows: int, scale: str
) -> tuple[dict, int]:
    (tmp_path / "branch_harness.py").write_text(HARNESS)
    monkeypatch.syspath_prepend(str(tmp_path))
    original = STEP_MODULE.replace("ROWS", str(rows))
    rewrite = original.replace("def train_step", "@tf.function\ndef train_step").replace(
        IF.replace("ROWS", str(rows)).replace("            ", "        "),
        COND.format(scale=scale).replace("ROWS", str(rows)).replace("            ", "        "),
    )
    assert "tf.cond" in rewrite
    result = verify(
        Request(
            "train_step",
            original,
            rewrite,
            path="steps.py",
            harness="branch_harness:build",
            options=FAST,
        )
    )
    return result, _cond_line(rewrite)


def test_a_branch_the_harness_batches_never_reach_is_not_proven(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result, line = _harness_verdict(tmp_path, monkeypatch, 2, "0.7")
    assert result["verdict"] == "not proven", result
    assert all(c["ok"] for c in result["checks"]), result
    assert result["branches"] == [{"line": line, "true": False, "false": True}]
    text = place_lines("\n".join(result["warnings"]))
    assert f"the true branch of the tf.cond on line {line} was never taken" in text, text


def test_harness_batches_that_take_both_branches_are_equivalent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result, line = _harness_verdict(tmp_path, monkeypatch, 16, "0.5")
    assert result["verdict"] == "equivalent", result
    assert result["branches"] == [{"line": line, "true": True, "false": True}]
