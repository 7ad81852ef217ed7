"""Functions that reach a tracer through a parameter: a dataset class's
method maps what its caller hands over as a keyword (`map_fn=`), by name or
in a lambda, and a script in another module hands it over on an object it
builds inline. The function runs traced in the dataset's map. A `.map`
given a positional `num_parallel_calls` (`tf.data.AUTOTUNE`) is a
dataset's."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tfrewrite.pipeline.engine import InputFile, RunOptions, run

DATASET = """
import tensorflow as tf


class ClipSet:
    def __init__(self, files):
        self.files = files

    def create(self, batch_size=4, map_fn=None):
        ds = tf.data.TFRecordDataset(self.files)
        if map_fn is not None:
            ds = ds.map(map_fn, tf.data.AUTOTUNE)
        return ds.batch(batch_size)
"""

SCRIPT = """
import numpy as np
import tensorflow as tf
from clips import ClipSet


def jitter(clip, scale):
    return clip + scale * np.random.normal()


def trim(clip):
    return clip[:100]


def main(files):
    noisy = ClipSet(files).create(map_fn=lambda clip: jitter(clip, 0.1))
    trimmed = ClipSet(files).create(map_fn=trim)
    return noisy, trimmed


def eager_use(clips):
    return [jitter(c, 0.1) for c in clips]
"""


def _findings(root: Path, script: str) -> list[tuple[str, int, str]]:
    (root / "clips.py").write_text(textwrap.dedent(DATASET))
    (root / "train.py").write_text(textwrap.dedent(script))
    files = [InputFile(str(root / "clips.py")), InputFile(str(root / "train.py"))]
    result = run(files, RunOptions(rule_codes=("TFR102",), root=str(root)), jobs=1)
    return sorted((Path(f.path).name, f.start.line, f.message) for f in result.findings)


def test_a_function_a_lambda_hands_over_runs_in_the_map(tmp_path: Path) -> None:
    found = _findings(tmp_path, SCRIPT)
    assert [(name, line) for name, line, _ in found] == [("train.py", 8)]


def test_a_keyword_of_another_callee_traces_nothing(tmp_path: Path) -> None:
    other = SCRIPT.replace(".create(map_fn=lambda", ".describe(map_fn=lambda")
    assert _findings(tmp_path, other) == []


def test_the_traced_function_says_where_it_was_handed_over() -> None:
    from tfrewrite.facts.index import build_index
    from tfrewrite.facts.project import compute_facts

    dataset = build_index(textwrap.dedent(DATASET), "clips.py", "clips")
    script = build_index(textwrap.dedent(SCRIPT), "train.py", "train")
    traced = compute_facts([dataset, script]).for_path("train.py")
    reasons = {qualname: function.reason for qualname, function in traced.items()}
    assert set(reasons) == {"jitter", "trim"}
    assert reasons["trim"] == (
        "given to `Dataset.map` at clips.py:12 as `map_fn`, given at train.py:17"
    )
