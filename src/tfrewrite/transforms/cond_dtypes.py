"""The dtypes of what the two branches of a `tf.cond` produce.

`tf.cond` needs one dtype per output from both branches, and converts a
Python number to a tensor of its own dtype (`0` to int32, `0.0` to float32).
So a Python number facing a floating-point tensor must become a float, and
anything less certain is refused.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from tfrewrite.analysis.tensors import TensorFacts, TensorKind

# -- branch values ---------------------------------------------------------------------


@dataclass(frozen=True)
class ValueKind:
    """What a branch produces for one output: a Python literal (`literal` is
    "int", "float", "bool", "none", "string" or "container"), a tensor with
    its facts, or unknown."""

    literal: str | None = None
    tensor: TensorKind | None = None


UNKNOWN = ValueKind()


def value_kind(node: cst.BaseExpression | None, facts: TensorFacts) -> ValueKind:
    if node is None:
        return UNKNOWN
    literal = literal_kind(node)
    if literal is not None:
        return ValueKind(literal=literal)
    kind = facts.kind(node)
    if kind.tensor:
        return ValueKind(tensor=kind)
    return UNKNOWN


def literal_kind(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
        inner = literal_kind(node.expression)
        return inner if inner in ("int", "float") else None
    if isinstance(node, cst.Integer):
        return "int"
    if isinstance(node, cst.Float):
        return "float"
    if isinstance(node, cst.Name) and node.value in ("True", "False"):
        return "bool"
    if isinstance(node, cst.Name) and node.value == "None":
        return "none"
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
        return "string"
    if isinstance(node, (cst.List, cst.Dict, cst.Set, cst.ListComp, cst.DictComp, cst.SetComp)) or (
        isinstance(node, cst.Tuple) and not node.elements
    ):
        return "container"
    return None


_UNMERGEABLE = {"none": "None", "string": "a string", "container": "a Python container"}


@dataclass(frozen=True)
class Reconciled:
    """The outcome of matching one output's values across both branches:
    `convert` says which side's int literal must be written as a float."""

    reason: str | None = None
    convert: tuple[bool, bool] = (False, False)


def reconcile(name: str, true_kind: ValueKind, false_kind: ValueKind) -> Reconciled:
    """Can `tf.cond` merge these two values into one dtype? `name` is the
    output's name (or "the value returned") for the message."""
    kinds = (true_kind, false_kind)
    sides = ("true", "false")
    if any(k.literal in _UNMERGEABLE for k in kinds):
        i = 0 if true_kind.literal in _UNMERGEABLE else 1
        if true_kind.literal == false_kind.literal == "none":
            return Reconciled(f"{name} is None in both branches")
        what = _UNMERGEABLE[kinds[i].literal]  # type: ignore[index]
        return Reconciled(
            f"{name} is {what} in the {sides[i]} branch, which `tf.cond` cannot return"
        )
    if true_kind.literal and false_kind.literal:
        if true_kind.literal == false_kind.literal:
            return Reconciled()
        if {true_kind.literal, false_kind.literal} == {"int", "float"}:
            return Reconciled(convert=(true_kind.literal == "int", false_kind.literal == "int"))
        return Reconciled(
            f"{name} is a Python {true_kind.literal} in the true branch but a Python "
            f"{false_kind.literal} in the false branch, which have different dtypes"
        )
    for i in (0, 1):
        literal, other = kinds[i], kinds[1 - i]
        if literal.literal is None:
            continue
        tensor = other.tensor
        if tensor is None:
            return Reconciled(
                f"{name} is a Python {literal.literal} in the {sides[i]} branch but a value of "
                f"unknown dtype in the {sides[1 - i]} branch"
            )
        if tensor.floating and literal.literal in ("int", "float"):
            return Reconciled(
                convert=(i == 0 and literal.literal == "int", i == 1 and literal.literal == "int")
            )
        if tensor.boolean and literal.literal == "bool":
            return Reconciled()
        described = (
            "a boolean tensor"
            if tensor.boolean
            else "an integer tensor of unknown width"
            if tensor.integer
            else "a tensor of unknown dtype"
        )
        return Reconciled(
            f"{name} is a Python {literal.literal} in the {sides[i]} branch but {described} in the "
            f"{sides[1 - i]} branch, so the branches can have different dtypes"
        )
    if true_kind.tensor is not None and false_kind.tensor is not None:
        t, f = true_kind.tensor, false_kind.tensor
        groups = [
            ("boolean", t.boolean, f.boolean),
            ("floating", t.floating, f.floating),
            ("integer", t.integer, f.integer),
        ]
        known_t = next((g for g, a, _ in groups if a), None)
        known_f = next((g for g, _, b in groups if b), None)
        if known_t and known_f and known_t != known_f:
            return Reconciled(
                f"{name} is a {known_t} tensor in the true branch but a {known_f} tensor in the "
                "false branch"
            )
    return Reconciled()


def as_float_literal(node: cst.BaseExpression) -> cst.BaseExpression:
    """`0` -> `0.0`, `-1` -> `-1.0` (keeping the sign and parentheses)."""
    if isinstance(node, cst.UnaryOperation):
        return node.with_changes(expression=as_float_literal(node.expression))
    if isinstance(node, cst.Integer):
        return cst.Float(
            value=f"{float(int(node.value.replace('_', ''), 0))!r}", lpar=node.lpar, rpar=node.rpar
        )
    return node
