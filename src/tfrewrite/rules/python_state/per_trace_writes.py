"""Writes in traced code that happen once per trace, not once per call.

A trace runs its Python once; the graph it leaves runs on every call. So a
`self` attribute set from a Python argument keeps what the last trace was
given, a tensor kept on `self` is the trace's symbolic tensor, a flag
tested and flipped around variable writes flips once while the writes it
guards run every call, and a change to a list or dict the call is given
raises, as `tf.function` compares its Python arguments before and after;
a plain Python object's method called for its effect sets its object's
attributes once. TFR202 asks these of each traced function (`python_side_effects`).
"""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from tfrewrite.facts.bindings import all_params, bound_names
from tfrewrite.facts.context import FunctionScope, RuleContext
from tfrewrite.facts.names import dotted_name
from tfrewrite.facts.prefilters import MUTATING_METHODS
from tfrewrite.facts.state import (
    in_place_write_statements,
    reads_before_writing,
    self_attribute_name,
    self_writes,
)
from tfrewrite.facts.tensors import TensorFacts
from tfrewrite.facts.vocabulary import VARIABLE_WRITES
from tfrewrite.facts.walk import iter_nodes, iter_small_statements
from tfrewrite.rewrite.fixes import Violation

# Calls whose effect a trace keeps and runs on every call: variable writes,
# optimizer and metric updates.
_PER_CALL_EFFECTS = VARIABLE_WRITES | {"apply_gradients", "update_state", "reset_state"}


def flag_guarded_effects(function: FunctionScope, ctx: RuleContext) -> Iterator[Violation]:
    """`if self.first: self.first = False; self.mean.assign(m)` in traced
    code: the test runs while tracing, so the trace keeps the branch, whose
    variable writes (and other per-call effects) then run on every call,
    while the flag flips once. Eagerly they run on the first call only. (A
    branch that only creates state, `if self.v is None: self.v =
    tf.Variable(...)`, is set-up the trace runs once: not reported.)"""
    for node in iter_nodes(function.node.body, into_functions=False):
        if not isinstance(node, cst.If):
            continue
        flags = {attr for n in iter_nodes(node.test) if (attr := self_attribute_name(n))}
        if not flags:
            continue
        facts = ctx.tensors(function)
        if facts.kind(node.test).tensor or facts.likely.kind(node.test).tensor:
            continue  # a tensor condition: TFR101's, and AutoGraph's `tf.cond`
        flips = [
            (small, attr)
            for small in iter_small_statements(node.body, into_functions=False)
            for attr, _, _ in self_writes(small)
            if attr in flags
        ]
        if not flips:
            continue
        effects = [
            n
            for n in iter_nodes(node.body, into_functions=False)
            if isinstance(n, cst.Call)
            and (
                (isinstance(n.func, cst.Attribute) and n.func.attr.value in _PER_CALL_EFFECTS)
                or ctx.names.qualified_name(n.func) == "tensorflow.print"
            )
        ]
        if not effects:
            continue
        write, attr = flips[0]
        flag = f"self.{attr}"
        effect = ctx.code(effects[0].func)
        yield Violation(
            write,
            f"`{flag}` is tested and set in traced `{function.qualname}`: the test runs while "
            f"tracing, so the trace keeps this branch and its `{effect}(...)` runs on every "
            f"call, while `{flag}` changes once (eagerly it runs on the first call only); "
            "keep the flag in a `tf.Variable` and branch with `tf.cond`, or do the first "
            "call's work outside the traced call",
        )


def argument_mutations(function: FunctionScope) -> Iterator[Violation]:
    """Changes a function its own `@tf.function` traces makes to a Python
    container it is given (`logs["temp"] = t`, `items.append(x)`): eagerly
    they happen; traced, `tf.function` compares its Python arguments before
    and after the call and raises `ValueError` ("should not modify its Python
    input arguments"). A parameter the body rebinds first is a copy."""
    traced = function.runs_traced
    if traced is None or not traced.has_own_decorator:
        return
    # `*args` and `**kwargs` are made afresh for each call.
    params = {p.name.value for p in all_params(function.node.params) if p.star == ""}
    params -= {"self", "cls"} | bound_names(function.node.body)
    if not params:
        return
    for small, changed, method in in_place_write_statements(
        function.node.body, into_functions=False
    ):
        if method is not None and method not in _CONTAINER_CHANGES:
            continue  # a method of an object: `tf.function` compares lists, dicts, tuples
        if changed in params:
            yield Violation(
                small,
                f"changing the argument `{changed}` inside `@tf.function` "
                f"`{function.qualname}` raises when traced: `tf.function` allows no change "
                'to the Python containers it is given ("should not modify its Python input '
                'arguments", `ValueError`), while eagerly it runs; change a copy, or return '
                "the value",
            )


# The methods that change a list or a dict in place, whose structure
# `tf.function` compares before and after the call (a set's `add` and
# `discard` are left out: sets are not among them).
_CONTAINER_CHANGES = (MUTATING_METHODS - {"add", "discard"}) | {"sort", "reverse"}
# Literal defaults that are Python values.
_PYTHON_CONSTANTS = frozenset({"True", "False"})


def argument_kept(
    ctx: RuleContext, function: FunctionScope, target: cst.BaseExpression, value: cst.BaseExpression
) -> tuple[str, str] | None:
    """(attr, parameter) for `self.attr = parameter` in a traced method where
    the argument is a Python value (`rate=0.5`): the write happens when a
    call traces, not when a call reuses a trace, so the object keeps what
    the last trace set, not what the last call passed. An attribute the
    module reads back (`self._return_attention_scores`, read by the method
    the call runs next) is the call's own state: not reported."""
    attr = self_attribute_name(target)
    if attr is None or not isinstance(value, cst.Name):
        return None
    if any(
        isinstance(d.decorator, cst.Attribute) and d.decorator.attr.value in ("setter", "deleter")
        for d in function.node.decorators
    ):
        return None  # a property's setter: storing its argument is what it is for
    if attr in ctx.index.attribute_reads:
        return None  # read back by the module: the same call's state (Keras' call flags)
    param = next((p for p in all_params(function.node.params) if p.name.value == value.value), None)
    if param is None or value.value in bound_names(function.node.body):
        return None
    # A Python value by its default (`scale=0.5`, `train=True`), or by
    # what the project's call sites pass: a tensor argument is TFR202's
    # kept tensor, and one of unknown kind is left alone.
    # (`None` is no evidence: an optional tensor, Keras' `mask=None`, has it.)
    python_default = isinstance(
        param.default, (cst.Integer, cst.Float, cst.SimpleString, cst.Name)
    ) and (not isinstance(param.default, cst.Name) or param.default.value in _PYTHON_CONSTANTS)
    traced = function.runs_traced
    passed_python = traced is not None and value.value in traced.python_params
    if not (python_default or passed_python):
        return None
    kind = ctx.tensors(function).kind(value)
    if kind.tensor or kind.variable or kind.layer or kind.several:
        return None
    return attr, value.value


def kept_tensor(
    ctx: RuleContext, function: FunctionScope, target: cst.BaseExpression, value: cst.BaseExpression
) -> tuple[str, str | None] | None:
    """What `self.x = value` keeps ("`self.x` keeps a tensor") in traced
    code where `value` is a tensor (or a list or tuple of tensors) the
    function computes (not a variable, a layer or a Python value; also what
    an object the class holds computes from one, `self.net(obs)`), in a
    method its own `@tf.function` traces or the `call` of a Keras class
    (traced by `fit` and by every traced caller), and either no code of the
    module reads an attribute `x` (kept for code elsewhere, which finds the
    trace's symbolic tensor there after the call, never updated by later
    calls) or a method of the class that runs eagerly reads it, where
    reading it raises ("out of scope"): that method is the second item (a
    class that is no Keras layer: Keras runs a layer's other methods in the
    trace of its `call`).
    (State a layer's `call` or the module reads back in the same trace, a
    decoder's recurrent state, is scratch space of the trace.)"""
    attr = self_attribute_name(target)
    if attr is None:
        return None
    traced = function.runs_traced
    if traced is None:
        return None
    owner, _, method = function.qualname.rpartition(".")
    keras_call = method == "call" and ctx.index.derives_from_keras(owner)
    if not (traced.has_own_decorator or keras_call):
        return None
    reader = None
    if attr in ctx.index.attribute_reads:
        # Keras calls a layer's other methods inside the trace of its `call`
        # (`convolution_op` from `Conv2D.call`): only a plain object's
        # methods are known to run eagerly when nothing traces them.
        keras_class = ctx.index.derives_from_keras(owner)
        reader = None if keras_class else _eager_reader(ctx, owner, attr)
        if reader is None:
            return None  # a layer's `call` keeping its state for the same trace
    # A list or tuple of tensors (`self.outputs = [h, state]`) keeps each.
    if isinstance(value, (cst.List, cst.Tuple)):
        if not value.elements or not all(isinstance(e, cst.Element) for e in value.elements):
            return None
        values = [e.value for e in value.elements]
    else:
        values = [value]
    facts = ctx.tensors(function)
    kinds = [facts.kind(v) for v in values]
    if not all(
        (kind.tensor and not kind.variable) or _held_object_computes(v, facts)
        for kind, v in zip(kinds, values, strict=True)
    ):
        return None
    held = "a tensor" if values == [value] else "tensors"
    return f"`self.{attr}` keeps {held}", reader


def _held_object_computes(value: cst.BaseExpression, facts: TensorFacts) -> bool:
    """`self.net(obs)`: an object the class holds (a layer, a model) called
    on a tensor computes a tensor."""
    return (
        isinstance(value, cst.Call)
        and self_attribute_name(value.func) is not None
        and any(facts.likely.is_tensor(arg.value) for arg in value.args)
    )


def _eager_reader(ctx: RuleContext, owner: str, attr: str) -> str | None:
    """The first method of the class `owner` that runs eagerly (not
    `__init__`, which runs before any trace) and reads `self.<attr>` before
    binding it itself."""
    for method in ctx.functions:
        if (
            method.runs_traced is None
            and method.qualname.rpartition(".")[0] == owner
            and method.node.name.value != "__init__"
            and reads_before_writing(method.node, attr)
        ):
            return method.qualname
    return None


def plain_effect_calls(function: FunctionScope, ctx: RuleContext) -> Iterator[Violation]:
    """A statement calling a method of a plain Python object the traced
    function reaches (`self.schedule.step()`), for its effect, where that
    method changes attributes of its object (`ModuleIndex.plain_effect_calls`,
    a project fact): eagerly the effect happens on every call, traced only
    while tracing (a schedule that never advances, a buffer given one
    symbolic tensor)."""
    calls = ctx.index.plain_effect_calls.get(function.qualname)
    if not calls:
        return
    owner = ctx.class_of(function)
    owner_name = owner[0] if owner is not None else None
    for small in iter_small_statements(function.node.body, into_functions=False):
        if not (isinstance(small, cst.Expr) and isinstance(small.value, cst.Call)):
            continue
        call = small.value
        found = next((calls[n] for n in ctx.pass1_names(call.func, owner_name) if n in calls), None)
        if found is None:
            continue
        method, attributes = found
        written = ", ".join(f"`self.{a}`" for a in attributes)
        yield Violation(
            call,
            f"`{dotted_name(call.func) or method}(...)` runs `{method}` of a plain Python "
            f"object for its effect (it changes {written}) inside traced `{function.qualname}`: "
            "it runs once, while tracing, not on every call; keep that state in a "
            "`tf.Variable`, or call it outside the traced function",
        )
