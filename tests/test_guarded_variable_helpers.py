"""TFR204 on a helper that creates a variable: called only under a run-once
guard (`if self.memory is None: self.memory = make_memory(x)`, the pattern
`tf.function`'s documentation recommends), the variable is created once,
as if the guard were around the creation itself; called without one, on
every call."""

from __future__ import annotations

from tfrewrite.api import check_source

SOURCE = """
import tensorflow as tf


def make_memory(x):
    return tf.Variable(tf.zeros_like(x), trainable=False)


class Memory:
    def __init__(self):
        self.memory = None

    @tf.function
    def __call__(self, x):
{body}
        self.memory.assign(x)
        return x + self.memory
"""

GUARDED = """\
        if self.memory is None:
            self.memory = make_memory(x)"""
UNGUARDED = """\
        self.memory = make_memory(x)"""


def test_a_helper_called_only_under_a_run_once_guard_is_no_finding() -> None:
    assert check_source(SOURCE.format(body=GUARDED), select=["TFR204"]) == []


def test_a_helper_called_on_every_call_is_reported() -> None:
    (finding,) = check_source(SOURCE.format(body=UNGUARDED), select=["TFR204"])
    assert "created on every call of traced `make_memory`" in finding.message


def test_one_unguarded_call_keeps_the_finding() -> None:
    body = GUARDED + "\n        other = make_memory(x)"
    (finding,) = check_source(SOURCE.format(body=body), select=["TFR204"])
    assert finding.start.line == 6
