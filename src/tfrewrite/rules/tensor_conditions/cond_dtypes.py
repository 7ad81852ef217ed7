"""The dtypes of what the two branches of a `tf.cond` produce.

`tf.cond` needs one dtype per output from both branches, and converts a
Python number to a tensor of its own dtype (`0` to int32, `0.0` to float32),
where Python would let the number take the dtype of whatever it meets. So a
Python number facing a floating-point tensor takes that tensor's dtype
(`tf.constant(0.0, dtype=err.dtype)`), read from a tensor both branches
share; where no such tensor is known the number is written as a float and the
fix is unsafe (float16 or float64 values would not match). Two Python numbers
become a 32-bit tensor, which is unsafe too: the values they meet after the
`if` may be float64 or float16. Anything less certain is refused.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from tfrewrite.facts.names import NameResolver
from tfrewrite.facts.tensor_kinds import (
    REDUCTIONS,
    SCALAR_PRESERVING,
    SCALAR_PRESERVING_PREFIXES,
    TensorKind,
    is_python_number,
)
from tfrewrite.facts.tensors import TensorFacts
from tfrewrite.rules.tensor_conditions.cond_codegen import UnmergeableBranches, is_keras_ops

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
    kind = _written_dtype_kind(node, facts)
    if kind is not None:
        return ValueKind(tensor=kind)
    kind = facts.kind(node)
    if kind.tensor:
        return ValueKind(tensor=kind)
    return UNKNOWN


def _written_dtype_kind(node: cst.BaseExpression, facts: TensorFacts) -> TensorKind | None:
    """The kind of what a rewrite writes: `tf.constant(v, dtype=x.dtype)` and
    `tf.cast(v, x.dtype)` have the kind of `x`; `tf.cond(c, lambda: A,
    lambda: B)` what both of its values share."""
    if not isinstance(node, cst.Call):
        return None
    qualified = facts.resolver.qualified_name(node.func)
    args = [a.value for a in node.args if a.keyword is None]
    keywords = {a.keyword.value: a.value for a in node.args if a.keyword is not None}
    if qualified in ("tensorflow.cond", "keras.ops.cond") and len(args) == 3:
        kinds = []
        for branch in args[1:]:
            if not isinstance(branch, cst.Lambda):
                return None
            value = value_kind(branch.body, facts)
            if value.tensor is not None:
                kinds.append(value.tensor)
            elif value.literal == "float":
                kinds.append(TensorKind(True, scalar=True, floating=True))
            else:
                return None
        a, b = kinds
        return TensorKind(
            True,
            a.scalar and b.scalar,
            a.boolean and b.boolean,
            a.floating and b.floating,
            a.integer and b.integer,
        )
    dtype = None
    if qualified in (
        "tensorflow.constant",
        "tensorflow.cast",
        "keras.ops.cast",
        "keras.ops.convert_to_tensor",
    ):
        dtype = keywords.get("dtype") or (args[1] if len(args) > 1 else None)
    if not (isinstance(dtype, cst.Attribute) and dtype.attr.value == "dtype" and args):
        return None
    source = facts.kind(dtype.value)
    if not source.tensor:
        return None
    scalar = literal_kind(args[0]) in ("int", "float") or facts.kind(args[0]).scalar
    return TensorKind(True, scalar, source.boolean, source.floating, source.integer)


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


# -- Python numbers meeting tensors ------------------------------------------------------

_NUMBERS = ("int", "float")
# Ops whose result has the dtype of their first argument.
_SAME_DTYPE_LEAVES = frozenset(
    {
        "abs",
        "sqrt",
        "square",
        "exp",
        "log",
        "log1p",
        "sigmoid",
        "tanh",
        "maximum",
        "minimum",
        "clip_by_value",
        "round",
        "sign",
        "floor",
        "ceil",
        "identity",
        "stop_gradient",
        "reshape",
        "squeeze",
        "expand_dims",
        "negative",
        "add",
        "subtract",
        "multiply",
        "divide",
        "pow",
        "softplus",
        "relu",
        "reduce_sum",
        "reduce_mean",
        "reduce_max",
        "reduce_min",
        "reduce_prod",
        "reduce_logsumexp",
        "reduce_std",
        "reduce_variance",
        "sum",
        "mean",
        "max",
        "min",
        "prod",
        "logsumexp",
        "std",
        "var",
    }
)


def dtype_anchor(
    node: cst.BaseExpression | None,
    facts: TensorFacts,
    resolver: NameResolver,
    unstable: set[str],
) -> str | None:
    """A name whose `.dtype` is the dtype of `node`: a tensor name that
    neither branch rebinds (`unstable`), reached through arithmetic with
    Python numbers or tensors, unary signs, indexing and dtype-preserving
    ops; None when there is none."""
    if node is None:
        return None
    if isinstance(node, cst.Name):
        if node.value in unstable or not facts.kind(node).tensor:
            return None
        return node.value
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
        return dtype_anchor(node.expression, facts, resolver, unstable)
    if isinstance(node, cst.BinaryOperation):
        if isinstance(node.operator, (cst.FloorDivide, cst.Modulo, cst.Power, cst.Divide)):
            if not facts.kind(node).floating:
                return None  # `/` of integers is floating-point; `//`, `%`, `**` vary
        for side, other in ((node.left, node.right), (node.right, node.left)):
            if is_python_number(other):
                return dtype_anchor(side, facts, resolver, unstable)
        return dtype_anchor(node.left, facts, resolver, unstable) or dtype_anchor(
            node.right, facts, resolver, unstable
        )
    if isinstance(node, cst.Subscript):
        return dtype_anchor(node.value, facts, resolver, unstable)
    written = _written_anchor(node, resolver)
    if written is not None:
        return dtype_anchor(written, facts, resolver, unstable)
    if isinstance(node, cst.Call) and node.args and node.args[0].keyword is None:
        qualified = resolver.qualified_name(node.func) or ""
        leaf = qualified.rsplit(".", 1)[-1]
        same = qualified in REDUCTIONS or qualified in SCALAR_PRESERVING
        same = same or qualified.startswith(("tensorflow.", *SCALAR_PRESERVING_PREFIXES))
        if (
            same
            and leaf in _SAME_DTYPE_LEAVES
            and not any(a.keyword is not None and a.keyword.value == "dtype" for a in node.args)
        ):
            return dtype_anchor(node.args[0].value, facts, resolver, unstable)
    return None


def _written_anchor(node: cst.BaseExpression, resolver: NameResolver) -> cst.BaseExpression | None:
    """Where what a rewrite wrote takes its dtype from: `x` for
    `tf.constant(v, dtype=x.dtype)` and `tf.cast(v, x.dtype)`; the first
    lambda's value of a `tf.cond`."""
    if not isinstance(node, cst.Call):
        return None
    qualified = resolver.qualified_name(node.func)
    args = [a.value for a in node.args if a.keyword is None]
    if qualified in ("tensorflow.cond", "keras.ops.cond") and len(args) == 3:
        for branch in args[1:]:
            if isinstance(branch, cst.Lambda):
                inner = _written_anchor(branch.body, resolver)
                if inner is not None:
                    return inner
                if not literal_kind(branch.body):
                    return branch.body
        return None
    if qualified in (
        "tensorflow.constant",
        "tensorflow.cast",
        "keras.ops.cast",
        "keras.ops.convert_to_tensor",
    ):
        keywords = {a.keyword.value: a.value for a in node.args if a.keyword is not None}
        dtype = keywords.get("dtype") or (args[1] if len(args) > 1 else None)
        if isinstance(dtype, cst.Attribute) and dtype.attr.value == "dtype":
            return dtype.value
    return None


@dataclass(frozen=True)
class Matched:
    """How one output's two values are made to agree: `replace` maps a
    Python number (by id) to what it is written as; `passthrough` is the
    expression a branch that leaves the output alone passes on (the incoming
    Python number cast to the other branch's dtype); `unsafe` says why the
    fix cannot be safe."""

    replace: dict[int, cst.BaseExpression] = field(default_factory=dict)
    passthrough: tuple[str | None, str | None] = (None, None)
    unsafe: str | None = None


def match_dtypes(
    name: str,
    nodes: tuple[cst.BaseExpression | None, cst.BaseExpression | None],
    kinds: tuple[ValueKind, ValueKind],
    facts: TensorFacts,
    unstable: set[str],
    tf: str,
    incoming: str | None = None,
    meets: str | None = None,
) -> Matched:
    """Make the values of one output agree in dtype, or raise `ValueError`
    with the reason. `nodes` are the values (None for a side that passes the
    incoming value `incoming` through); `name` describes the output; `meets`
    names the floating-point tensor every later use of the output meets."""
    result = reconcile(name, kinds[0], kinds[1])
    if result.reason:
        if any(k.literal in _UNMERGEABLE for k in kinds):
            raise UnmergeableBranches(result.reason)
        raise ValueError(result.reason)
    keras_ops = is_keras_ops(tf, facts.resolver)
    sides = ("true", "false")
    if kinds[0].literal in _NUMBERS and kinds[1].literal in _NUMBERS:
        if meets is not None and (incoming is not None or None not in nodes):
            cast = f"{tf}.cast({incoming}, {meets}.dtype)"
            return Matched(
                {
                    id(node): _with_dtype(node, meets, tf, keras_ops)
                    for node in nodes
                    if node is not None
                },
                passthrough=(
                    cast if nodes[0] is None else None,
                    cast if nodes[1] is None else None,
                ),
            )
        replace = {
            id(node): as_float_literal(node)
            for node, convert in zip(nodes, result.convert, strict=True)
            if convert and node is not None
        }
        width = "float32" if "float" in (kinds[0].literal, kinds[1].literal) else "int32"
        return Matched(
            replace,
            unsafe=(
                f"{name} is a Python number in both branches, which `tf.cond` turns into "
                f"{width} tensors: the fix assumes the values it meets are {width}"
            ),
        )
    for i in (0, 1):
        literal, other = kinds[i], kinds[1 - i]
        if literal.literal not in _NUMBERS or other.tensor is None or not other.tensor.floating:
            continue
        anchor = dtype_anchor(nodes[1 - i], facts, facts.resolver, unstable) or meets
        node = nodes[i]
        if node is None:  # the incoming Python number passes through this branch
            if anchor is None or incoming is None:
                raise ValueError(
                    f"{name} is a Python number before the `if` but a floating-point tensor in "
                    f"the {sides[1 - i]} branch, and no tensor defined before the `if` is known "
                    "to have its dtype: give it that dtype before the `if`"
                )
            passthrough = [None, None]
            passthrough[i] = f"{tf}.cast({incoming}, {anchor}.dtype)"
            return Matched(passthrough=(passthrough[0], passthrough[1]))
        if anchor is not None:
            return Matched({id(node): _with_dtype(node, anchor, tf, keras_ops)})
        value = as_float_literal(node)
        return Matched(
            {id(node): value},
            unsafe=(
                f"{name} is a Python number in the {sides[i]} branch and a floating-point tensor "
                f"of unknown width in the {sides[1 - i]} branch: the fix writes the number as "
                "float32"
            ),
        )
    return Matched()


def _with_dtype(
    node: cst.BaseExpression, anchor: str, tf: str, keras_ops: bool
) -> cst.BaseExpression:
    """A Python number as a tensor of `anchor`'s floating-point dtype."""
    value = as_float_literal(node).with_changes(lpar=[], rpar=[])
    code = cst.Module(body=[]).code_for_node(value)
    if keras_ops:
        return cst.parse_expression(f"{tf}.convert_to_tensor({code}, dtype={anchor}.dtype)")
    return cst.parse_expression(f"{tf}.constant({code}, dtype={anchor}.dtype)")
