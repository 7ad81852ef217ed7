"""TFR105 on target values under TensorFlow: a DQN step whose target comes
from `target_net(s).numpy()` inside the tape.

Run eagerly, `.numpy()` makes the target a constant to the tape; traced, it
raises. The rewrite (`tf.stop_gradient(target_net(s))`, with `.max(axis=1)`
or `np.max` becoming `tf.reduce_max`) run traced, with and without
AutoGraph, must give the eager original's loss and gradients. The networks
come in three layouts: separate, sharing their hidden layer, and one network
serving as both (semi-gradient TD). Stripping `.numpy()` instead lets the
gradient flow through the target: the gradients with respect to the online
network change wherever the target network shares its variables, and those
with respect to every trainable variable change in all three layouts.
"""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

from tfrewrite.api import check_source, fix_source

from .equivalence import assert_same, load_module, python_function, run_eagerly

STEP = """\
import numpy as np
import tensorflow as tf


class Agent:
    def __init__(self, net, target_net):
        self.net = net
        self.target_net = target_net
{helper}
    @tf.function
    def train_step(self, states, actions, rewards, next_states):
{before}        with tf.GradientTape() as tape:
{target}            q = tf.reduce_sum(self.net(states) * actions, axis=1)
            loss = tf.reduce_mean(tf.square(target - q))
        return loss, tape.gradient(loss, {variables})
"""

HELPER = """
    def td_target(self, rewards, next_states):
        q_next = self.target_net(next_states).numpy()
        return rewards + 0.9 * np.max(q_next, axis=1)
"""

# How the target is computed: (helper, code before the tape, code in the tape).
TARGETS = {
    "np-max": (
        "",
        "",
        "q_next = self.target_net(next_states).numpy()\n"
        "target = rewards + 0.9 * np.max(q_next, axis=1)\n",
    ),
    "method-max": (
        "",
        "",
        "q_next = self.target_net(next_states).numpy().max(axis=1)\n"
        "target = rewards + 0.9 * q_next\n",
    ),
    "helper": (HELPER, "", "target = self.td_target(rewards, next_states)\n"),
}
VARIABLES = {
    "online": "self.net.trainable_variables",
    "all": "self.net.trainable_variables + self.target_net.trainable_variables",
}
HIDDEN, ACTIONS, FEATURES, BATCH = 8, 3, 4, 6


def _indent(code: str, spaces: int) -> str:
    return "".join(" " * spaces + line + "\n" for line in code.splitlines())


def step_source(target: str, variables: str) -> str:
    helper, before, inside = TARGETS[target]
    return STEP.format(
        helper=helper,
        before=_indent(before, 8),
        target=_indent(inside, 12),
        variables=VARIABLES[variables],
    )


def networks(layout: str) -> tuple[tf.keras.Model, tf.keras.Model]:
    """The online and target networks, built from a fixed seed."""
    tf.keras.utils.set_random_seed(0)
    hidden = tf.keras.layers.Dense(HIDDEN, activation="tanh")
    net = tf.keras.Sequential([tf.keras.Input((FEATURES,)), hidden, tf.keras.layers.Dense(ACTIONS)])
    if layout == "same":
        return net, net
    target_hidden = hidden if layout == "shared" else tf.keras.layers.Dense(HIDDEN, "tanh")
    target_net = tf.keras.Sequential(
        [tf.keras.Input((FEATURES,)), target_hidden, tf.keras.layers.Dense(ACTIONS)]
    )
    return net, target_net


def batches() -> list[tuple[tf.Tensor, ...]]:
    rng = np.random.default_rng(7)
    result = []
    for _ in range(2):
        states = rng.normal(size=(BATCH, FEATURES)).astype(np.float32)
        actions = np.eye(ACTIONS, dtype=np.float32)[rng.integers(0, ACTIONS, BATCH)]
        rewards = rng.normal(size=BATCH).astype(np.float32)
        next_states = rng.normal(size=(BATCH, FEATURES)).astype(np.float32)
        result.append(tuple(map(tf.constant, (states, actions, rewards, next_states))))
    return result


def _fixed(source: str) -> str:
    rewritten = fix_source(source, select=["TFR104", "TFR105"], unsafe_fixes=True)
    assert check_source(rewritten, select=["TFR104", "TFR105"]) == [], rewritten
    return rewritten


def _strip_cut(rewritten: str) -> str:
    """The rewrite without its gradient cut: what stripping `.numpy()` gives."""
    cut = "tf.stop_gradient(self.target_net(next_states))"
    assert cut in rewritten, rewritten
    return rewritten.replace(cut, "self.target_net(next_states)")


def _traced(source: str, agent_args, autograph: bool = True):
    """The step of `source` as a `tf.function` on an agent of `agent_args`."""
    module = load_module(source)
    agent = module.Agent(*agent_args)
    step = tf.function(python_function(module.Agent.train_step), autograph=autograph)
    return lambda *batch: step(agent, *batch)


def _variables(nets: tuple[tf.keras.Model, tf.keras.Model], which: str) -> list:
    net, target_net = nets
    variables = list(net.trainable_variables)
    return variables + list(target_net.trainable_variables) if which == "all" else variables


def _result(step_result, variables: list) -> tuple[np.ndarray, list[np.ndarray], list[bool]]:
    """(loss, gradients with None as zeros, which gradients were None): a
    variable the tape did not reach has no gradient, eager or traced."""
    loss, gradients = step_result
    assert len(gradients) == len(variables)
    dense = [
        np.zeros(v.shape, np.float32) if g is None else np.asarray(g)
        for g, v in zip(gradients, variables, strict=True)
    ]
    return np.asarray(loss), dense, [g is None for g in gradients]


def _assert_same_step(expected, actual, what: str) -> None:
    assert_same(expected[0], actual[0], rtol=1e-5, atol=1e-6, what=f"{what}: loss")
    assert_same(expected[1], actual[1], rtol=1e-5, atol=1e-6, what=f"{what}: gradients")
    assert expected[2] == actual[2], f"{what}: variables without a gradient"


def _largest_difference(expected, actual) -> float:
    return max(float(np.max(np.abs(e - a))) for e, a in zip(expected[1], actual[1], strict=True))


@pytest.mark.parametrize("variables", sorted(VARIABLES))
@pytest.mark.parametrize("layout", ["separate", "shared", "same"])
@pytest.mark.parametrize("target", sorted(TARGETS))
def test_the_rewrite_traced_keeps_the_eager_loss_and_gradients(target, layout, variables):
    source = step_source(target, variables)
    rewritten = _fixed(source)
    nets = networks(layout)
    differentiated = _variables(nets, variables)
    original = load_module(source).Agent(*nets)
    stripped = _traced(_strip_cut(rewritten), nets)
    for batch in batches():
        expected = _result(run_eagerly(original.train_step, *batch), differentiated)
        with pytest.raises(AttributeError, match="numpy"):
            _traced(source, nets)(*batch)  # the hazard: traced, `.numpy()` raises
        for autograph in (True, False):
            actual = _result(_traced(rewritten, nets, autograph)(*batch), differentiated)
            _assert_same_step(expected, actual, f"autograph={autograph}")
        # Without the cut, the gradient flows through the target: into the
        # online network's variables where the target network shares them,
        # into the target network's own wherever they are differentiated.
        loose = _result(stripped(*batch), differentiated)
        assert_same(expected[0], loose[0], rtol=1e-5, atol=1e-6, what="loss")
        differs = layout != "separate" or variables == "all"
        assert (_largest_difference(expected, loose) > 1e-3) == differs


def before_the_tape(reduce_max: str) -> str:
    return STEP.format(
        helper="",
        before=_indent(
            "q_next = self.target_net(next_states).numpy()\n"
            f"target = rewards + 0.9 * {reduce_max}(q_next, axis=1)\n",
            8,
        ),
        target="",
        variables=VARIABLES["all"],
    )


@pytest.mark.parametrize("layout", ["separate", "shared", "same"])
@pytest.mark.parametrize(
    ("reduce_max", "rewritten_line"),
    [
        # Nothing records the target: the tensor itself (unsafe), as before.
        ("tf.reduce_max", "q_next = self.target_net(next_states)"),
        # `np.max` needs TFR104, which needs a tensor it knows: a TensorFlow op.
        ("np.max", "q_next = tf.stop_gradient(self.target_net(next_states))"),
    ],
)
def test_a_target_computed_before_the_tape(reduce_max, rewritten_line, layout):
    """Computed before the tape opens, the target is a constant to it: the
    rewrite gives the eager gradients, with or without the cut, in every
    layout."""
    source = before_the_tape(reduce_max)
    rewritten = _fixed(source)
    assert f"        {rewritten_line}\n" in rewritten
    nets = networks(layout)
    differentiated = _variables(nets, "all")
    original = load_module(source).Agent(*nets)
    for batch in batches():
        expected = _result(run_eagerly(original.train_step, *batch), differentiated)
        for autograph in (True, False):
            actual = _result(_traced(rewritten, nets, autograph)(*batch), differentiated)
            _assert_same_step(expected, actual, f"autograph={autograph}")


REDUCTIONS = """\
import tensorflow as tf


def td_loss(y_true, y_pred):
    best = y_pred.numpy().max(axis=1, keepdims=True)
    spread = y_pred.numpy().max(1).mean() + y_pred.numpy().std(axis=0, ddof=0).sum()
    low = y_pred.numpy().min(-1, keepdims=True) + y_pred.numpy().var()
    total = y_pred.numpy().sum(axis=None) * y_pred.numpy().prod(1).mean(0)
    return tf.reduce_mean(tf.square(y_true - y_pred - best + low)) + spread + total


tf.keras.Sequential().compile(loss=td_loss)
"""


@pytest.mark.parametrize("dtype", [tf.float32, tf.float64])
def test_folded_reductions_match_numpy_eager(dtype):
    """Each array reduction folded into its TensorFlow op: the same values,
    shapes and dtypes as the eager original, and the gradient kept cut."""
    rewritten = fix_source(REDUCTIONS, select=["TFR105"])
    assert "best = tf.reduce_max(tf.stop_gradient(y_pred), axis=1, keepdims=True)" in rewritten
    original = python_function(load_module(REDUCTIONS).td_loss)
    changed = python_function(load_module(rewritten).td_loss)
    rng = np.random.default_rng(3)
    y_true = tf.constant(rng.normal(size=(4, 3)), dtype)
    y_pred = tf.Variable(tf.constant(rng.normal(size=(4, 3)), dtype))
    with tf.GradientTape(persistent=True) as tape:
        expected = original(y_true, y_pred)
        eager = changed(y_true, y_pred)
    for autograph in (True, False):
        with tf.GradientTape() as traced_tape:
            traced = tf.function(changed, autograph=autograph)(y_true, y_pred)
        assert_same(expected, traced, rtol=1e-6, atol=1e-6, what=f"autograph={autograph}")
        assert_same(
            tape.gradient(expected, y_pred),
            traced_tape.gradient(traced, y_pred),
            rtol=1e-6,
            atol=1e-6,
            what="gradient",
        )
    assert_same(expected, eager, rtol=1e-6, atol=1e-6)
