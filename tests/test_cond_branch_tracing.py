"""TFR101 where `tf.cond` would trace a branch the Python `if` skips, and
where the condition is a Python bool for some callers.

`tf.cond` traces both branches: a branch that reads the rank, dimension or
shape its condition tests (`y_pred[1]` under `tf.shape(y_pred)[0] > 1`,
`tf.squeeze(y, axis=-1)` under `tf.rank(y) > 1`) fails to trace for the
shapes the `if` skips it for. And a condition on a parameter some caller
passes a Python number is a Python bool in that trace, which `tf.cond`
rejects."""

from __future__ import annotations

import textwrap

import pytest

from tfrewrite.api import check_source, fix_source


def source(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def findings(text: str):  # type: ignore[no-untyped-def]
    return check_source(text, select=["TFR101"])


def fixed(text: str, unsafe: bool = False) -> str:
    return fix_source(text, select=["TFR101"], unsafe_fixes=unsafe)


BATCH_GUARDED_INDEX = source(
    """
    import tensorflow as tf

    @tf.function
    def loss(y_true, y_pred):
        if tf.shape(y_pred)[0] > 1:
            v = y_pred[1]
        else:
            v = y_pred[0]
        return tf.reduce_mean(tf.square(v - y_true[0]))
    """
)

RANK_GUARDED_SQUEEZE = source(
    """
    import tensorflow as tf

    @tf.function
    def loss(y_true, y_pred):
        y = y_pred
        if tf.rank(y) > 1:
            y = tf.squeeze(y, axis=-1)
        return tf.reduce_mean(tf.square(y_true - y))
    """
)


def test_a_batch_guarded_index_is_refused_not_a_safe_cond():
    """Before: a safe fix to `tf.cond(tf.shape(y_pred)[0] > 1, lambda: y_pred[1], ...)`,
    which fails to trace for a batch of one."""
    (finding,) = findings(BATCH_GUARDED_INDEX)
    assert finding.fix is None
    assert (
        "`tf.cond` traces both branches: the true branch's `y_pred[1]` needs the batch size "
        "(dimension 0) of `y_pred` the condition tests" in finding.message
    )
    assert fixed(BATCH_GUARDED_INDEX, unsafe=True) == BATCH_GUARDED_INDEX


@pytest.mark.parametrize(
    "variant",
    [
        # through a name bound once to the test
        """
        n = tf.shape(y_pred)[0]
        if n > 1:
            return y_pred[1]
        return y_pred[0]
        """,
        # through a name bound more than once
        """
        n = tf.shape(y_pred)[0]
        n = n - 1
        if n > 0:
            return y_pred[1]
        return y_pred[0]
        """,
        # a conditional expression
        """
        return y_pred[1] if tf.shape(y_pred)[0] > 1 else y_pred[0]
        """,
        # the use in the branch goes through an element-wise copy
        """
        if tf.size(y_pred) > 1:
            doubled = y_pred * 2.0
            v = tf.unstack(doubled)[1]
        else:
            v = tf.reduce_mean(y_pred)
        return v
        """,
        # the early return: the rest of the function is the false branch
        """
        if tf.shape(y_pred)[0] < 2:
            return tf.reduce_mean(y_pred)
        return tf.reduce_mean(y_pred[1])
        """,
        # iterating and unpacking need a known first dimension
        """
        total = tf.reduce_sum(y_true)
        if tf.shape(y_pred)[0] > 2:
            for row in y_pred:
                total += tf.reduce_sum(row)
        return total
        """,
        """
        if tf.shape(y_pred)[0] == 2:
            first, second = y_pred
            v = first - second
        else:
            v = y_pred
        return tf.reduce_sum(v)
        """,
        # a name bound from the value inside a nested block still carries it
        """
        v = tf.reduce_sum(y_true)
        if tf.shape(y_pred)[0] > 1:
            if v > 0.0:
                p = y_pred * 2.0
            else:
                p = y_pred
            v = tf.reduce_sum(p[1])
        return v
        """,
    ],
)
def test_a_branch_reading_the_tested_structure_is_refused(variant: str):
    text = "import tensorflow as tf\n\n@tf.function\ndef loss(y_true, y_pred):\n" + textwrap.indent(
        textwrap.dedent(variant).strip("\n") + "\n", "    "
    )
    found = findings(text)
    assert found and all(f.fix is None for f in found), [f.message for f in found]
    assert any("`tf.cond` traces both branches" in f.message for f in found)
    assert fixed(text, unsafe=True) == text


def test_the_lazy_side_of_and_reading_the_tested_size_is_refused():
    text = source(
        """
        import tensorflow as tf

        @tf.function
        def loss(y_true, y_pred):
            m = tf.reduce_mean(y_pred)
            if tf.size(y_pred) > 1 and tf.reduce_mean(y_pred[1]) > 0.0:
                m = m * 2.0
            return m
        """
    )
    (finding,) = findings(text)
    assert finding.fix is None
    assert "`y_pred[1]` in the right operand of `and` needs the size of `y_pred`" in finding.message


def test_a_branch_using_the_value_element_wise_is_still_a_safe_cond():
    text = source(
        """
        import tensorflow as tf

        @tf.function
        def loss(y_true, y_pred):
            if tf.shape(y_pred)[0] > 1:
                scale = tf.reduce_mean(tf.abs(y_pred)) * 2.0
            else:
                scale = tf.reduce_mean(y_pred)
            return scale
        """
    )
    (finding,) = findings(text)
    assert finding.fix is not None and finding.fix.applicability.value == "safe"
    assert "scale = tf.cond(" in fixed(text)


def test_a_rank_guarded_squeeze_becomes_a_static_rank_test_only_as_an_unsafe_fix():
    (finding,) = findings(RANK_GUARDED_SQUEEZE)
    assert finding.fix is not None and finding.fix.applicability.value == "unsafe"
    assert "assumes the rank is known when traced" in finding.message
    assert fixed(RANK_GUARDED_SQUEEZE) == RANK_GUARDED_SQUEEZE
    assert "    if y.shape.rank > 1:\n        y = tf.squeeze(y, axis=-1)\n" in fixed(
        RANK_GUARDED_SQUEEZE, unsafe=True
    )


def test_a_rank_test_it_cannot_make_static_is_refused_when_the_branch_needs_the_rank():
    text = source(
        """
        import tensorflow as tf

        @tf.function
        def loss(y_true, y_pred):
            outputs = tf.unstack(tf.stack([y_pred, y_true]))
            if tf.rank(outputs[0]) > 1:
                y = tf.squeeze(outputs[0], -1)
            else:
                y = outputs[0] * 1.0
            return tf.reduce_mean(y)
        """
    )
    (finding,) = findings(text)
    assert finding.fix is None
    assert "the true branch's `tf.squeeze(outputs[0], -1)` needs the rank of `outputs[0]`" in (
        finding.message
    )


def test_a_static_rank_condition_is_not_a_tensor_if():
    text = source(
        """
        import tensorflow as tf

        @tf.function
        def loss(y_true, y_pred):
            if len(y_pred.shape) > 1:
                y_pred = tf.squeeze(y_pred, axis=-1)
            return tf.reduce_mean(y_pred)
        """
    )
    assert findings(text) == []


# -- callers passing Python numbers ------------------------------------------------------

PRIORITY_SAMPLER = """
import tensorflow as tf


class Buffer:
    def __init__(self, size):
        self.priorities = tf.Variable(tf.ones([size]))

    @tf.function
    def sample(self, batch, priority_exp):
        if priority_exp == 0:
            weights = tf.ones_like(self.priorities)
        else:
            weights = self.priorities ** priority_exp
        return tf.gather(weights, batch)

    def train(self, batch):
{calls}
"""


@pytest.mark.parametrize(
    "calls",
    [
        "        return self.sample(batch, priority_exp=0.6)",
        "        return self.sample(batch, 0.6)",
        "        return self.sample(batch, 0.6) + self.sample(batch, 0.0)",
    ],
)
def test_a_condition_every_caller_makes_a_python_bool_is_not_reported(calls: str):
    text = PRIORITY_SAMPLER.format(calls=calls)
    assert findings(text) == []
    assert fixed(text, unsafe=True) == text


def test_a_condition_some_callers_make_a_python_bool_is_refused_naming_the_caller():
    text = PRIORITY_SAMPLER.format(
        calls=(
            "        fast = self.sample(batch, priority_exp=0.6)\n"
            "        return fast + self.sample(batch, tf.constant(0.5))"
        )
    )
    (finding,) = findings(text)
    assert finding.fix is None
    assert (
        "`sample` is called with a Python value for `priority_exp` at example.py:18: the "
        "condition is a Python bool there, and `tf.cond` rejects one; at example.py:19 it is "
        "called with a tensor" in finding.message
    )
    assert fixed(text, unsafe=True) == text


def test_a_structural_test_of_a_python_caller_parameter_stays_unreported():
    text = PRIORITY_SAMPLER.format(
        calls="        return self.sample(batch, None) + self.sample(batch, tf.constant(0.5))"
    ).replace("if priority_exp == 0:", "if priority_exp is None:")
    assert findings(text) == []


def test_a_python_number_passed_through_a_held_object_keeps_the_condition_python():
    """`self.memory.weights(priority_exp=0.6)`: the method of the object the
    agent holds is traced with a Python float, so `priority_exp == 0` is a
    Python bool there; a `tf.cond` on it would raise `pred must not be a
    Python bool`. The call is matched through `self.memory = Buffer(...)`."""
    source = textwrap.dedent(
        """\
        import tensorflow as tf


        class Buffer:
            def __init__(self, size):
                self.priorities = tf.Variable(tf.ones([size]))

            @tf.function
            def weights(self, priority_exp):
                if priority_exp == 0:
                    return tf.ones_like(self.priorities)
                return self.priorities ** priority_exp


        class Agent:
            def __init__(self):
                self.memory = Buffer(8)

            def learn(self):
                return self.memory.weights(priority_exp=0.6)
        """
    )
    assert check_source(source, select=["TFR101"]) == []
