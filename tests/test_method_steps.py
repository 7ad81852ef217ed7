"""A train step that is a method called through an attribute in a Python loop
(`self.actor.train(...)`): resolved by method name, checked as a step about to
be traced, decorated by an unsafe TFR302 fix when nothing blocks it."""

from __future__ import annotations

import textwrap

from tfrewrite.api import check_source, fix_source
from tfrewrite.facts.index import build_index
from tfrewrite.facts.method_steps import looped_train_methods
from tfrewrite.facts.project_lookup import ProjectLookup

ACTOR = """
    import tensorflow as tf


    class Actor:
        def __init__(self):
            self.model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            self.opt = tf.keras.optimizers.Adam()

        def train(self, x, y):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean((self.model(x, training=True) - y) ** 2)
            grads = tape.gradient(loss, self.model.trainable_variables)
            self.opt.apply_gradients(zip(grads, self.model.trainable_variables))
            return loss


    class Agent:
        def __init__(self):
            self.actor = Actor()

        def run(self, data):
            for x, y in data:
                self.actor.train(x, y)
"""


def _looped(indexes):
    return {(path, qualname) for path, qualname, _ in _looped_via(indexes)}


def _looped_via(indexes):
    return looped_train_methods(indexes, ProjectLookup(indexes))


def _d(text: str) -> str:
    return textwrap.dedent(text).lstrip()


def test_attribute_call_in_a_loop_resolves_to_the_one_train_step_method():
    index = build_index(_d(ACTOR), "a.py", "a")
    assert _looped([index]) == {("a.py", "Actor.train")}


def test_two_classes_with_a_train_step_method_of_that_name_resolve_by_what_is_held():
    """`self.net.train(...)` with `Actor.train` and `Critic.train`: the
    attribute's name says neither, but `self.net = Actor()` holds an `Actor`.
    Held from a factory of unknown result, it may be either."""
    actor = _d(ACTOR).split("\n\n\nclass Agent:")[0]
    critic = actor.split("\n\n\n", 1)[1].replace("class Actor:", "class Critic:")
    source = _d(ACTOR).replace("self.actor", "self.net")
    index = build_index(source + "\n\n" + critic + "\n", "a.py", "a")
    assert "Critic.train" in index.functions
    assert _looped([index]) == {("a.py", "Actor.train")}
    unknown = source.replace("self.net = Actor()", "self.net = make_network()")
    index = build_index(unknown + "\n\n" + critic + "\n", "a.py", "a")
    assert _looped([index]) == {("a.py", "Actor.train"), ("a.py", "Critic.train")}


def test_method_step_without_blockers_gets_an_unsafe_decorator():
    findings = [f for f in check_source(_d(ACTOR), select=["TFR302"])]
    assert [f.code for f in findings] == ["TFR302"]
    assert "matched by method name" in findings[0].message
    assert fix_source(_d(ACTOR), select=["TFR302"]) == _d(ACTOR)
    fixed = fix_source(_d(ACTOR), select=["TFR302"], unsafe_fixes=True)
    assert "    @tf.function\n    def train(self, x, y):" in fixed
    assert fix_source(fixed, select=["TFR302"], unsafe_fixes=True) == fixed


def test_method_called_outside_a_loop_is_not_a_step():
    source = _d(ACTOR).replace("for x, y in data:\n            ", "x, y = data\n        ")
    assert [f.code for f in check_source(source, select=["TFR302"])] == []


def test_attribute_that_names_the_class_picks_among_several_train_methods():
    actor = _d(ACTOR).split("\n\n\nclass Agent:")[0]
    critic = actor.split("\n\n\n", 1)[1].replace("class Actor:", "class Critic:")
    index = build_index(_d(ACTOR) + "\n\n" + critic + "\n", "a.py", "a")
    assert _looped([index]) == {("a.py", "Actor.train")}
    source = _d(ACTOR).replace("self.actor = Actor()", "self.critic = Critic()")
    source = source.replace("self.actor.train", "self.critic.train") + "\n\n" + critic + "\n"
    index = build_index(source, "a.py", "a")
    assert _looped([index]) == {("a.py", "Critic.train")}


def test_tape_in_a_minibatch_loop_is_not_a_method_step():
    looped = _d(ACTOR).replace(
        "    def train(self, x, y):\n",
        "    def train(self, x, y):\n        for _ in range(3):\n            tf.GradientTape()\n",
    )
    assert _looped([build_index(looped, "a.py", "a")]) == set()


REPLAY_AGENT = """
    import numpy as np
    import tensorflow as tf


    class ReplayBuffer:
        def __init__(self, size):
            self.states = np.zeros((size, 4), dtype=np.float32)
            self.size = size

        def sample(self, batch_size):
            idx = np.random.choice(self.size, batch_size)
            return self.states[idx]


    class Agent:
        def __init__(self):
            self.memory = ReplayBuffer(100)
            self.model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
            self.optimizer = tf.keras.optimizers.Adam()

        def learn(self):
            states = self.memory.sample(32)
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(self.model(states, training=True))
            grads = tape.gradient(loss, self.model.trainable_variables)
            self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))


    def main():
        agent = Agent()
        for episode in range(10):
            agent.learn()
"""


def test_a_step_sampling_its_replay_buffer_is_not_decorated():
    """`self.memory.sample(32)` draws with NumPy in a Python class the agent
    holds: traced, the draw (and the buffer's contents) would be frozen at
    the first call, so the step keeps no decorator and the finding says why."""
    [finding] = check_source(_d(REPLAY_AGENT), select=["TFR302"])
    assert finding.fix is None
    assert "calls `self.memory.sample(...)`, a method of the Python class `ReplayBuffer`" in (
        finding.message
    )
    assert fix_source(_d(REPLAY_AGENT), select=["TFR302"], unsafe_fixes=True) == _d(REPLAY_AGENT)


SAC = """
    import tensorflow as tf


    class SoftActorCritic:
        def __init__(self, critic, actor):
            self.critic, self.actor = critic, actor
            self.critic_opt = tf.keras.optimizers.Adam()
            self.actor_opt = tf.keras.optimizers.Adam()

        def update_critic(self, s, target):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean((self.critic(s) - target) ** 2)
            grads = tape.gradient(loss, self.critic.trainable_variables)
            self.critic_opt.apply_gradients(zip(grads, self.critic.trainable_variables))
            return loss

        def update_actor(self, s):
            with tf.GradientTape() as tape:
                loss = -tf.reduce_mean(self.critic(self.actor(s)))
            grads = tape.gradient(loss, self.actor.trainable_variables)
            self.actor_opt.apply_gradients(zip(grads, self.actor.trainable_variables))
            return loss

        def train(self, s, target):
            return self.update_critic(s, target), self.update_actor(s)
"""

LOOP = """
    def run(sac, batches):
        for s, target in batches:
            sac.train(s, target)
"""


def test_steps_a_looped_method_of_their_class_calls_run_per_batch():
    """The loop calls `sac.train`, which trains nothing itself and calls
    the class's two update steps: each runs per batch, and TFR302 says
    through which method."""
    indexes = [build_index(_d(SAC), "sac.py", "sac"), build_index(_d(LOOP), "main.py", "main")]
    assert _looped_via(indexes) == {
        ("sac.py", "SoftActorCritic.update_critic", "SoftActorCritic.train"),
        ("sac.py", "SoftActorCritic.update_actor", "SoftActorCritic.train"),
    }
    findings = check_source(_d(SAC) + "\n\n" + _d(LOOP), select=["TFR302"])
    assert [f.start.line for f in findings] == [10, 17]
    assert all("through `train` of its class" in f.message for f in findings)
