"""A step may hand its gradients back to the loop that applies them
(`grads = compute_gradients(x, y)`, then `optimizer.apply_gradients`):
pass 1 calls it a train step (`FunctionInfo.hands_gradients_back`), TFR302
asks to decorate it, and TFR304 reads its tape as a train step's, in its
own body and in a helper it calls there."""

from __future__ import annotations

from pathlib import Path

from tests.projects import check_project

STEP = """
    import tensorflow as tf

    model = tf.keras.Sequential([tf.keras.layers.Dense(4), tf.keras.layers.{norm}()])
    optimizer = tf.keras.optimizers.Adam()


    def compute_gradients(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x) - y)) + penalty(x)
        return tape.gradient(loss, model.trainable_variables)


    def penalty(x):
        return 0.1 * tf.reduce_mean(tf.abs(model(x)))


    for x, y in [(tf.zeros((2, 3)), tf.zeros((2, 4)))]:
        grads = compute_gradients(x, y)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
"""


def _found(tmp_path: Path, norm: str) -> list[tuple[str, int]]:
    found = check_project(
        tmp_path, {"train.py": STEP.replace("{norm}", norm)}, ("TFR302", "TFR304")
    )
    return sorted((f.code, f.start.line) for f in found)


def test_a_step_handing_gradients_back_is_read_as_a_train_step(tmp_path: Path) -> None:
    assert _found(tmp_path, "BatchNormalization") == [
        ("TFR302", 7),
        ("TFR304", 9),
        ("TFR304", 14),
    ]


def test_a_model_that_ignores_training_is_not_reported(tmp_path: Path) -> None:
    assert _found(tmp_path, "LayerNormalization") == [("TFR302", 7)]
