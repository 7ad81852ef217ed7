"""A parameter whose default is a tensor (`greedy=tf.constant(False)`)
receives a tensor where a call leaves it out: with every call site passing
a tensor or nothing, the `if` on it is a tensor `if` (TFR101)."""

from __future__ import annotations

import textwrap

from tests.defaulted_flags import TENSOR_DEFAULT

from tfrewrite.api import check_source

CALLS = """
def play(layer, observations):
    act = make_policy(layer)
    for observation in observations:
        act(tf.convert_to_tensor(observation))
        act(tf.convert_to_tensor(observation), tf.constant(True))
"""


def _found(source: str) -> list[tuple[str, int, bool]]:
    return [
        (f.code, f.start.line, f.fix is not None)
        for f in check_source(textwrap.dedent(source) + textwrap.dedent(CALLS))
    ]


def test_a_tensor_default_makes_the_if_a_tensor_if() -> None:
    assert ("TFR101", 9, True) in _found(TENSOR_DEFAULT)


def test_a_python_default_keeps_it_a_python_flag() -> None:
    source = TENSOR_DEFAULT.replace("greedy=tf.constant(False)", "greedy=False")
    assert not [f for f in _found(source) if f[0] == "TFR101"]
