"""A `tf.Variable` tested by `if` in traced code (`if self.fitting:` on
`tf.Variable(False)`) is a tensor condition: traced, only AutoGraph turns
it into a `tf.cond`. A method wrapped with `tf.function(func=...)` runs
traced, as one wrapped positionally does."""

from __future__ import annotations

import textwrap

from tests.variable_flags import VARIABLE_FLAG

from tfrewrite.api import check_source


def _found(source: str) -> list[tuple[str, int, bool]]:
    return [
        (f.code, f.start.line, f.fix is not None) for f in check_source(textwrap.dedent(source))
    ]


def test_an_if_on_a_variable_flag_is_a_tensor_if() -> None:
    assert ("TFR101", 12, True) in _found(VARIABLE_FLAG)


def test_func_keyword_and_positional_wrapping_trace_alike() -> None:
    positional = VARIABLE_FLAG.replace("tf.function(func=self.step)", "tf.function(self.step)")
    assert _found(positional) == _found(VARIABLE_FLAG)


def test_an_unwrapped_method_is_not_traced() -> None:
    eager = VARIABLE_FLAG.replace("tf.function(func=self.step)", "self.step")
    assert not [f for f in _found(eager) if f[0] == "TFR101"]
