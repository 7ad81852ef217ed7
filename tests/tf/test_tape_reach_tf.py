"""The hazard `tests/test_tape_reach.py` reports, run: a network holding
batch normalization, called by a wrapper's method without `training=True`,
is trained by a step whose tape runs that method, and its moving statistics
never move; passed `training=True` (the `training` argument the finding
asks for), they do. The rule has no fix here: the finding is the result."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.tensorflow


def _agent(tmp_path: Path, training: str):
    import tensorflow as tf
    from tests.test_tape_reach import AGENT, NETS

    nets = textwrap.dedent(NETS).replace(
        "return self._critic(tf.concat([states, actions], -1))",
        f"return self._critic(tf.concat([states, actions], -1){training})",
    )
    folder = tmp_path / f"project{len(training)}"
    folder.mkdir()
    (folder / "nets.py").write_text(nets)
    agent = textwrap.dedent(AGENT.format(variables="self._nets.critic_variables"))
    (folder / "agent.py").write_text(agent)
    sys.path.insert(0, str(folder))
    try:
        for name in ("nets", "agent"):
            sys.modules.pop(name, None)
        import agent as agent_module
        import nets as nets_module
    finally:
        sys.path.remove(str(folder))
        for name in ("nets", "agent"):
            sys.modules.pop(name, None)

    def network(width: int) -> tf.keras.Model:
        return tf.keras.Sequential(
            [
                tf.keras.Input((width,)),
                tf.keras.layers.Dense(4),
                tf.keras.layers.BatchNormalization(),
                tf.keras.layers.Dense(1),
            ]
        )

    tf.keras.utils.set_random_seed(0)
    trained = nets_module.Nets(network(3), network(4))
    target = nets_module.Nets(network(3), network(4))
    return agent_module.Agent(trained, target), trained


def _moving_mean(nets) -> np.ndarray:
    batch_norm = nets._critic.layers[1]
    return np.asarray(batch_norm.moving_mean)


@pytest.mark.parametrize(("training", "moves"), [("", False), (", training=True", True)])
def test_the_trained_networks_statistics_move_only_when_told_it_trains(
    tmp_path: Path, training: str, moves: bool
) -> None:
    import tensorflow as tf

    agent, nets = _agent(tmp_path, training)
    rng = np.random.default_rng(0)
    states = tf.constant(rng.normal(3.0, 1.0, (8, 3)), tf.float32)
    actions = tf.constant(rng.normal(size=(8, 1)), tf.float32)
    rewards = tf.constant(rng.normal(size=(8, 1)), tf.float32)
    before = _moving_mean(nets)
    for _ in range(3):
        agent.train_critic(states, actions, rewards, states)
    assert (not np.allclose(before, _moving_mean(nets))) == moves
