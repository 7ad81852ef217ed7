"""What keeps `check` cheap on a file with no findings, and answers the same.

A `tf.print` whose arguments Python neither formats nor reads a dimension
of is settled without building its rewrite (TFR103); the calls, tape blocks
and local names `tape_callers` needs come from one walk of each body; the
binding walks of `facts/bindings.py` dispatch on a node's exact class.
"""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from tfrewrite.api import check_source
from tfrewrite.facts import tape_callers
from tfrewrite.facts.bindings import (
    bound_names,
    iter_assignments,
    local_bindings,
    local_names,
    split_target,
)
from tfrewrite.facts.context import RuleContext
from tfrewrite.facts.index import build_index
from tfrewrite.facts.project import compute_facts
from tfrewrite.rules.host_values import python_print
from tfrewrite.rules.host_values.print_pieces import is_string_formatting

SYS_TF = "import sys\nimport tensorflow as tf\n"


def context(source: str, path: str = "example.py") -> RuleContext:
    source = textwrap.dedent(source)
    index = build_index(source, path, "example")
    traced = compute_facts([index]).for_path(path)
    return RuleContext(path, cst.parse_module(source), index, traced)


def traced(body: str, decorator: str = "@tf.function") -> str:
    body = textwrap.indent(textwrap.dedent(body).strip("\n"), "    ")
    return (
        f"{SYS_TF}\n{decorator}\ndef f(x):\n    loss = tf.reduce_mean(x)\n{body}\n    return loss\n"
    )


def _function(source: str) -> cst.FunctionDef:
    function = cst.parse_module(textwrap.dedent(source)).body[0]
    assert isinstance(function, cst.FunctionDef)
    return function


# -- TFR103: a right `tf.print` is settled without its rewrite ---------------------------
@pytest.mark.parametrize(
    "line",
    [
        'tf.print("loss", loss, output_stream=sys.stdout)',
        "tf.print(x, summarize=-1)",
        'tf.print("loss", float(loss), x.numpy(), sep=", ")',  # host reads are TFR105's
        "tf.print(x.shape[0])",  # static: the trace knows every dimension
        'tf.print("step", {"loss": loss})',
    ],
)
def test_a_tf_print_of_values_is_settled_without_its_rewrite(
    line: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*_: object) -> None:
        raise AssertionError("the rewrite machinery ran for a `tf.print` that needs none")

    monkeypatch.setattr(python_print, "printed_values", refuse)
    assert check_source(traced(line), select=["TFR103"]) == []


@pytest.mark.parametrize(
    ("line", "decorator"),
    [
        ('tf.print("loss %s" % loss)', "@tf.function"),
        ('tf.print(f"loss {loss}")', "@tf.function"),
        ('tf.print("loss {}".format(loss))', "@tf.function"),
        ('tf.print("loss " "{}".format(loss))', "@tf.function"),
        ("tf.print(x.shape[0], loss)", "@tf.function(input_signature=[tf.TensorSpec([None])])"),
        ("tf.print(x.numpy().shape[0])", "@tf.function(reduce_retracing=True)"),
    ],
)
def test_a_tf_print_python_formats_or_reads_a_dimension_of_is_still_found(
    line: str, decorator: str
) -> None:
    findings = check_source(traced(line, decorator), select=["TFR103"])
    assert [f.code for f in findings] == ["TFR103"]


@pytest.mark.parametrize(
    ("code", "formatting"),
    [
        ('f"{a}"', True),
        ('"a" "b"', True),
        ('"%s" % a', True),
        ("fmt % a", True),
        ('"{}".format(a)', True),
        ('", ".join(xs)', True),
        ("a.format(b)", True),  # the form alone: what it formats is asked later
        ('"text"', False),
        ("a + b", False),
        ("str(a)", False),
        ("a[0]", False),
    ],
)
def test_string_formatting_is_known_by_its_form(code: str, formatting: bool) -> None:
    assert is_string_formatting(cst.parse_expression(code)) is formatting


# -- tape_callers: one walk per body ------------------------------------------------------
def test_a_call_is_in_the_outermost_tape_whose_body_holds_it() -> None:
    module = cst.parse_module(
        textwrap.dedent(
            """
            import tensorflow as tf

            def step(x):
                with tf.GradientTape(persistent=flag()) as outer:
                    a = helper(x)
                    with tf.GradientTape() as inner:
                        b = helper(a)
                    def nested():
                        return helper(b)
                c = helper(x, key=helper)
                return other.helper, c
            """
        )
    )
    ctx = context(module.code)
    step = next(f for f in ctx.functions if f.qualname == "step")
    calls, references, bound = tape_callers._references(
        ctx, step.node.body, {"helper", "flag", "nested"}
    )
    shown = {
        ctx.code(call): (tape.items[0].asname.name.value if tape is not None else None)  # type: ignore[union-attr]
        for call, tape in calls.values()
    }
    assert shown["flag()"] is None  # the tape's own arguments run before it records
    assert shown["helper(x)"] == "outer"
    assert shown["helper(a)"] == "outer"  # a nested tape records inside the outer one
    assert shown["helper(x, key=helper)"] is None
    assert "helper(b)" not in shown  # a nested function runs through its own calls
    # Names spelled like a function, in source order: a keyword and the name
    # of an attribute are not references; an attribute spelled so is.
    assert [ctx.code(r) for r in references] == [
        *("flag", "helper", "helper", "helper", "helper", "other.helper")
    ]
    assert bound == bound_names(step.node.body) == {"a", "b", "c", "outer", "inner"}


def test_local_names_recorded_by_the_walk_are_the_bindings_facts() -> None:
    ctx = context(
        """
        import tensorflow as tf

        def loss_fn(model, x):
            out = model(x, training=True)
            for i, (a, b) in enumerate(x):
                total = a
            return tf.reduce_mean(out) + total

        def step(model, x, opt):
            with tf.GradientTape() as tape:
                loss = loss_fn(model, x)
            grads = tape.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables))
        """
    )
    entries = {f.qualname: tape_callers.tape_entries(ctx, f) for f in ctx.functions}
    assert [e.tape is not None for e in entries["loss_fn"]] == [True]
    assert entries["step"] == []
    for function in ctx.functions:
        assert tape_callers._local_names(function) == local_names(function.node)
    (entry,) = entries["loss_fn"]
    assert entry.name_in_root(ctx.functions[0], "model") == "model"
    assert entry.name_in_root(ctx.functions[0], "out") is None


def test_a_call_names_the_first_function_of_its_name() -> None:
    ctx = context(
        """
        import tensorflow as tf

        def helper(x):
            return x

        def helper(x):
            return 2 * x

        class Net:
            def helper(self, x):
                return x

            def call(self, x):
                return self.helper(x)

        def step(x):
            return helper(x)
        """
    )
    step = next(f for f in ctx.functions if f.qualname == "step")
    call = next(f for f in ctx.functions if f.qualname == "Net.call")
    first = ctx.functions[0]
    assert tape_callers._resolve(ctx, step, cst.Name("helper")) is first
    method = tape_callers._resolve(ctx, call, cst.parse_expression("self.helper"))
    assert method is not None and method.qualname == "Net.helper"
    assert tape_callers._resolve(ctx, step, cst.parse_expression("self.helper")) is None


# -- bindings: every way of binding, read by exact class ---------------------------------
BINDS_EVERY_WAY = """
def f(p, *args, q=1, **kw):
    a = 1
    b: int = 2
    c: int
    a += 1
    for d, (e, *g) in pairs:
        pass
    with open(p) as h, lock:
        pass
    try:
        pass
    except ValueError as err:
        pass
    import os.path as osp, sys
    from m import n as alias, o
    global G
    nonlocal_value = [w for w in range(3) if (v := w)]
    def inner():
        hidden = 1
    class Inner:
        hidden_too = 1
    match p:
        case [first, *rest]:
            pass
        case {"k": value} as whole:
            pass
    x, y = y, x
    lam = lambda z: (t := z)
"""


def test_every_binding_form_is_read() -> None:
    function = _function(BINDS_EVERY_WAY)
    bindings = local_bindings(function)
    assert set(bindings) == {
        "a",
        "b",
        "c",
        "d",
        "e",
        "g",
        "h",
        "err",
        "osp",
        "sys",
        "alias",
        "o",
        "G",
        "nonlocal_value",
        "w",
        "v",
        "inner",
        "Inner",
        "first",
        "rest",
        "value",
        "whole",
        "x",
        "y",
        "lam",
    }
    assert [type(v).__name__ for v in bindings["a"]] == ["Integer", "NoneType"]
    assert [type(v).__name__ for v in bindings["b"]] == ["Integer"]
    assert bindings["c"] == [None]  # annotated, no value
    assert all(v is None for name in ("d", "e", "g", "h", "err", "x", "y") for v in bindings[name])
    assert "hidden" not in bindings and "hidden_too" not in bindings and "t" not in bindings
    # `iter_assignments` reads fewer forms: no imports, declarations or
    # definitions, no comprehension targets; the walrus in one it does.
    assigned = [
        name
        for target, value, _ in iter_assignments(function.body)
        for name, _, _ in split_target(target, value)
    ]
    assert assigned == [
        *("a", "b", "c", "a", "d", "e", "g", "h", "err"),
        *("nonlocal_value", "v", "x", "y", "lam"),
    ]
    assert local_names(function) == {"p", "args", "q", "kw", *assigned}
