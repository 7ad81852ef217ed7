"""TFR306 on a loop over a parameter that a script fills with `ds.apply(f)`
for an `f` of another module: the dataset is what `f` returns, so when `f`
batches keeping the remainder the evaluation's mean of per-batch values
over-weights the short last batch. The facts come from three modules
together (the script, the pipeline, the loop; a pipeline that imports no
TensorFlow is read too), and scripts side by side in two folders each
import the modules beside them, as Python does."""

from __future__ import annotations

from pathlib import Path

from tests.projects import check_project, found_lines

PIPELINE = """
    def prepare(ds):
        ds = ds.shuffle(100)
        return ds.batch(32{drop})
"""

LOOPS = """
    import tensorflow as tf


    def evaluate(model, data):
        losses = []
        for features, labels in data:
            losses.append(tf.reduce_mean(tf.square(model(features) - labels)))
        return tf.reduce_mean(losses)
"""

SCRIPT = """
    import tensorflow as tf

    import pipeline
    import loops

    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    base = tf.data.Dataset.from_tensor_slices((tf.ones((100, 3)), tf.ones((100, 1))))
    test_set = base.apply(pipeline.prepare)
    print(loops.evaluate(model, test_set))
"""


def _project(drop: str = "", folder: str = "") -> dict[str, str]:
    return {
        f"{folder}pipeline.py": PIPELINE.format(drop=drop),
        f"{folder}loops.py": LOOPS,
        f"{folder}run.py": SCRIPT,
    }


def test_a_dataset_applied_through_a_short_batcher_is_averaged_per_batch(tmp_path: Path) -> None:
    assert found_lines(check_project(tmp_path, _project(), ("TFR306",))) == [("loops.py", 8)]


def test_a_pipeline_dropping_the_remainder_gives_whole_batches(tmp_path: Path) -> None:
    project = _project(drop=", drop_remainder=True")
    assert found_lines(check_project(tmp_path, project, ("TFR306",))) == []


def test_scripts_side_by_side_import_the_modules_beside_them(tmp_path: Path) -> None:
    # `lab1` keeps the remainder, `lab2` drops it: only `lab1`'s loop is
    # fed a short last batch, though both folders name their modules alike.
    project = {**_project(folder="lab1/"), **_project(", drop_remainder=True", "lab2/")}
    findings = check_project(tmp_path, project, ("TFR306",))
    assert [(Path(f.path).parent.name, f.start.line) for f in findings] == [("lab1", 8)]
