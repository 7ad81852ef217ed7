"""TFR304's evidence for a model a helper receives as a plain parameter: a
script builds the models with project builders (`actor = get_actor(...)`,
or unpacked, `actor, critic = build_models(...)`), hands them to a step
factory whose closure passes them on to a loss helper, and the helper
calls them inside the step's tape. Whether `training=True` changes a model
is what the layers of the builders that built it say: a model of `Dense`
layers is no finding, one with batch normalization is."""

from __future__ import annotations

from pathlib import Path

from tests.projects import check_project, found_lines

from tfrewrite.findings import Finding

BUILDERS = """
    import tensorflow as tf


    def get_actor(dim):
        inputs = tf.keras.Input(shape=(dim,))
        x = tf.keras.layers.Dense(8, activation="tanh")(inputs)
        return tf.keras.Model(inputs, tf.keras.layers.Dense(1)(x))


    def get_critic(dim):
        inputs = tf.keras.Input(shape=(dim,))
        x = tf.keras.layers.Dense(8)(inputs)
        x = {critic_layer}(x)
        return tf.keras.Model(inputs, tf.keras.layers.Dense(1)(x))


    def build_models(dim):
        actor = get_actor(dim)
        critic = get_critic(dim)
        return actor, critic
"""

STEP = """
    import tensorflow as tf


    def combined_loss(actor, critic, states, targets):
        value = critic(states)
        policy = actor(states)
        return tf.reduce_mean(tf.square(targets - value)) + tf.reduce_mean(policy)


    def make_train_step(actor, critic, optimizer):
        @tf.function
        def train_step(states, targets):
            with tf.GradientTape() as tape:
                loss = combined_loss(actor, critic, states, targets)
            variables = actor.trainable_variables + critic.trainable_variables
            optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
            return loss

        return train_step
"""

MAIN = """
    import numpy as np
    import tensorflow as tf

    from pkg.builders import build_models, get_actor, get_critic
    from pkg.step import make_train_step


    def main():
        {binding}
        train_step = make_train_step(actor, critic, tf.keras.optimizers.Adam())
        for _ in range(10):
            train_step(np.zeros((4, 3), "float32"), np.zeros((4, 1), "float32"))
"""

SEPARATE = "actor, critic = get_actor(3), get_critic(3)"
UNPACKED = "actor, critic = build_models(3)"
BATCH_NORM = "tf.keras.layers.BatchNormalization()"
ACTIVATION = "tf.keras.layers.ReLU()"


def _check(tmp_path: Path, binding: str, critic_layer: str) -> list[Finding]:
    files = {
        "pkg/__init__.py": "",
        "pkg/builders.py": BUILDERS.format(critic_layer=critic_layer),
        "pkg/step.py": STEP,
        "main.py": MAIN.format(binding=binding),
    }
    return check_project(tmp_path, files, ("TFR304",))


def test_models_of_dense_layers_handed_through_a_closure_are_no_finding(tmp_path: Path) -> None:
    assert _check(tmp_path, SEPARATE, ACTIVATION) == []


def test_only_the_model_whose_builder_normalizes_is_reported(tmp_path: Path) -> None:
    """Built one by one, each parameter is known by its own builder: the
    critic's batch norm is reported, the actor of `Dense` layers is not."""
    findings = _check(tmp_path, SEPARATE, BATCH_NORM)
    assert found_lines(findings) == [("step.py", 5)]
    assert findings[0].message.startswith("`critic(...)` is called without `training=True`")


def test_models_unpacked_from_one_builder_are_judged_by_its_layers(tmp_path: Path) -> None:
    """`actor, critic = build_models(3)`: each holds a part of what the
    builder builds. None of its layers reads `training`: no finding."""
    assert _check(tmp_path, UNPACKED, ACTIVATION) == []


def test_each_unpacked_model_is_judged_by_the_builder_of_its_part(tmp_path: Path) -> None:
    """`build_models` returns `actor, critic`, built by `get_actor` and
    `get_critic`: the critic's batch norm is reported, the actor is not."""
    findings = _check(tmp_path, UNPACKED, BATCH_NORM)
    assert found_lines(findings) == [("step.py", 5)]
