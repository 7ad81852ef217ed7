"""A loop in a function is replayed with the statements before it that bind
what it needs, also what only a step *defined in that function* reads: the
TF-GAN ESRGAN trainer binds `generator` in an `if`/`else`, and only its nested
`train_step` reads it. A failure inside the replay names the line of the
script, not a line of the replay verify built."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from tests.tf.trainer_sources import DATASET
from tests.tf.verify_pairs import FAST, failed, placed_text, verify_with_callers

from tfrewrite.verify.checks import Request, verify
from tfrewrite.verify.settings import parse_verify_settings
from tfrewrite.verify.targets import pair_targets

pytestmark = pytest.mark.tensorflow

NESTED_STEP = (
    DATASET
    + """

def train(data, warm=False):
    if warm:
        model = tf.keras.models.load_model("no/such/model")
    else:
        model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(1)])
    optimizer = tf.keras.optimizers.SGD(0.05)

    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    step = 0
    for x, y in data:
        step += 1
        loss = train_step(x, y)
    model.save("never/reached")


def main():
    train(make_dataset())


if __name__ == "__main__":
    main()
"""
)
DECORATED = "    @tf.function(reduce_retracing=True)\n    def train_step(x, y):"


def test_a_name_only_the_nested_step_reads_is_bound_before_the_loop() -> None:
    rewrite = NESTED_STEP.replace("    def train_step(x, y):", DECORATED)
    assert rewrite != NESTED_STEP
    [result] = verify_with_callers(NESTED_STEP, rewrite)
    assert result["verdict"] == "equivalent", result
    broken = rewrite.replace("- y))", "- y)) * 1.01")
    [result] = verify_with_callers(NESTED_STEP, broken)
    assert result["verdict"] == "mismatch", result
    assert "train loop: values per step" in failed(result)


FAILS_IN_LOOP = NESTED_STEP.replace("        step += 1\n", "        step += undefined_name\n")


def test_a_failure_in_the_replayed_loop_names_the_line_of_the_script() -> None:
    rewrite = FAILS_IN_LOOP.replace("    def train_step(x, y):", DECORATED)
    [result] = verify_with_callers(FAILS_IN_LOOP, rewrite)
    assert result["verdict"] == "not proven", result
    line = FAILS_IN_LOOP.splitlines().index("        step += undefined_name") + 1
    assert len(FAILS_IN_LOOP.splitlines()) < 50  # the replay is appended after line 50
    [warning] = result["warnings"]
    assert f"NameError: name 'undefined_name' is not defined at case.py, line {line};" in warning


# A second training phase starts from the model the first one saved, which
# only an earlier run of the project writes: the user's harness saves one and
# gives the function its arguments by name (as for TF-GAN's ESRGAN trainer).
PHASE_TWO = """
import tensorflow as tf


def train_phase_two(settings, data):
    model = tf.keras.models.load_model(settings["folder"] + "/phase_one.keras")
    optimizer = tf.keras.optimizers.SGD(0.05)

    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    for x, y in data:
        loss = train_step(x, y)
"""

PHASE_TWO_HARNESS = """
import tempfile

import numpy as np
import tensorflow as tf


def build():
    folder = tempfile.mkdtemp()
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(1)])
    model.save(folder + "/phase_one.keras")
    rng = np.random.default_rng(0)
    x = rng.normal(size=(40, 3)).astype("float32")
    data = tf.data.Dataset.from_tensor_slices((x, x[:, :1] * 2.0)).batch(16)
    return {"settings": {"folder": folder}, "data": data}
"""


def test_a_harness_gives_a_second_phase_its_saved_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "phase_two_harness.py").write_text(PHASE_TWO_HARNESS)
    monkeypatch.syspath_prepend(str(tmp_path))
    settings = parse_verify_settings(
        {"harness": {"case:train_phase_two": "phase_two_harness:build"}}
    )
    rewrite = PHASE_TWO.replace("    def train_step", "    @tf.function\n    def train_step")
    [target] = pair_targets("case.py", "case", PHASE_TWO, rewrite, settings)
    request = Request(
        qualname=target.qualname,
        original_source=PHASE_TWO,
        rewrite_source=rewrite,
        path="case.py",
        options=FAST,
        loop=target.loop,
        harness=target.harness,
    )
    result = verify(request)
    assert result["verdict"] == "equivalent", result
    assert "the arguments of `train_phase_two` built by phase_two_harness:build" in placed_text(
        result
    )
    broken = rewrite.replace("- y))", "- y)) * 1.01")
    result = verify(dataclasses.replace(request, rewrite_source=broken))
    assert result["verdict"] == "mismatch", result


def test_a_harness_that_imports_a_missing_package_needs_that_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "phase_two_missing.py").write_text(
        "import tfrewrite_no_such_package\n\ndef build():\n    return {}\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    settings = parse_verify_settings(
        {"harness": {"case:train_phase_two": "phase_two_missing:build"}}
    )
    rewrite = PHASE_TWO.replace("    def train_step", "    @tf.function\n    def train_step")
    [target] = pair_targets("case.py", "case", PHASE_TWO, rewrite, settings)
    result = verify(
        Request(
            qualname=target.qualname,
            original_source=PHASE_TWO,
            rewrite_source=rewrite,
            path="case.py",
            options=FAST,
            loop=target.loop,
            harness=target.harness,
        )
    )
    assert result["verdict"] == "needs package", result
    assert "tfrewrite_no_such_package" in result["needs_package"]


MAIN_BLOCK_STEP = (
    DATASET
    + """

if __name__ == "__main__":
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(1)])
    optimizer = tf.keras.optimizers.SGD(0.05)
    data = make_dataset()

    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    for epoch in range(2):
        for x, y in data:
            loss = train_step(x, y)
"""
)


def test_a_step_defined_in_the_main_block_is_proven_by_its_loop() -> None:
    """A script that defines its train step inside `if __name__ ==
    "__main__":` and trains there: the decorated step is a changed function
    of the script, and the loop of the main block replays it, with the
    step's definition and what it reads bound before the loop."""
    rewrite = MAIN_BLOCK_STEP.replace("    def train_step(x, y):", DECORATED)
    assert rewrite != MAIN_BLOCK_STEP
    [result] = verify_with_callers(MAIN_BLOCK_STEP, rewrite)
    assert result["verdict"] == "equivalent", failed(result)
    assert result["function"].startswith("loop at line")
