"""TFR304 through the objects a train step's class holds (`facts.tape_reach`):
a wrapper class in another module keeps the Keras networks and calls them in
small methods; the agent's steps run those methods in their tapes through
the wrapper object they train, and through another (the target networks)
they do not train. The finding goes to the wrapper's call, without a fix."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tfrewrite.findings import Finding
from tfrewrite.pipeline.engine import InputFile, RunOptions, run

NETS = """
    import tensorflow as tf


    class Nets:
        def __init__(self, actor: tf.keras.Model, critic: tf.keras.Model) -> None:
            self._actor = actor
            self._critic = critic

        @property
        def actor_variables(self):
            return self._actor.trainable_variables

        @property
        def critic_variables(self):
            return self._critic.trainable_variables

        def act(self, states):
            return self._actor(states)

        def value(self, states, actions):
            return self._critic(tf.concat([states, actions], -1))
"""

AGENT = """
    import tensorflow as tf

    from nets import Nets


    class Agent:
        def __init__(self, nets: Nets, target: Nets) -> None:
            self._nets = nets
            self._target = target
            self._opt = tf.keras.optimizers.Adam(1e-3)

        @tf.function
        def train_critic(self, states, actions, rewards, next_states):
            with tf.GradientTape() as tape:
                loss = self._critic_loss(states, actions, rewards, next_states)
            variables = {variables}
            grads = tape.gradient(loss, variables)
            self._opt.apply_gradients(zip(grads, variables))
            return loss

        def _critic_loss(self, states, actions, rewards, next_states):
            target = rewards + 0.9 * self._target.value(next_states, self._target.act(next_states))
            value = self._nets.value(states, actions)
            return tf.reduce_mean(tf.square(value - tf.stop_gradient(target)))
"""


def _check(tmp_path: Path, variables: str = "self._nets.critic_variables") -> list[Finding]:
    files = {"nets.py": NETS, "agent.py": AGENT.format(variables=variables)}
    for name, text in files.items():
        (tmp_path / name).write_text(textwrap.dedent(text).lstrip())
    inputs = [InputFile(str(tmp_path / name)) for name in files]
    options = RunOptions(rule_codes=("TFR304",), root=str(tmp_path))
    return run(inputs, options, jobs=1).findings


def test_the_wrappers_call_of_the_network_the_step_trains_is_reported(tmp_path: Path) -> None:
    [finding] = _check(tmp_path)
    assert Path(finding.path).name == "nets.py"
    assert (finding.start.line, finding.fix) == (21, None)
    assert "`Agent.train_critic`" in finding.message
    assert "`self._nets.value(...)`" in finding.message
    assert "`self._critic`" in finding.message


def test_a_network_the_step_does_not_train_is_not_reported(tmp_path: Path) -> None:
    # The actor runs in the critic's tape (through the targets) untrained.
    lines = {f.start.line for f in _check(tmp_path)}
    assert 18 not in lines


def test_the_variables_read_straight_off_the_held_network_count_too(tmp_path: Path) -> None:
    found = _check(tmp_path, "self._nets._critic.trainable_variables")
    assert [(Path(f.path).name, f.start.line) for f in found] == [("nets.py", 21)]


def test_a_tape_whose_variables_are_not_read_through_the_wrapper_reports_nothing(
    tmp_path: Path,
) -> None:
    assert _check(tmp_path, "tf.compat.v1.trainable_variables()") == []
