"""The editor's re-check after an edit (`pipeline/incremental.py`): only the
functions an edit can change are checked again, and the findings are those
a check of the whole edited text gives, for every kind of edit in every
function (`benchmarks/incremental_identity.py` makes them)."""

from __future__ import annotations

import importlib.util
import sys
import textwrap
from pathlib import Path

import pytest

from tfrewrite.pipeline import incremental

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def _load(name: str):  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


identity = _load("incremental_identity")
OPTIONS = identity.options_for("TFR")

SOURCE = textwrap.dedent(
    """
    import random

    import numpy as np
    import tensorflow as tf

    HISTORY = []


    @tf.function
    def noisy_loss(y_true, y_pred):
        noise = np.random.normal(0.0, 1.0)
        print("loss", y_pred)
        return tf.reduce_mean(tf.square(y_true - y_pred)) + noise


    def train_step(model, optimizer, x, y):
        with tf.GradientTape() as tape:
            loss = noisy_loss(y, model(x))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss


    @tf.function
    def clipped(x):
        if tf.reduce_max(x) > 1.0:
            x = x / tf.reduce_max(x)
        HISTORY.append(x)
        return x * random.random()


    class Scale(tf.keras.layers.Layer):
        def build(self, shape):
            self.w = self.add_weight(shape=(shape[-1],))

        def call(self, x):
            if tf.reduce_sum(x) > 0:
                return x * self.w
            return x


    def train(model, optimizer, dataset, epochs):
        for epoch in range(epochs):
            for step, (x, y) in enumerate(dataset):
                if step % 2:
                    with tf.GradientTape() as tape:
                        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
                    grads = tape.gradient(loss, model.trainable_variables)
                    optimizer.apply_gradients(zip(grads, model.trainable_variables))


    def unrelated(values):
        return sorted(values)
    """
)


def _checked(source: str) -> incremental.Checked:
    job = identity.job_for("steps.py", source, OPTIONS)
    result, remembered = incremental.check(job, None)
    assert result.error is None and remembered is not None
    return remembered


def _plan(before: str, after: str) -> incremental.Recheck | None:
    job = identity.job_for("steps.py", after, OPTIONS)
    return incremental.plan(_checked(before), after, job.index, job.traced, OPTIONS)


EDITS = list(identity.edits_of(SOURCE))


def test_the_source_has_findings_of_many_rules() -> None:
    codes = {f[4] for f in identity.keys(list(_checked(SOURCE).findings))}
    assert {"TFR101", "TFR102", "TFR103", "TFR202", "TFR301", "TFR303"} <= codes


@pytest.mark.parametrize(("what", "edited"), EDITS, ids=[what for what, _ in EDITS])
def test_every_edit_gives_the_findings_of_a_whole_check(what: str, edited: str) -> None:
    found = identity.differences("steps.py", SOURCE, edited, OPTIONS)
    assert found is not None
    again, whole, _, _ = found
    assert again == whole


def test_an_edit_in_one_function_checks_it_and_what_names_it_again() -> None:
    edited = SOURCE.replace("    return sorted(values)", "    return sorted(values)[::-1]")
    plan = _plan(SOURCE, edited)
    assert plan is not None and plan.units == {"unrelated"}
    edited = SOURCE.replace("noise = np.random.normal(0.0, 1.0)", "noise = np.random.uniform()")
    plan = _plan(SOURCE, edited)
    assert plan is not None and plan.units == {"noisy_loss", "train_step"}


def test_an_edit_in_a_method_checks_its_class_again() -> None:
    edited = SOURCE.replace("return x * self.w", "return x * self.w + 1.0")
    plan = _plan(SOURCE, edited)
    assert plan is not None and plan.units == {"Scale.build", "Scale.call"}


def test_a_comment_outside_the_functions_checks_nothing_again() -> None:
    plan = _plan(SOURCE, SOURCE + "# a note\n")
    assert plan is not None and plan.units == frozenset()
    assert len(plan.kept) == len(_checked(SOURCE).findings)


def test_an_edit_outside_the_functions_checks_the_whole_file() -> None:
    assert _plan(SOURCE, SOURCE.replace("HISTORY = []", "HISTORY = [0]")) is None
    assert _plan(SOURCE, "import os\n" + SOURCE) is None


def test_findings_naming_a_line_are_checked_again_when_lines_move() -> None:
    """The inline loop's finding names the `if` around it by its line: a
    line added above moves that line, so the finding is made again."""
    edited = SOURCE.replace("\n\n@tf.function\ndef clipped", "\n\n\n@tf.function\ndef clipped")
    plan = _plan(SOURCE, edited)
    assert plan is not None and "train" in plan.units and "unrelated" not in plan.units
    messages = [f.message for f in _checked(SOURCE).findings if f.code == "TFR303"]
    assert any("line" in m for m in messages)
