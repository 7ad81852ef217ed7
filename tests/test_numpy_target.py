"""TFR105 on values used as targets: `.numpy()` that kept a value out of the gradient.

A DQN or actor-critic step computes its target with a network's output read
back to the host (`target_net(s).numpy()`): the round trip made the target a
constant to the tape. Where that value is recorded by a gradient tape (in the
tape block, or in a function called from it), the rewrite keeps it out of the
gradient with `tf.stop_gradient`; array reductions chained after `.numpy()`
(`.max(axis=1)`) become the tensor's. Where no tape records it, the existing
fix (the tensor itself, unsafe) stays. Before/after source tests; the values
and gradients are compared under TensorFlow in tests/tf/test_numpy_target_tf.py.
"""

from __future__ import annotations

import textwrap

import pytest

from tfrewrite.api import check_source, fix_source
from tfrewrite.findings import Applicability

SELECT = ["TFR105"]

# The DQN step of the issue, with `{target}` computing `target` from `q_next`.
STEP = """\
import numpy as np
import tensorflow as tf


class Agent:
    def __init__(self, net, target_net):
        self.net = net
        self.target_net = target_net

    @tf.function
    def train_step(self, states, actions, rewards, next_states):
        with tf.GradientTape() as tape:
{target}
            q = tf.reduce_sum(self.net(states) * actions, axis=1)
            loss = tf.reduce_mean(tf.square(target - q))
        return tape.gradient(loss, self.net.trainable_variables)
"""


def _step(*lines: str) -> str:
    return STEP.format(target="\n".join(" " * 12 + line for line in lines))


def _only(source: str, select: list[str] = SELECT):
    findings = check_source(source, select=select)
    assert len(findings) == 1, [f.message for f in findings]
    return findings[0]


# -- in the tape block -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (
            [
                "q_next = self.target_net(next_states).numpy()",
                "target = rewards + 0.9 * np.max(q_next, axis=1)",
            ],
            [
                "q_next = tf.stop_gradient(self.target_net(next_states))",
                "target = rewards + 0.9 * tf.reduce_max(q_next, axis=1)",
            ],
        ),
        (
            [
                "q_next = self.target_net(next_states).numpy()",
                "target = rewards + 0.9 * tf.reduce_max(q_next, axis=1)",
            ],
            [
                "q_next = tf.stop_gradient(self.target_net(next_states))",
                "target = rewards + 0.9 * tf.reduce_max(q_next, axis=1)",
            ],
        ),
        (
            [
                "q_next = self.target_net(next_states).numpy().max(axis=1)",
                "target = rewards + 0.9 * q_next",
            ],
            [
                "q_next = tf.reduce_max(tf.stop_gradient(self.target_net(next_states)), axis=1)",
                "target = rewards + 0.9 * q_next",
            ],
        ),
        (
            ["target = rewards + 0.9 * self.target_net(next_states).numpy().max(1)"],
            [
                "target = rewards + 0.9 * "
                "tf.reduce_max(tf.stop_gradient(self.target_net(next_states)), 1)"
            ],
        ),
    ],
    ids=["np-max", "tf-reduce-max", "method-max", "method-max-inline"],
)
def test_a_target_in_the_tape_keeps_out_of_the_gradient(before, after):
    """The round trip inside the tape made the target a constant to it:
    `tf.stop_gradient` keeps it one (TFR104 turns `np.max` of the tensor
    into `tf.reduce_max` in the same run). The model's output is assumed a
    tensor, so the fix is unsafe, and says so."""
    source = _step(*before)
    fixed = fix_source(source, select=["TFR104", "TFR105"], unsafe_fixes=True)
    # The import of NumPy goes where its last use went (TFR104's import tidying).
    numpy_import = "import numpy as np\n"
    assert fixed.replace(numpy_import, "") == _step(*after).replace(numpy_import, "")
    finding = next(f for f in check_source(source, select=SELECT))
    assert finding.fix is not None and finding.fix.applicability == Applicability.UNSAFE
    assert "it assumes `self.target_net(next_states)` is a tensor" in finding.fix.message
    assert "gradients now flow" not in finding.fix.message
    assert fix_source(source, select=SELECT) == source  # not applied without --unsafe-fixes


LOSS_WITH_TARGET = """\
import tensorflow as tf


def td_loss(y_true, y_pred):
    best = {expr}
    return tf.reduce_mean(tf.square(y_true - best))


tf.keras.Sequential().compile(loss=td_loss)
"""


@pytest.mark.parametrize(
    ("expr", "after"),
    [
        ("y_pred.numpy().max(axis=-1)", "tf.reduce_max(tf.stop_gradient(y_pred), axis=-1)"),
        (
            "y_pred.numpy().min(-1, keepdims=True)",
            "tf.reduce_min(tf.stop_gradient(y_pred), -1, keepdims=True)",
        ),
        ("y_pred.numpy().mean()", "tf.reduce_mean(tf.stop_gradient(y_pred))"),
        ("y_pred.numpy().sum(axis=None)", "tf.reduce_sum(tf.stop_gradient(y_pred), axis=None)"),
        (
            "y_pred.numpy().max(axis=1).mean()",
            "tf.reduce_mean(tf.reduce_max(tf.stop_gradient(y_pred), axis=1))",
        ),
        ("y_pred.numpy().std(ddof=0)", "tf.math.reduce_std(tf.stop_gradient(y_pred))"),
        (
            "y_pred.numpy().var(axis=0, out=None)",
            "tf.math.reduce_variance(tf.stop_gradient(y_pred), axis=0)",
        ),
    ],
)
def test_array_reductions_of_a_proven_float_tensor_are_safe(expr, after):
    """`y_pred` of a loss is a floating-point tensor: NumPy's reduction and
    TensorFlow's give the same dtype, so the folded reduction is safe."""
    source = LOSS_WITH_TARGET.format(expr=expr)
    finding = _only(source)
    assert finding.fix is not None and finding.fix.applicability == Applicability.SAFE
    assert f"    best = {after}\n" in fix_source(source, select=SELECT)


@pytest.mark.parametrize(
    ("expr", "reason"),
    [
        ("y_pred.numpy().reshape(-1)", "has `.reshape` called or read, NumPy array API"),
        ("y_pred.numpy().argmax(axis=1)", "has `.argmax` called or read"),
        ("y_pred.numpy().max(axis=1).tolist()", "has `.tolist` called or read"),
        ("y_pred.numpy().std(ddof=1)", "only `ddof=0` (divide by N) matches"),
        ("y_pred.numpy().sum(out=buffer)", "`out=` writes into an existing array"),
        ("y_pred.numpy().mean(*axes)", "`.mean(...)` is called with `*`"),
        ("y_pred.numpy().max(a=buffer)", "`.max(...)` is called with `a=`, which NumPy does not"),
        ("tf.cast(y_pred, tf.int32).numpy().mean()", "NumPy's `.mean()` computes it in float64"),
        ("tf.cast(y_pred, tf.int32).numpy().sum()", "NumPy's `.sum()` computes it in int64"),
        ("(y_pred > 0.5).numpy().max()", "is boolean: `tf.reduce_max` does not take booleans"),
    ],
)
def test_reductions_tensorflow_cannot_match_are_refused(expr, reason):
    source = LOSS_WITH_TARGET.format(expr=expr).replace(
        "(y_true, y_pred)", "(y_true, y_pred, buffer=None, axes=())"
    )
    finding = _only(source)
    assert finding.fix is None
    assert reason in finding.message, finding.message


def test_integer_max_keeps_its_dtype():
    """`max`/`min` of integers are integers of the same width in both."""
    source = LOSS_WITH_TARGET.format(expr="tf.cast(y_pred, tf.int32).numpy().max()")
    fixed = fix_source(source, select=SELECT)
    assert "best = tf.reduce_max(tf.stop_gradient(tf.cast(y_pred, tf.int32)))" in fixed


def test_a_reduction_of_unknown_dtype_is_unsafe():
    """Where the tensor's dtype is not known, NumPy may average integers in
    float64 (or reject nothing TensorFlow rejects): unsafe, and it says why."""
    source = textwrap.dedent(
        """\
        import tensorflow as tf


        @tf.function
        def f(x):
            y = tf.square(x)
            return y.numpy().mean(axis=0) + y.numpy().max()
        """
    )
    findings = check_source(source, select=SELECT)
    assert [f.fix.applicability for f in findings if f.fix] == [Applicability.UNSAFE] * 2
    assert "NumPy's `.mean()` computes integers in float64" in findings[0].fix.message
    assert "`tf.reduce_max` raises on booleans" in findings[1].fix.message
    fixed = fix_source(source, select=SELECT, unsafe_fixes=True)
    assert "return tf.reduce_mean(y, axis=0) + tf.reduce_max(y)" in fixed


# -- in a function a tape records ------------------------------------------------------

HELPER = """\
import tensorflow as tf


class Agent:
    def __init__(self, net, target_net):
        self.net = net
        self.target_net = target_net

    def td_target(self, rewards, next_states):
        q_next = self.target_net(next_states).numpy()
        return rewards + 0.9 * tf.reduce_max(q_next, axis=1)

    @tf.function
    def train_step(self, states, actions, rewards, next_states):
        with tf.GradientTape() as tape:
            target = self.td_target(rewards, next_states)
            q = tf.reduce_sum(self.net(states) * actions, axis=1)
            loss = tf.reduce_mean(tf.square(target - q))
        return tape.gradient(loss, self.net.trainable_variables)
"""

MODULE_HELPERS = """\
import tensorflow as tf


def q_values(net, states):
    return net(states).numpy()


def td_target(target_net, rewards, next_states):
    return rewards + 0.9 * tf.reduce_max(q_values(target_net, next_states), axis=1)


@tf.function
def train_step(net, target_net, states, actions, rewards, next_states):
    def online_q():
        return tf.reduce_sum(net(states).numpy() * actions, axis=1)

    with tf.GradientTape() as tape:
        target = td_target(target_net, rewards, next_states)
        loss = tf.reduce_mean(tf.square(target - online_q()))
    return tape.gradient(loss, net.trainable_variables)
"""


def test_a_helper_called_in_the_tape_keeps_the_cut():
    """`td_target` opens no tape, but runs while the step's tape records:
    the gradient its `.numpy()` cut must stay cut."""
    finding = _only(HELPER)
    assert finding.fix is not None
    assert "Use `tf.stop_gradient(self.target_net(next_states))`" in finding.fix.message
    assert "gradients now flow" not in finding.fix.message
    fixed = fix_source(HELPER, select=SELECT, unsafe_fixes=True)
    assert "q_next = tf.stop_gradient(self.target_net(next_states))" in fixed


def test_helpers_through_calls_and_nested_functions():
    """Through another helper (`td_target` calls `q_values`) and a function
    nested in the step: each is recorded by the tape."""
    fixed = fix_source(MODULE_HELPERS, select=SELECT, unsafe_fixes=True)
    assert "return tf.stop_gradient(net(states))" in fixed
    assert "tf.reduce_sum(tf.stop_gradient(net(states)) * actions, axis=1)" in fixed


# -- where no tape records the value: the existing fix stays -------------------------------


BEFORE_THE_TAPE = """\
import tensorflow as tf


@tf.function
def train_step(net, target_net, states, actions, rewards, next_states):
    q_next = target_net(next_states).numpy()
    target = rewards + 0.9 * tf.reduce_max(q_next, axis=1)
    with tf.GradientTape() as tape:
        q = tf.reduce_sum(net(states) * actions, axis=1)
        loss = tf.reduce_mean(tf.square(target - q))
    return tape.gradient(loss, net.trainable_variables)
"""


def test_a_value_computed_before_the_tape_keeps_the_plain_fix():
    """Computed before the tape opens, the target is a constant to it either
    way: the tensor itself, unsafe as before (a caller's tape may record it)."""
    finding = _only(BEFORE_THE_TAPE)
    assert finding.fix is not None and finding.fix.applicability == Applicability.UNSAFE
    assert "gradients now flow through `target_net(next_states)`" in finding.fix.message
    fixed = fix_source(BEFORE_THE_TAPE, select=SELECT, unsafe_fixes=True)
    assert "    q_next = target_net(next_states)\n" in fixed


def test_a_helper_called_outside_any_tape_keeps_the_plain_fix():
    opened = "        with tf.GradientTape() as tape:\n"
    called = "self.td_target(rewards, next_states)\n"
    source = HELPER.replace(
        f"{opened}            target = {called}", f"        target = {called}{opened}"
    )
    assert source != HELPER
    finding = _only(source)
    assert finding.fix is not None and "gradients now flow" in finding.fix.message
    fixed = fix_source(source, select=SELECT, unsafe_fixes=True)
    assert "        q_next = self.target_net(next_states)\n" in fixed


def test_a_same_named_method_of_another_class_is_not_a_callee():
    """`self.td_target` in `Agent` names `Agent.td_target`, not another class's."""
    source = HELPER + textwrap.dedent(
        """

        class Other:
            def __init__(self, target_net):
                self.target_net = target_net

            @tf.function
            def td_target(self, rewards, next_states):
                return rewards + self.target_net(next_states).numpy()
        """
    )
    messages = {f.start.line: f.fix.message for f in check_source(source, select=SELECT) if f.fix}
    other = max(messages)
    assert "gradients now flow" in messages[other]
    assert "gradients now flow" not in messages[min(messages)]


def test_fix_is_idempotent_and_leaves_nothing():
    for source in (
        HELPER,
        MODULE_HELPERS,
        _step("target = self.target_net(next_states).numpy().max(axis=1)"),
    ):
        once = fix_source(source, select=SELECT, unsafe_fixes=True)
        assert check_source(once, select=SELECT) == []
        assert fix_source(once, select=SELECT, unsafe_fixes=True) == once


def test_numpy_math_on_a_value_not_known_as_a_tensor_gets_the_cut():
    """`np.max(q_next)` is rewritten by TFR104 only on a tensor it knows;
    `target_net(s)` is not one, `tf.stop_gradient(target_net(s))` is (and is
    what the round trip did to the gradient): written even before the tape."""
    source = BEFORE_THE_TAPE.replace("tf.reduce_max(q_next", "np.max(q_next").replace(
        "import tensorflow as tf\n", "import numpy as np\nimport tensorflow as tf\n"
    )
    finding = _only(source)
    assert finding.fix is not None and finding.fix.applicability == Applicability.UNSAFE
    assert "gradients now flow" not in finding.fix.message
    fixed = fix_source(source, select=["TFR104", "TFR105"], unsafe_fixes=True)
    assert "    q_next = tf.stop_gradient(target_net(next_states))\n" in fixed
    assert "target = rewards + 0.9 * tf.reduce_max(q_next, axis=1)" in fixed
    assert check_source(fixed, select=["TFR104", "TFR105"]) == []
