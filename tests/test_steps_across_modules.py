"""A train step in one module and the code of another that it would trace
(`pipeline/step_reconciliation.py`): the step's decoration is withheld
when that code has a hazard no fix rewrites, and the finding names it;
code that only withheld steps would trace runs eagerly, and is no finding.
Checked from the command line's engine, with and without the cache, and
by `fix`, which leaves such a project as it is."""

from __future__ import annotations

from pathlib import Path

from tests.projects import write_project

from tfrewrite.findings import Finding
from tfrewrite.pipeline.cache import CACHE_DIR_NAME, Cache
from tfrewrite.pipeline.engine import run
from tfrewrite.pipeline.run_options import InputFile, RunOptions
from tfrewrite.rules import RULES_BY_CODE

ALL_RULES = tuple(sorted(RULES_BY_CODE))

# A step whose result a helper of another module passes through after
# appending a line to a log file: traced, the file is written once.
LOGGING_HELPER = """
def log_loss(loss):
    with open("losses.txt", "a") as log:
        log.write("step\\n")
    return loss
"""

STEP_CALLING_THE_HELPER = """
import tensorflow as tf

import helpers

model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.SGD(0.1)


def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((model(x) - y) ** 2)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return helpers.log_loss(loss)


def train(batches):
    for x, y in batches:
        train_step(x, y)
"""

# A helper drawing NumPy noise that a fix can rewrite, and a step whose
# own `float(...)` keeps it eager: the helper runs eagerly as shipped.
NOISE_HELPER = """
import numpy as np


def noisy(x):
    return x + np.random.normal(0.0, 0.1, size=(2, 1)).astype("float32")
"""

STEP_KEPT_EAGER = """
import tensorflow as tf

import helpers

model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.SGD(0.1)
history = []


def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((model(x) - helpers.noisy(y)) ** 2)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    history.append(float(loss))


def train(batches):
    for x, y in batches:
        train_step(x, y)
"""

# Another script whose step the same helper runs in, and that nothing
# keeps eager: the helper is traced code, through that step.
STEP_DECORATED_BY_A_FIX = """
import tensorflow as tf

import helpers

model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.SGD(0.1)


def fine_tune(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((model(x) - helpers.noisy(y)) ** 2)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))


def tune(batches):
    for x, y in batches:
        fine_tune(x, y)
"""


def _project(tmp_path: Path, files: dict[str, str]) -> list[InputFile]:
    write_project(tmp_path, files)
    return [InputFile(str(tmp_path / name)) for name in sorted(files)]


def _check(tmp_path: Path, files: list[InputFile], cache: Path | None = None) -> list[Finding]:
    options = RunOptions(rule_codes=ALL_RULES, root=str(tmp_path))
    return run(files, options, jobs=1, cache=cache and Cache(cache, options)).findings


def _fix(tmp_path: Path, files: list[InputFile], unsafe: bool) -> dict[str, str]:
    options = RunOptions(rule_codes=ALL_RULES, root=str(tmp_path), fix=True, unsafe_fixes=unsafe)
    result = run(files, options, jobs=1)
    assert not result.errors
    return {Path(r.path).name: r.fixed_source for r in result.files if r.changed}


def test_a_helper_writing_a_file_withholds_the_step_of_another_module(tmp_path: Path) -> None:
    files = _project(tmp_path, {"helpers.py": LOGGING_HELPER, "train.py": STEP_CALLING_THE_HELPER})
    findings = _check(tmp_path, files)
    assert [(Path(f.path).name, f.code) for f in findings] == [("train.py", "TFR302")]
    step = findings[0]
    assert step.fix is None
    assert "no fix: it would trace code of other modules" in step.message
    assert "in `log_loss` (" in step.message and "helpers.py:2): TFR202" in step.message
    # Neither `fix` decorates the step: traced, the log would get one line.
    assert _fix(tmp_path, files, unsafe=False) == {}
    assert _fix(tmp_path, files, unsafe=True) == {}


def test_the_cache_gives_the_same_findings(tmp_path: Path) -> None:
    files = _project(tmp_path, {"helpers.py": LOGGING_HELPER, "train.py": STEP_CALLING_THE_HELPER})
    cold = _check(tmp_path, files, tmp_path / CACHE_DIR_NAME)
    warm = _check(tmp_path, files, tmp_path / CACHE_DIR_NAME)
    (tmp_path / "train.py").write_text(
        (tmp_path / "train.py").read_text() + "\n\nEPOCHS = 3\n", encoding="utf-8"
    )
    changed = _check(tmp_path, files, tmp_path / CACHE_DIR_NAME)
    assert [f.message for f in cold] == [f.message for f in warm] == [f.message for f in changed]
    assert [f.code for f in cold] == ["TFR302"]


def test_code_only_a_withheld_step_traces_is_no_finding(tmp_path: Path) -> None:
    files = _project(tmp_path, {"helpers.py": NOISE_HELPER, "train.py": STEP_KEPT_EAGER})
    findings = _check(tmp_path, files)
    assert [(Path(f.path).name, f.code) for f in findings] == [("train.py", "TFR302")]
    assert findings[0].fix is None and "TFR202 `history.append(...)`" in findings[0].message
    # The helper runs eagerly: its NumPy draw is left as it is.
    assert _fix(tmp_path, files, unsafe=True) == {}


def test_a_helper_another_step_traces_keeps_its_finding_and_fix(tmp_path: Path) -> None:
    sources = {"helpers.py": NOISE_HELPER, "train.py": STEP_KEPT_EAGER}
    files = _project(tmp_path, {**sources, "tune.py": STEP_DECORATED_BY_A_FIX})
    found = sorted((Path(f.path).name, f.code, f.fix is not None) for f in _check(tmp_path, files))
    assert found == [
        ("helpers.py", "TFR102", True),
        ("train.py", "TFR302", False),
        ("tune.py", "TFR302", True),
    ]
    fixed = _fix(tmp_path, files, unsafe=True)
    assert set(fixed) == {"helpers.py", "tune.py"}
    assert "tf.random.normal" in fixed["helpers.py"]
    assert "@tf.function\ndef fine_tune" in fixed["tune.py"]
