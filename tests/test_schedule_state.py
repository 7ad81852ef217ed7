"""A Keras learning-rate schedule runs traced: the optimizer calls it with
its step count inside the traced train step. Python state it reads (a count
another method keeps) is frozen at the first trace (TFR201)."""

from __future__ import annotations

from tfrewrite.api import check_source, fix_source
from tfrewrite.findings import Applicability

# A schedule that counts steps in Python, advanced by a callback's method.
COUNTED = """\
import tensorflow as tf


class DecayByCount(tf.keras.optimizers.schedules.LearningRateSchedule):
    def __init__(self, rate):
        self.rate = rate
        self.count = 0

    def advance(self):
        self.count += 1

    def __call__(self, step):
        return self.rate / (1.0 + self.count)
"""

# The same decay read from the step the optimizer passes.
FROM_STEP = COUNTED.replace(
    "return self.rate / (1.0 + self.count)",
    "return self.rate / (1.0 + tf.cast(step, tf.float32))",
)


def test_python_state_read_by_a_schedule_is_reported():
    [finding] = check_source(COUNTED, select=["TFR201"])
    assert finding.start.line == 13
    assert "`self.count`" in finding.message and "DecayByCount.__call__" in finding.message


def test_a_schedule_computed_from_its_step_is_left_alone():
    assert check_source(FROM_STEP) == []


# A warm-up schedule that branches on its step in Python, and an eager train
# step whose optimizer uses it.
WARMUP = """\
import numpy as np
import tensorflow as tf


class Warmup(tf.keras.optimizers.schedules.LearningRateSchedule):
    def __init__(self, peak, warmup_steps):
        self.peak = peak
        self.warmup_steps = warmup_steps

    def __call__(self, step):
        if step < self.warmup_steps:
            return self.peak * tf.cast(step + 1, tf.float32) / self.warmup_steps
        return tf.constant(self.peak)


def train_step(model, optimizer, x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


def train(steps):
    tf.keras.utils.set_random_seed(0)
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(1)])
    optimizer = tf.keras.optimizers.SGD(learning_rate=Warmup(0.1, 2))
    x = np.ones((8, 3), np.float32)
    y = np.ones((8, 1), np.float32)
    losses = []
    for _ in range(steps):
        losses.append(float(train_step(model, optimizer, x, y)))
    return losses
"""


def test_a_step_is_not_decorated_while_a_schedule_branches_on_its_step():
    [step] = [f for f in check_source(WARMUP, select=["TFR302"])]
    assert step.fix is None
    assert "learning-rate schedule `Warmup.__call__`" in step.message
    assert "Keras calls it without AutoGraph" in step.message
    inline = WARMUP.replace(
        "        losses.append(float(train_step(model, optimizer, x, y)))\n    return losses",
        "        with tf.GradientTape() as tape:\n"
        "            loss = tf.reduce_mean(tf.square(model(x, training=True) - y))\n"
        "        grads = tape.gradient(loss, model.trainable_variables)\n"
        "        optimizer.apply_gradients(zip(grads, model.trainable_variables))\n"
        "        losses.append(float(loss))\n"
        "    return losses",
    )
    assert inline != WARMUP
    [extract] = check_source(inline, select=["TFR303"])
    assert extract.fix is None and "`Warmup.__call__`" in extract.message


def test_a_schedule_without_python_branches_lets_the_step_be_decorated():
    smooth = WARMUP.replace(
        "        if step < self.warmup_steps:\n"
        "            return self.peak * tf.cast(step + 1, tf.float32) / self.warmup_steps\n"
        "        return tf.constant(self.peak)",
        "        ramp = tf.cast(step + 1, tf.float32) / self.warmup_steps\n"
        "        return self.peak * tf.minimum(ramp, 1.0)",
    )
    [step] = check_source(smooth, select=["TFR302"])
    assert step.fix is not None


def test_only_a_schedule_built_where_the_step_is_known_blocks_it(tmp_path):
    """A schedule built by a script that neither imports the step's module
    nor is imported by it (another experiment in the same folder) is not the
    step's optimizer's."""
    from pathlib import Path

    from tfrewrite.pipeline.engine import InputFile, RunOptions, run

    schedule_only = WARMUP.split("def train_step(")[0] + (
        "\n\noptimizer = tf.keras.optimizers.SGD(learning_rate=Warmup(0.1, 2))\n"
    )
    step_only = "import numpy as np\nimport tensorflow as tf\n\n\ndef train_step(" + (
        WARMUP.split("def train_step(")[1].replace("Warmup(0.1, 2)", "0.1")
    )
    (tmp_path / "schedules.py").write_text(schedule_only)
    (tmp_path / "experiment.py").write_text(step_only)
    options = RunOptions(rule_codes=("TFR302",), root=str(tmp_path), fix=False)
    files = [InputFile(str(tmp_path / n)) for n in ("schedules.py", "experiment.py")]
    [step] = run(files, options, jobs=1).findings
    assert Path(step.path).name == "experiment.py" and step.fix is not None
    (tmp_path / "experiment.py").write_text("from schedules import Warmup\n" + step_only)
    [step] = run(files, options, jobs=1).findings
    assert step.fix is None and "`Warmup.__call__` (schedules.py:10)" in step.message


# The same warm-up over a fixed number of steps: the schedule's branch on the
# optimizer's scalar step becomes a `tf.cond`, and then the step is decorated.
WARMUP_FIXED = WARMUP.replace("if step < self.warmup_steps:", "if step < 2:")


def test_a_schedule_branch_rewritten_as_cond_lets_the_step_be_decorated():
    """The `tf.cond` is safe; decorating the step then rests on a schedule of
    the project that Keras calls in the trace: an unsafe fix verify proves."""
    fixed = fix_source(WARMUP_FIXED)
    assert "return tf.cond(\n            step < 2," in fixed
    assert "@tf.function" not in fixed
    [step] = check_source(fixed, select=["TFR302"])
    assert step.fix.applicability == Applicability.UNSAFE
    assert "may call the learning-rate schedule `Warmup.__call__`" in step.fix.message
    migrated = fix_source(WARMUP_FIXED, unsafe_fixes=True)
    assert "@tf.function\ndef train_step(" in migrated
    assert check_source(migrated, select=["TFR101", "TFR302"]) == []


def test_a_schedule_calling_python_math_on_its_step_blocks_the_step():
    cosine = WARMUP_FIXED.replace(
        "        return tf.constant(self.peak)",
        "        return self.peak * math.cos(step / 100.0)",
    ).replace("import numpy as np\n", "import math\n\nimport numpy as np\n")
    # Its branch on the step becomes a `tf.cond`; `math.cos` of a tensor stays.
    [step] = check_source(fix_source(cosine), select=["TFR302"])
    assert step.fix is None and "which calls Python's `math.cos` on it" in step.message
