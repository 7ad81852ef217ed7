"""What a name holds where it is read: the bindings that reach the read.
An assignment every path to the read runs replaces what came before, also
inside a branch (`done = gap < 0.5` just above `if done and VERBOSE > 0` makes the
test a tensor, whatever `done = True` in the other branch did), and a
binding in one branch of an `if` never reaches the other (`h = int(...)`
in the `if` leaves `float(h)` in the `else` a read of the tensor)."""

from __future__ import annotations

from tfrewrite.api import check_source

SETTLE = """\
import tensorflow as tf

VERBOSE = 1


@tf.function
def settle(t, t0, strict=False):
    done = False
    if strict:
        done = True
    else:
        gap = tf.abs(t - t0)
        done = gap < 0.5
        if done and VERBOSE > 0:
            t = t * 2.0
    return t
"""

CROP = """\
import tensorflow as tf


@tf.function
def crop_height(x, channels_first=False):
    s = tf.shape(x)
    if channels_first:
        h = s[2]
        h = int(0.5 * float(h))
    else:
        h = s[1]
        h = int(0.5 * float(h))
    return x[:, :h]
"""


def test_a_flag_rebound_to_a_tensor_just_above_its_test_is_a_tensor() -> None:
    lines = [f.start.line for f in check_source(SETTLE, select=["TFR101"])]
    assert lines == [14]


def test_a_binding_in_the_other_branch_does_not_reach() -> None:
    findings = check_source(CROP, select=["TFR105"])
    assert [(f.start.line, f.code) for f in findings] == [(9, "TFR105"), (12, "TFR105")]


def test_a_conversion_after_the_name_became_a_python_value_is_no_finding() -> None:
    source = CROP.replace("    return x[:, :h]", "    h = float(h)\n    return x[:, : int(h)]")
    lines = [f.start.line for f in check_source(source, select=["TFR105"])]
    assert lines == [9, 12]  # not `int(h)` of the Python float
