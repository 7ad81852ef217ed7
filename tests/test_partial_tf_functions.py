"""`tf.function(functools.partial(self._lr, name))`, one learning-rate
schedule per optimizer: the partial runs the method, so the method is
traced code (its tensor `if` needs AutoGraph: TFR101), and the argument
the partial binds (`name`, a string) stays a Python value."""

from __future__ import annotations

import textwrap

from tfrewrite.api import check_source, fix_source

SCHEDULES = """
from functools import partial

import tensorflow as tf


class Player:
    def __init__(self, names):
        self.total_steps = tf.Variable(0, dtype=tf.int64)
        self.rates = {{name: tf.function({wrapped}) for name in names}}

    def _lr(self, name):
        steps = self.total_steps - 10
        if name == "critic":
            steps = steps * 2
        if tf.greater(steps, 100):
            rate = tf.constant(0.001)
        else:
            rate = 0.01 * tf.cast(steps, tf.float32)
        return rate
"""


def _source(wrapped: str) -> str:
    return textwrap.dedent(SCHEDULES.format(wrapped=wrapped))


def test_a_method_a_partial_binds_runs_traced() -> None:
    findings = check_source(_source("partial(self._lr, name)"), select=["TFR101"])
    assert [f.start.line for f in findings] == [16]


def test_the_method_wrapped_itself_is_found_the_same() -> None:
    findings = check_source(_source("self._lr"), select=["TFR101"])
    assert [f.start.line for f in findings] == [16]


def test_the_fix_converts_only_the_tensor_test() -> None:
    fixed = fix_source(_source("partial(self._lr, name)"), select=["TFR101"], unsafe_fixes=True)
    assert 'if name == "critic":' in fixed
    assert "tf.cond(" in fixed
