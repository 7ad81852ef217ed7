"""TFR103 on a traced function called with a tensor at one call site and a
Python value at another: the tensor's trace prints once, the Python value's
once per new value; `tf.print` prints on every call in both traces. The fix
is unsafe and names both call sites."""

from __future__ import annotations

from tfrewrite.api import check_source, fix_source

SHOW = """
import tensorflow as tf


@tf.function
def show(x):
    print(x)
    return x * 2.0


show(1.5)
show(tf.constant(2.5))
"""


def test_a_print_of_a_parameter_with_mixed_callers_is_reported_with_an_unsafe_fix() -> None:
    (finding,) = check_source(SHOW, select=["TFR103"])
    assert finding.fix is not None and finding.fix.applicability.value == "unsafe"
    assert "`x` is a tensor at" in finding.fix.message
    assert "and a Python value at" in finding.fix.message
    fixed = fix_source(SHOW, select=["TFR103"], unsafe_fixes=True)
    assert "tf.print(x, summarize=-1, output_stream=sys.stdout)" in fixed


def test_a_function_called_with_python_values_only_keeps_its_print() -> None:
    source = SHOW.replace("show(tf.constant(2.5))\n", "show(2.5)\n")
    assert check_source(source, select=["TFR103"]) == []
