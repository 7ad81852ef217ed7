"""A training loop whose steps are random (dropout, input noise) cannot match
value for value between the eager original and the traced rewrite: it is
replayed under several seeds per side and compared by distribution. A correct
rewrite verifies; a step that trains on a wrong loss is still a mismatch; a
deterministic loop is still compared value for value."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from tests.tf.test_verify_mutations import OPTIONS
from tests.tf.verify_pairs import failures, verify_pair

pytestmark = pytest.mark.tensorflow

ROOT = Path(__file__).parent.parent.parent

RANDOM_STEP = """
import keras
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(0)
features = rng.normal(size=(40, 3)).astype("float32")
targets = features @ np.array([[1.0], [-2.0], [0.5]], dtype="float32")
dataset = tf.data.Dataset.from_tensor_slices((features, targets)).batch(16)

keras.utils.set_random_seed(0)
model = keras.Sequential(
    [keras.Input((3,)), keras.layers.Dense(16), keras.layers.Dropout(0.3), keras.layers.Dense(1)]
)
optimizer = keras.optimizers.SGD(learning_rate=0.05)


def train_step(x, y):
    x = x + np.random.normal(0.0, 0.05, size=x.shape).astype("float32")
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


def main():
    for epoch in range(2):
        for x, y in dataset:
            loss = train_step(x, y)
"""
RANDOM_STEP_OK = RANDOM_STEP.replace(
    "def train_step", "@tf.function(reduce_retracing=True)\ndef train_step"
).replace(
    'np.random.normal(0.0, 0.05, size=x.shape).astype("float32")',
    "tf.random.normal(tf.shape(x), mean=0.0, stddev=0.05, dtype=x.dtype)",
)


def _loop(results: list[dict]) -> dict:
    loops = [r for r in results if r["function"].startswith("loop at line")]
    assert len(loops) == 1, results
    return loops[0]


def test_random_loop_verifies_by_distribution() -> None:
    loop = _loop(verify_pair(RANDOM_STEP, RANDOM_STEP_OK, OPTIONS))
    assert loop["verdict"] == "equivalent", failures([loop])
    assert loop["stochastic"]
    assert "replays per side" in " ".join(loop["inputs"])
    # The step is replayed per batch (two epochs of 16, 16, 8), not per epoch.
    assert "batch sizes 16, 16, 8, 16, 16, 8" in loop["inputs"][0]


@pytest.mark.parametrize(
    ("case", "broken"),
    [
        ("a loss scaled by 1.5", "- y)) * 1.5\n"),
        ("shifted targets", "- (y + 1.0)))\n"),
    ],
)
def test_random_loop_that_trains_on_a_wrong_loss_is_a_mismatch(case: str, broken: str) -> None:
    wrong = RANDOM_STEP_OK.replace("- y))\n", broken)
    assert wrong != RANDOM_STEP_OK
    loop = _loop(verify_pair(RANDOM_STEP, wrong, OPTIONS))
    assert loop["verdict"] == "mismatch", loop
    failed = {c["name"] for c in loop["checks"] if not c["ok"]}
    assert failed & {"train loop: values per step", "train loop: final weights"}, loop


def test_dropout_masks_are_the_same_eager_and_traced_for_one_seed() -> None:
    """Without input noise the only randomness is dropout, which both sides
    draw alike: the loop compares value for value, not by distribution."""
    no_noise = RANDOM_STEP.replace(
        '    x = x + np.random.normal(0.0, 0.05, size=x.shape).astype("float32")\n', ""
    )
    decorated = no_noise.replace(
        "def train_step", "@tf.function(reduce_retracing=True)\ndef train_step"
    )
    loop = _loop(verify_pair(no_noise, decorated, OPTIONS))
    assert loop["verdict"] == "equivalent", failures([loop])
    assert not loop["stochastic"]


def test_the_migrated_tutorial_verifies(tmp_path: Path) -> None:
    """`fix --unsafe-fixes` on examples/eager_tutorial.py, then `verify`:
    every changed function and the training loop are equivalent, and the
    decorator removal is reported as fixing a divergence of the original."""
    for name in ("eager_tutorial.py", "pyproject.toml"):
        (tmp_path / name).write_text((ROOT / "examples" / name).read_text())
    env = {"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "tfrewrite",
            "verify",
            "--unsafe-fixes",
            "--no-xla",
            "--jobs",
            "1",
            "eager_tutorial.py",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Verified 2 functions: 2 equivalent." in done.stdout, done.stdout
    assert "froze at its trace-time value False in the original" in done.stdout
    assert "replays `for x, y in dataset`" in done.stdout


PRINTING_STEP = """
import keras
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(0)
features = rng.normal(size=(40, 3)).astype("float32")
targets = features @ np.array([[1.0], [-2.0], [0.5]], dtype="float32")
dataset = tf.data.Dataset.from_tensor_slices((features, targets)).batch(16)

model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
optimizer = keras.optimizers.SGD(learning_rate=0.05)


def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    print(f"loss {loss.numpy():.3f}")
    print("loss %.4f" % loss)
    return loss


for x, y in dataset:
    loss = train_step(x, y)
"""


def test_a_step_with_formatted_prints_is_decorated_and_verifies() -> None:
    """The combined fix (decorator, both prints into `tf.print`) run by
    `fix --unsafe-fixes`: the loop replays eagerly before and traced after."""
    from tfrewrite.api import fix_source

    fixed = fix_source(PRINTING_STEP, "case.py", unsafe_fixes=True)
    assert "@tf.function" in fixed and "tf.print(" in fixed
    results = verify_pair(PRINTING_STEP, fixed, OPTIONS)
    assert all(r["verdict"] == "equivalent" for r in results), failures(results) or results
    assert not _loop(results)["stochastic"]
