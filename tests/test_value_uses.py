"""The shared "follow a value to its uses" machinery (`rewrite/value_uses.py`):
which uses accept a tensor, which need rewriting, which need a host value."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from tfrewrite.facts.context import RuleContext
from tfrewrite.facts.index import build_index
from tfrewrite.facts.project import compute_facts
from tfrewrite.facts.walk import iter_with_ancestors
from tfrewrite.rewrite.value_uses import UseKind, ValueUses, first_of, wrapper_replacement

SOURCE = """\
import math
import numpy as np
import tensorflow as tf


@tf.function
def f(x: tf.Tensor, y):
{body}
"""


def uses_of_marked(body: str) -> tuple[RuleContext, list]:
    """Uses of the value of the `VALUE()` call in `body`."""
    source = SOURCE.format(body=textwrap.indent(textwrap.dedent(body).strip("\n"), "    "))
    index = build_index(source, "example.py", "example")
    ctx = RuleContext(
        "example.py", cst.parse_module(source), index, compute_facts([index]).for_path("example.py")
    )
    (function,) = [f for f in ctx.functions if f.node.name.value == "f"]
    for node, ancestors in iter_with_ancestors(function.node.body, (function.node,)):
        if (
            isinstance(node, cst.Call)
            and isinstance(node.func, cst.Name)
            and node.func.value == "VALUE"
        ):
            return ctx, ValueUses(ctx, function, ctx.tensors(function)).of_expression(
                node, ancestors
            )
    raise AssertionError("no VALUE() in the body")


@pytest.mark.parametrize(
    ("body", "kind", "reason"),
    [
        ("return x + VALUE()", UseKind.TENSOR, "meets the tensor `x`"),
        ("return x[VALUE()]", UseKind.TENSOR, "indexes the tensor `x`"),
        ("return tf.zeros([VALUE(), 3])", UseKind.TENSOR, "part of a shape"),
        ("return VALUE().shape", UseKind.TENSOR, "only its shape is read"),
        ("return y + VALUE()", UseKind.DTYPE, "meets `y`, whose dtype is not known"),
        ("return tf.nn.relu(VALUE())", UseKind.DTYPE, "passed to `tf.nn.relu(...)`"),
        ("return VALUE()", UseKind.DTYPE, "is returned"),
        ("return tf.constant(VALUE(), dtype=tf.float32)", UseKind.WRAPPER, "`tf.constant(...)`"),
        ("v = VALUE()\nreturn v.astype(np.float32)", UseKind.WRAPPER, "`.astype(...)`"),
        ("if VALUE() > 0.5:\n    x = -x\nreturn x", UseKind.AUTOGRAPH, "decides a Python `if`"),
        ("return x if VALUE() else -x", UseKind.AUTOGRAPH, "decides a conditional expression"),
        ("return helper(VALUE())", UseKind.UNKNOWN, "passed to `helper(...)`"),
        ("self_v = VALUE()\nobj.v = self_v", UseKind.UNKNOWN, "is stored in `obj.v`"),
        ("return int(VALUE())", UseKind.BLOCKER, "passed to `int(...)`"),
        ("return math.exp(VALUE())", UseKind.BLOCKER, "passed to `math.exp(...)`"),
        ("n = VALUE()\nreturn [1, 2][n]", UseKind.BLOCKER, "indexes `[1, 2]`"),
        ("while VALUE() > 0:\n    pass", UseKind.BLOCKER, "Python `while` loop"),
        ("return VALUE().tolist()", UseKind.BLOCKER, "`.tolist` called or read"),
        (
            "return tf.image.random_contrast(x, VALUE(), 1.5)",
            UseKind.BLOCKER,
            "as `lower`, which it compares in Python",
        ),
    ],
)
def test_use_kinds(body: str, kind: UseKind, reason: str) -> None:
    _, uses = uses_of_marked(body)
    use = first_of(uses, kind)
    assert use is not None, [(u.kind, u.reason) for u in uses]
    assert reason in use.reason


def test_a_name_is_followed_to_every_read() -> None:
    _, uses = uses_of_marked(
        """
        noise = VALUE()
        a = x + noise
        return int(noise)
        """
    )
    assert [u.kind for u in uses] == [UseKind.TENSOR, UseKind.BLOCKER]
    assert uses[1].names == ("noise",)
    assert uses[1].subject("the sample") == "the sample, held in `noise`,"


def test_a_numpy_conversion_is_followed_further() -> None:
    _, uses = uses_of_marked("a = np.asarray(VALUE())\nreturn round(a)")
    assert [u.kind for u in uses] == [UseKind.WRAPPER, UseKind.BLOCKER]
    assert uses[1].names == ("a",)


def test_reads_in_a_nested_function_are_unknown() -> None:
    _, uses = uses_of_marked("v = VALUE()\ndef g():\n    return v\nreturn g()")
    assert uses[0].kind is UseKind.UNKNOWN and "read by a nested function" in uses[0].reason


@pytest.mark.parametrize(
    ("body", "rewritten"),
    [
        ("v = VALUE()\nreturn tf.constant(v)", "v"),
        ("v = VALUE()\nreturn tf.constant(v, dtype=tf.float32)", "tf.cast(v, tf.float32)"),
        ("v = VALUE()\nreturn np.asarray(v, 'float32')", "tf.cast(v, tf.float32)"),
        ("v = VALUE()\nreturn v.astype(np.int32)", "tf.cast(v, tf.int32)"),
        ("v = VALUE()\nreturn np.float32(v)", "tf.cast(v, tf.float32)"),
        ('v = VALUE()\nreturn tf.constant(v, name="v")', 'tf.identity(v, name="v")'),
    ],
)
def test_wrapper_replacements(body: str, rewritten: str) -> None:
    ctx, uses = uses_of_marked(body)
    use = first_of(uses, UseKind.WRAPPER)
    assert use is not None and use.wrapper is not None
    assert ctx.code(wrapper_replacement(use.wrapper, ctx, "tf")) == rewritten
