"""TFR301 on a decorated loss method of a plain Python object a script binds
once at module level (`loss = LossModule(shape)`), which its decorated
train step calls inside the tape (`con_loss = loss.content_loss(hr, sr)`,
then differentiated through `perc_loss = con_loss + ...`): the method
call is the loss the tape differentiates, in whichever module the class
is defined."""

from __future__ import annotations

from pathlib import Path

from tests.projects import check_project, found_lines

LOSSES = """
    import tensorflow as tf


    class LossModule:
        def __init__(self):
            self.mse = tf.keras.losses.MeanSquaredError()

        @tf.function
        def content_loss(self, hr, sr):
            return self.mse(hr, sr)
"""

TRAIN = """
    import tensorflow as tf

    from losses import LossModule

    generator = tf.keras.Sequential([tf.keras.layers.Dense(2)])
    optimizer = tf.keras.optimizers.Adam()
    loss = LossModule()


    @tf.function
    def train_step(lr, hr):
        with tf.GradientTape() as tape:
            sr = generator(lr, training=True)
            con_loss = loss.content_loss(hr, sr)
            perc_loss = con_loss + 0.001 * tf.reduce_mean(sr)
        grads = tape.gradient(perc_loss, generator.trainable_variables)
        optimizer.apply_gradients(zip(grads, generator.trainable_variables))
        return perc_loss


    for _ in range(10):
        train_step(tf.ones((2, 2)), tf.ones((2, 2)))
"""


def test_a_loss_method_of_a_module_object_is_a_nested_boundary(tmp_path: Path) -> None:
    files = {"losses.py": LOSSES, "train.py": TRAIN}
    findings = check_project(tmp_path, files, ("TFR301",))
    assert found_lines(findings) == [("losses.py", 8)]
    assert "nested, redundant graph boundary" in findings[0].message


def test_the_same_class_in_the_script_is_found_too(tmp_path: Path) -> None:
    script = LOSSES + TRAIN.replace("from losses import LossModule\n", "")
    findings = check_project(tmp_path, {"train.py": script}, ("TFR301",))
    assert found_lines(findings) == [("train.py", 8)]
