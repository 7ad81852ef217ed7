"""Objects handed out by a list: `trackers = [recall, spread, keras_mean]`
built by a function, and a step it defines that calls `t.update(...)` for
each `t` in it. The call runs each project class's method, traced with the
step; the list's outside objects (a Keras metric) have no code of the
project's. An object built by a function around the step outlives each
call, so a method called only for its effect on it is followed too."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tfrewrite.facts.index import build_index
from tfrewrite.pipeline.engine import InputFile, RunOptions, run

TRACKERS = """
import numpy as np


class Recall:
    def __init__(self):
        self.hits = []

    def update(self, pred, target):
        self.hits.extend((pred.numpy() > 0.5) == target.numpy())


class Spread:
    def __init__(self):
        self.values = []

    def update(self, pred, target):
        self.values.append(float(np.std(pred.numpy())))
"""

TRAIN = """
import tensorflow as tf
from trackers import Recall, Spread


def fit(model, data):
    recall = Recall()
    trackers = [recall, Spread(), tf.keras.metrics.Mean()]

    @tf.function
    def evaluate(x, y):
        out = model(x)
        for position, tracker in enumerate(trackers):
            if position < 2:
                tracker.update(out, y)

    for x, y in data:
        evaluate(x, y)
"""


def test_the_loop_variable_calls_each_project_class_method() -> None:
    index = build_index(textwrap.dedent(TRAIN), "train.py", "train")
    calls = index.functions["fit.evaluate"].calls
    assert "trackers.Recall.update" in calls and "trackers.Spread.update" in calls


def test_the_methods_run_traced_with_the_step(tmp_path: Path) -> None:
    (tmp_path / "trackers.py").write_text(textwrap.dedent(TRACKERS))
    (tmp_path / "train.py").write_text(textwrap.dedent(TRAIN))
    files = [InputFile(str(tmp_path / "trackers.py")), InputFile(str(tmp_path / "train.py"))]
    result = run(files, RunOptions(rule_codes=("TFR105",), root=str(tmp_path)), jobs=1)
    found = sorted((f.path.rsplit("/", 1)[-1], f.start.line) for f in result.findings)
    assert found == [("trackers.py", 10), ("trackers.py", 10), ("trackers.py", 18)]


def test_a_list_of_outside_objects_hands_out_no_project_method() -> None:
    source = TRAIN.replace(
        "[recall, Spread(), tf.keras.metrics.Mean()]", "[tf.keras.metrics.Mean()]"
    )
    index = build_index(textwrap.dedent(source), "train.py", "train")
    assert not any(c.startswith("trackers.") for c in index.functions["fit.evaluate"].calls)


def test_an_object_built_for_one_call_is_not_followed_for_its_effects() -> None:
    """Built in the step itself, an object's bookkeeping method ends with the
    call; built by the function around, it outlives it."""
    inner = """
    import tensorflow as tf
    from trackers import Recall


    def fit(model, data):
        kept = Recall()

        @tf.function
        def evaluate(x, y):
            fresh = Recall()
            fresh.update(model(x), y)
            kept.update(model(x), y)
    """
    index = build_index(textwrap.dedent(inner), "train.py", "train")
    calls = index.functions["fit.evaluate"].calls
    assert calls.count("trackers.Recall.update") == 1
