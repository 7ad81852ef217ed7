"""`fix` over a project where a fix in one file removes what kept a fix in
another from applying: a learning-rate schedule's Python `if` on its step
(which Keras calls without AutoGraph in a traced step, and which raises
there) is rewritten as `tf.cond` in its module; the train step of another
module, whose optimizer calls that schedule, can then be decorated. `fix`
checks the project again over its fixed text, so running it twice changes
nothing the first run left."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tfrewrite.pipeline.engine import InputFile, RunOptions, run

SCHEDULE = """
import tensorflow as tf


class Warmup(tf.keras.optimizers.schedules.LearningRateSchedule):
    def __init__(self, peak=1e-3, warmup_steps=100):
        self.peak = peak
        self.warmup_steps = warmup_steps

    def __call__(self, step):
        if step < self.warmup_steps:
            return self.peak * step / self.warmup_steps
        return self.peak
"""

STEP = """
import tensorflow as tf


class TrainStep:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer

    def __call__(self, x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(y - self.model(x, training=True)))
        grads = tape.gradient(loss, self.model.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))
        return loss
"""

MAIN = """
import tensorflow as tf
from schedules import Warmup
from steps import TrainStep


class Trainer:
    def __init__(self, model):
        self.train_step = TrainStep(model, tf.keras.optimizers.Adam(Warmup()))

    def train(self, dataset, epochs):
        for epoch in range(epochs):
            for x, y in dataset:
                loss = self.train_step(x, y)
            print(epoch, float(loss))
"""


def _fix(root: Path) -> dict[str, str]:
    """Run `fix --unsafe-fixes` over the project and write what it fixed."""
    files = [InputFile(str(root / name)) for name in ("schedules.py", "steps.py", "main.py")]
    options = RunOptions(
        rule_codes=("TFR101", "TFR302"), root=str(root), fix=True, unsafe_fixes=True
    )
    result = run(files, options, jobs=1)
    changed = {}
    for r in result.files:
        if r.changed:
            assert r.fixed_source is not None
            Path(r.path).write_text(r.fixed_source)
            changed[Path(r.path).name] = r.fixed_source
    return changed


def test_a_fix_in_one_file_lets_another_apply_in_the_same_run(tmp_path: Path) -> None:
    for name, text in {"schedules.py": SCHEDULE, "steps.py": STEP, "main.py": MAIN}.items():
        (tmp_path / name).write_text(textwrap.dedent(text).lstrip())
    first = _fix(tmp_path)
    assert "tf.cond(" in first["schedules.py"]
    assert "    @tf.function\n    def __call__(self, x, y):" in first["steps.py"]
    assert _fix(tmp_path) == {}
