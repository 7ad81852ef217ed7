"""What one rule fixes alone, the full rule set fixes too.

A safe fix must not depend on which other rules run: `--select TFR302`
alone decorating a train step that the full run keeps eager (because
something in the step changes meaning under tracing) is a safe fix that is
not safe. The decoration gate sees only the findings of selected rules, so
every hazard that must keep a step eager is a fact the gate asks whatever is
selected (`facts.step_hazards`); this sweep checks that over every corpus
file and every rule.
"""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest

from tfrewrite.pipeline.engine import run
from tfrewrite.pipeline.run_options import InputFile, RunOptions
from tfrewrite.rules import ALL_RULES

ROOT = Path(__file__).resolve().parent.parent
CODES = tuple(rule.code for rule in ALL_RULES)
FILES = sorted(
    path
    for corpus in (ROOT / "examples", ROOT / "tests" / "data" / "adversarial")
    for path in corpus.rglob("*.py")
)


def _applied(path: Path, codes: tuple[str, ...]) -> tuple[set[tuple[str, int]], list[str]]:
    """(code, line) of the safe fixes a `fix` run with `codes` applies to
    `path`, and the messages of the findings it leaves."""
    options = RunOptions(rule_codes=codes, root=str(path.parent), fix=True)
    (result,) = run([InputFile(str(path))], options, jobs=1).files
    assert result.error is None, result.error.describe()
    applied = {(f.code, f.start.line) for f in result.fixes_applied}
    return applied, [f"{f.code} {f.message}" for f in result.findings]


@pytest.mark.parametrize("original", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_rule_selected_alone_fixes_nothing_the_full_run_refuses(
    original: Path, tmp_path: Path
) -> None:
    path = tmp_path / original.name
    shutil.copyfile(original, path)
    everything, _ = _applied(path, CODES)
    extra = {}
    for code in CODES:
        alone, _ = _applied(path, (code,))
        if alone - everything:
            extra[code] = sorted(alone - everything)
    assert extra == {}, f"fixed by a single rule, refused by the full run: {extra}"


# A train step that logs a tensor through Python logging: traced, the line
# logs once, a symbolic tensor. TFR205 reports it (no fix), and the step
# stays eager, whether TFR205 is selected or not.
LOGGING_STEP = """
import logging

import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.Adam()
loss_fn = tf.keras.losses.MeanSquaredError()
logger = logging.getLogger(__name__)


def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    {log_call}("loss %s", loss)
    return loss


def train(dataset):
    for x, y in dataset:
        train_step(x, y)
"""


@pytest.mark.parametrize(
    "log_call",
    [
        "tf.get_logger().info",
        "logging.getLogger(__name__).warning",
        "logger.info",
        "logging.info",
        "tf.compat.v1.logging.info",
    ],
)
@pytest.mark.parametrize("select", [("TFR302",), ("TFR302", "TFR205"), CODES])
def test_a_step_that_logs_stays_eager_whatever_is_selected(
    log_call: str, select: tuple[str, ...], tmp_path: Path
) -> None:
    path = tmp_path / "train.py"
    path.write_text(textwrap.dedent(LOGGING_STEP).replace("{log_call}", log_call))
    applied, remaining = _applied(path, select)
    assert not any(code == "TFR302" for code, _ in applied)
    (step,) = [m for m in remaining if m.startswith("TFR302")]
    assert "Python logging runs once, at trace time" in step or "TFR205" in step, step
