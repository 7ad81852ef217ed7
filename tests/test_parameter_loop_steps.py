"""TFR302 through a parameter: a training loop `train(gan, steps)` calls
`gan.train_d(x)`, and the scripts that run it pass objects of several
project classes, one overriding the step of the class it extends in another
module. Each class passed there has its step called by the loop, whatever
module defines it; a class no site passes is not."""

from __future__ import annotations

from pathlib import Path

from tests.projects import check_project, found_lines

BASE = """
    import tensorflow as tf


    class GAN:
        def __init__(self):
            self.d = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            self.opt = tf.keras.optimizers.Adam()

        def train_d(self, x):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(self.d(x))
            grads = tape.gradient(loss, self.d.trainable_variables)
            self.opt.apply_gradients(zip(grads, self.d.trainable_variables))
            return loss


    def train(gan, data, steps):
        for _ in range(steps):
            for x in data:
                gan.train_d(x)


    if __name__ == "__main__":
        train(GAN(), [tf.ones((2, 3))], 3)
"""

PENALIZED_CLASS = """

    class PenalizedGAN(GAN):
        def train_d(self, x):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(self.d(x)) + 0.1 * tf.reduce_mean(tf.square(x))
            grads = tape.gradient(loss, self.d.trainable_variables)
            self.opt.apply_gradients(zip(grads, self.d.trainable_variables))
            return loss
"""

# The subclass a script hands the loop, and a second one no script passes.
PENALIZED = (
    """
    import tensorflow as tf
    from gan import GAN, train
"""
    + PENALIZED_CLASS
    + PENALIZED_CLASS.replace("PenalizedGAN", "UnusedGAN")
    + """

    if __name__ == "__main__":
        train(PenalizedGAN(), [tf.ones((2, 3))], 3)
"""
)


def test_each_class_passed_to_the_loop_has_its_step_reported(tmp_path: Path) -> None:
    files = {"gan.py": BASE, "gan_penalized.py": PENALIZED}
    found = found_lines(check_project(tmp_path, files, ("TFR302",)))
    assert found == [("gan.py", 9), ("gan_penalized.py", 6)]
