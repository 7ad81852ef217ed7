"""TFR304's evidence through a parameter: a train step takes the object
holding its models as an argument (`train(agent, states, ...)`), every
call site passes an object of a project class, and that class keeps its
models in attributes built by project builders, perhaps builders that
compose other builders (`return get_actor(...), get_critic(...)`) in
another module. `agent.critic(...)` then calls a model, and whether
`training=True` changes it is what those builders' layers say."""

from __future__ import annotations

from pathlib import Path

from tests.projects import check_project

from tfrewrite.findings import Finding

BUILDERS = """
    import tensorflow as tf


    def get_actor(dim):
        inputs = tf.keras.layers.Input(shape=(dim,))
        x = tf.keras.layers.Dense(8)(inputs)
        x = {layer}(x)
        return tf.keras.Model(inputs, tf.keras.layers.Dense(1)(x))


    def get_critic(dim):
        inputs = tf.keras.layers.Input(shape=(dim,))
        x = tf.keras.layers.Dense(8)(inputs)
        x = {layer}(x)
        return tf.keras.Model(inputs, tf.keras.layers.Dense(1)(x))


    def build_models(dim):
        actor = get_actor(dim)
        critic = get_critic(dim)
        return actor, critic
"""

AGENT = """
    from pkg.builders import build_models


    class Agent:
        def __init__(self, dim):
            self.actor, self.critic = build_models(dim)
"""

TRAIN = """
    import tensorflow as tf


    class Train:
        def __init__(self):
            self.opt = tf.keras.optimizers.Adam()

        @tf.function
        def __call__(self, agent, states, targets):
            variables = agent.critic.trainable_variables
            with tf.GradientTape() as tape:
                err = targets - agent\\
                    .critic(states)
                loss = tf.reduce_mean(tf.square(err))
            grads = tape.gradient(loss, variables)
            self.opt.apply_gradients(zip(grads, variables))
            return loss
"""

MAIN = """
    import numpy as np
    from pkg.agent import Agent
    from pkg.train import Train

    agent = Agent(3)
    train = Train()
    for _ in range(10):
        train({passed}, np.zeros((4, 3), "float32"), np.zeros((4, 1), "float32"))
"""

BATCH_NORM = "tf.keras.layers.BatchNormalization()"
ACTIVATION = "tf.keras.layers.ReLU()"


def _check(tmp_path: Path, layer: str = BATCH_NORM, passed: str = "agent") -> list[Finding]:
    files = {
        "pkg/__init__.py": "",
        "pkg/builders.py": BUILDERS.format(layer=layer),
        "pkg/agent.py": AGENT,
        "pkg/train.py": TRAIN,
        "main.py": MAIN.format(passed=passed),
    }
    return check_project(tmp_path, files, ("TFR304",))


def test_a_model_held_by_the_parameters_class_is_reported(tmp_path: Path) -> None:
    """The builders normalize: the critic's batch norm never trains. The call
    spans a line continuation; the model is named as the code names it."""
    (finding,) = _check(tmp_path)
    assert finding.path.endswith("train.py") and finding.start.line == 12
    assert finding.message.startswith("`agent.critic(...)` is called in a train step's tape")
    assert finding.fix is not None


def test_a_model_whose_builders_read_no_training_is_no_finding(tmp_path: Path) -> None:
    assert _check(tmp_path, layer=ACTIVATION) == []


def test_a_parameter_some_caller_fills_otherwise_is_not_known(tmp_path: Path) -> None:
    """One call site passes an object tfrewrite cannot place: what the
    parameter holds is not known, and `critic` is no model's name."""
    assert _check(tmp_path, passed="make_agent()") == []
