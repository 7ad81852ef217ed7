"""A step whose tapes sit in a loop over what each call hands it (three
generator updates over the `noises` of one batch), called per batch by a
script's loop over the dataset: a step (TFR302, its decoration unsafe:
traced, a loop over a tensor would become a `tf.while_loop`), not a
training loop (no TFR303). A function whose tape loop iterates the dataset
its caller hands it is a training loop, as before."""

from __future__ import annotations

from pathlib import Path

from tests.projects import check_project

STEPS = """
import tensorflow as tf


def train_step(model, optimizer, images, noises):
    for noise in noises:
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((model(images + noise) - images) ** 2)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss
"""

SCRIPT = """
import tensorflow as tf

from steps import train_step

model = tf.keras.Sequential([tf.keras.layers.Dense(4)])
optimizer = tf.keras.optimizers.SGD(0.01)
images = tf.random.uniform((64, 4))
data = tf.data.Dataset.from_tensor_slices(images).map(
    lambda x: (x, (tf.random.uniform([4]), tf.random.uniform([4])))
).batch(16)

for epoch in range(2):
    for batch, noises in data:
        train_step(model, optimizer, batch, noises)
"""


def _found(tmp_path: Path, script: str) -> list[tuple[str, str, int]]:
    files = {"steps.py": STEPS, "train.py": script}
    found = check_project(tmp_path, files, ("TFR302", "TFR303"))
    return sorted((Path(f.path).name, f.code, f.start.line) for f in found)


def test_a_step_looping_over_what_each_call_hands_it(tmp_path: Path) -> None:
    assert _found(tmp_path, SCRIPT) == [("steps.py", "TFR302", 4)]
    files = {"steps.py": STEPS, "train.py": SCRIPT}
    (finding,) = check_project(tmp_path, files, ("TFR302",))
    assert finding.fix is not None and finding.fix.applicability.value == "unsafe"
    assert "its loops over `noises`" in finding.fix.message


def test_a_loop_over_the_dataset_the_caller_hands_is_a_training_loop(tmp_path: Path) -> None:
    script = SCRIPT.replace(
        "    for batch, noises in data:\n        train_step(model, optimizer, batch, noises)",
        "    train_step(model, optimizer, images, data)",
    )
    assert _found(tmp_path, script) == [("steps.py", "TFR303", 6)]
