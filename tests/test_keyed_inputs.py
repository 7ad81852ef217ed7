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


FORWARDED = """
    import tensorflow as tf


    class Agent:
        def __init__(self, critic):
            self.critic = critic
            self.optimizer = tf.keras.optimizers.Adam()

        @tf.function
        def critic_loss(self, batch):
            print(batch["obs"])
            return tf.reduce_mean(tf.square(self.critic(batch["obs"]) - batch["rew"]))

        @tf.function
        def update(self, batch):
            with tf.GradientTape() as tape:
                loss = self.critic_loss(batch)
            grads = tape.gradient(loss, self.critic.trainable_variables)
            self.optimizer.apply_gradients(zip(grads, self.critic.trainable_variables))
            return loss
"""


def test_a_dict_a_traced_caller_passes_on_stays_inputs_once_the_loss_decorator_goes(
    tmp_path: Path,
) -> None:
    """The step hands the loss its own `batch`: the items are inputs still
    when TFR301 takes the loss's decorator off, so the print stays a
    finding with its own fix, not one that fix would resolve."""
    found = check_project(tmp_path, {"agent.py": FORWARDED}, ("TFR103", "TFR301"))
    codes = {f.code: f for f in found}
    assert sorted(codes) == ["TFR103", "TFR301"]
    printed = codes["TFR103"]
    assert printed.fix is not None and "Fixed along with" not in printed.fix.message
    assert printed.fix.applicability.value == "unsafe"
