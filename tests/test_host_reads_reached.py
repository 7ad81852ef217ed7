"""TFR302's decorator is not proven safe when the step reaches, in another
module, a function that reads a value on the host (`.numpy()`, NumPy):
that module's run checks it, which the step's file cannot see, and both
raise on a symbolic tensor. The fix is offered as unsafe, with the reason;
a helper computing with TensorFlow alone leaves it safe."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.projects import check_project

from tfrewrite.findings import Applicability

UTILS = """
    import numpy as np
    import tensorflow as tf


    def to_boxes(pred):
        return {body}
"""

LOSSES = """
    import tensorflow as tf
    from libs.utils import to_boxes


    def box_loss(pred, labels):
        return tf.reduce_mean(tf.square(to_boxes(pred) - labels))


    def train_step(model, optimizer, images, labels):
        with tf.GradientTape() as tape:
            loss = box_loss(model(images), labels)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss


    def train(model, optimizer, batches):
        for images, labels in batches:
            train_step(model, optimizer, images, labels)
"""


def _step_fix(tmp_path: Path, body: str):
    files = {
        "libs/__init__.py": "",
        "libs/utils.py": UTILS.replace("{body}", body),
        "libs/losses.py": LOSSES,
    }
    [finding] = check_project(tmp_path, files, ("TFR302",))
    return finding.fix


@pytest.mark.parametrize(
    "body", ["tf.constant(np.zeros(tf.shape(pred).numpy())) + pred", "pred * np.sqrt(pred)"]
)
def test_a_host_read_in_another_module_makes_the_decorator_unsafe(
    tmp_path: Path, body: str
) -> None:
    fix = _step_fix(tmp_path, body)
    assert fix is not None and fix.applicability is Applicability.UNSAFE
    assert "it reaches `libs.utils.to_boxes` of another module" in fix.message


def test_without_a_host_read_the_decorator_stays_safe(tmp_path: Path) -> None:
    fix = _step_fix(tmp_path, "pred * tf.sqrt(pred) + tf.cast(np.float32(2), tf.float32)")
    assert fix is not None and fix.applicability is Applicability.SAFE
