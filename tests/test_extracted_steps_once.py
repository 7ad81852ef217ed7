"""A fix round that extracts an inline tape loop (TFR303) can turn the method
around it into a train step; a loop of another module calls that method by
name (`learner.train_on_batch(...)` in `train.py`). Re-indexing only the
fixed module, the round keeps the names the project's loops call
(`ModuleIndex.loop_method_names`), so `fix` does in one run what it would
otherwise do in two: `fix` twice equals `fix` once. A step that copies
weights on the host (`get_weights`/`set_weights`) is not decorated."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tfrewrite.pipeline.engine import InputFile, RunOptions, run

LEARNER = """
import tensorflow as tf


class Learner:
    def __init__(self, model):
        self.model = model

    def train_on_batch(self, tasks, inner_optimizer, outer_optimizer, inner_steps):
        {save}
        for x, y in tasks:
            for _ in range(inner_steps):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(self.model(x, training=True) - y))
                grads = tape.gradient(loss, self.model.trainable_variables)
                inner_optimizer.apply_gradients(zip(grads, self.model.trainable_variables))
        with tf.GradientTape() as tape:
            loss = tf.add_n([tf.reduce_mean(tf.square(self.model(x) - y)) for x, y in tasks])
        grads = tape.gradient(loss, self.model.trainable_variables)
        outer_optimizer.apply_gradients(zip(grads, self.model.trainable_variables))
        {restore}
        return loss
"""

TRAIN = """
def train(learner, batches, inner, outer):
    for tasks in batches:
        learner.train_on_batch(tasks, inner, outer, 5)
"""


def _fix(tmp_path: Path) -> list[str]:
    """Run `fix --unsafe-fixes` over the project, write what it fixed, and
    return the codes of the findings it fixed (a step the rounds decorate
    once the extraction makes it one is none of them)."""
    files = [InputFile(str(tmp_path / n)) for n in ("learner.py", "train.py")]
    codes = ("TFR302", "TFR303", "TFR304")
    options = RunOptions(rule_codes=codes, root=str(tmp_path), fix=True, unsafe_fixes=True)
    result = run(files, options, jobs=1)
    for fixed in result.files:
        if fixed.fixed_source is not None:
            Path(fixed.path).write_text(fixed.fixed_source)
    return sorted(f.code for f in result.fixes_applied)


@pytest.mark.parametrize(
    ("save", "restore", "decorated"),
    [
        ("pass", "pass", True),
        ("saved = self.model.get_weights()", "self.model.set_weights(saved)", False),
    ],
)
def test_fix_twice_equals_fix_once(tmp_path: Path, save: str, restore: str, decorated: bool):
    learner = textwrap.dedent(LEARNER).replace("{save}", save).replace("{restore}", restore)
    (tmp_path / "learner.py").write_text(learner)
    (tmp_path / "train.py").write_text(textwrap.dedent(TRAIN))
    assert "TFR303" in _fix(tmp_path)
    text = (tmp_path / "learner.py").read_text()
    assert ("@tf.function\n    def train_on_batch" in text) == decorated
    assert _fix(tmp_path) == []
    assert (tmp_path / "learner.py").read_text() == text
