"""Items of a dict of inputs are likely tensors in the function a tracer
calls with it (`print(batch["obs"])` in a decorated critic loss: TFR103,
with an unsafe fix). A helper that traced code hands a dict it computed
itself (augmentation settings drawn by NumPy) gets Python values: its
`if settings["flip"] > 0.5` is no tensor condition."""

from __future__ import annotations

from pathlib import Path

from tests.projects import check_project, found_lines

SOURCE = """
    import numpy as np
    import tensorflow as tf


    @tf.function
    def critic_loss(batch):
        print("next", batch["next_obs"])
        return tf.reduce_mean(tf.square(batch["rew"] - batch["next_obs"]))


    def settings():
        return {"flip": np.random.uniform(), "brightness": 0.1}


    def augment(image, chosen):
        image = tf.image.adjust_brightness(image, chosen["brightness"])
        if chosen["flip"] > 0.5:
            image = tf.image.flip_left_right(image)
        return image


    @tf.function
    def preprocess(image):
        return augment(image, settings())
"""


def test_items_of_inputs_are_likely_tensors_and_computed_settings_are_not(tmp_path: Path) -> None:
    found = check_project(tmp_path, {"agent.py": SOURCE}, ("TFR101", "TFR103"))
    assert [(f.code, f.start.line) for f in found] == [("TFR103", 7)]
    assert found[0].fix is not None and found[0].fix.applicability.value == "unsafe"
    assert found_lines(found) == [("agent.py", 7)]
