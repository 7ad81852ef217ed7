"""Deciding the TensorFlow call for one NumPy call on tensors.

`Writer.plan` maps a bound NumPy call onto its TensorFlow op, and refuses it,
or marks it unsafe, where NumPy's result dtype or values would differ: integer
and boolean operands, Python floats meeting integer tensors, operands of
unknown dtype, `np.clip` bounds in the wrong order, `np.where` on a numeric
condition.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import libcst as cst

from tfrewrite.analysis.tensors import is_python_number
from tfrewrite.context import RuleContext
from tfrewrite.rules.random_mapping import Refusal, is_none
from tfrewrite.transforms.numpy_arguments import Bound, OutArg, bind
from tfrewrite.transforms.numpy_operands import Operands, is_python_float
from tfrewrite.transforms.numpy_ops import (
    ACCUMULATE,
    FLOAT_ONLY,
    JOIN,
    MAPPINGS,
    MEAN,
    PRESERVE,
    ROUNDING,
    SELECT,
    UNMAPPED,
    UNMAPPED_REASONS,
    Mapping,
)


@dataclass
class Plan:
    """The TensorFlow call for a site, and why the fix is unsafe (if it is)."""

    func: str
    out: list[OutArg]
    unsafe: list[str] = field(default_factory=list)


class Writer:
    """Decides and writes the TensorFlow call for one NumPy call on tensors."""

    def __init__(self, ctx: RuleContext, operands: Operands, tf: str) -> None:
        self.ctx = ctx
        self.operands = operands
        self.tf = tf

    def code(self, node: cst.CSTNode) -> str:
        return self.ctx.code(node)

    def plan(self, name: str, call: cst.Call) -> Plan:
        mapping = MAPPINGS[name]
        if mapping.category == UNMAPPED:
            raise Refusal(UNMAPPED_REASONS[name])
        bound = bind(call, mapping)
        special: dict[str, Callable[[Mapping, Bound], Plan]] = {
            "clip": self._clip,
            "where": self._where,
            "concatenate": self._join,
            "stack": self._join,
        }
        handler = special.get(name)
        plan = handler(mapping, bound) if handler else self._plain(mapping, bound)
        return plan

    def _func(self, tf_op: str) -> str:
        return f"{self.tf}.{tf_op}"

    def _out(self, mapping: Mapping, bound: Bound) -> list[OutArg]:
        """Arguments that carry over, renamed, in the call's order."""
        return [
            OutArg(mapping.renamed[param], arg.value, arg)
            for param, arg in bound.args.items()
            if param in mapping.renamed
        ]

    def _plain(self, mapping: Mapping, bound: Bound) -> Plan:
        data = [bound.value(p) for p in mapping.data]
        operands = [node for node in data if node is not None]
        if len(operands) != len(mapping.data):
            raise Refusal("an array argument is missing")
        plan = Plan(self._func(mapping.tf_op), self._out(mapping, bound))
        self._check_dtypes(mapping, operands, plan)
        if mapping.category == PRESERVE and len(operands) == 2:
            first, second = operands
            if not self.operands.kind(first).tensor and self.operands.kind(second).tensor:
                # TensorFlow converts a leading Python number to its default
                # dtype (float32, int32) and then rejects a tensor of another
                # dtype: `tf.maximum(0, x)` raises for a float `x`. Both ops
                # are symmetric, so the tensor goes first: `tf.maximum(x, 0)`.
                plan.out = swapped(plan.out, "x", "y")
        return plan

    def _check_dtypes(
        self, mapping: Mapping, operands: list[cst.BaseExpression], plan: Plan
    ) -> None:
        """Refuse, or mark unsafe, where NumPy's result dtype (or whether
        TensorFlow accepts the input at all) depends on facts not known."""
        kinds = [self.operands.kind(node) for node in operands]
        tensors = [(node, k) for node, k in zip(operands, kinds, strict=True) if k.tensor]
        floats = [node for node in operands if is_python_float(node)]
        for node, kind in zip(operands, kinds, strict=True):
            if not kind.tensor and not is_python_number(node):
                plan.unsafe.append(
                    f"`{self.code(node)}` is not known to be a tensor or a Python number "
                    "(a NumPy array there would change the result's dtype)"
                )
        category = mapping.category
        kinds_seen = {
            ("floating" if k.floating else "integer" if k.integer else "boolean"): node
            for node, k in tensors
            if k.floating or k.integer or k.boolean
        }
        if len(kinds_seen) > 1:
            (first_kind, first), (second_kind, second) = list(kinds_seen.items())[:2]
            raise Refusal(
                f"`{self.code(first)}` is {first_kind} and `{self.code(second)}` {second_kind}: "
                "NumPy promotes them to a common dtype, TensorFlow refuses to mix them"
            )
        for node, kind in tensors:
            text = self.code(node)
            if kind.floating:
                continue
            if kind.boolean and category not in (SELECT, JOIN):
                if category == MEAN:
                    self._cast_float64(plan, node)
                    continue
                raise Refusal(
                    f"`{text}` is boolean: NumPy computes on booleans as integers, "
                    "the TensorFlow op does not accept them; cast it first"
                )
            if kind.integer or kind.boolean:
                if category == MEAN:
                    self._cast_float64(plan, node)
                elif category == ACCUMULATE:
                    raise Refusal(
                        f"`{text}` is an integer tensor: NumPy accumulates integers in int64 "
                        "(uint64 if unsigned), TensorFlow in their own dtype; cast it first"
                    )
                elif category == FLOAT_ONLY:
                    raise Refusal(
                        f"`{text}` is an integer tensor: NumPy computes this in a float dtype "
                        "that depends on the integer width, the TensorFlow op takes floats only; "
                        "cast it to a float dtype first"
                    )
                elif category == ROUNDING:
                    raise Refusal(
                        f"`{text}` is an integer tensor: NumPy returns integers unchanged here "
                        "and the TensorFlow op takes floats only; drop the call"
                    )
                elif floats:
                    raise Refusal(
                        f"`{text}` is an integer tensor and `{self.code(floats[0])}` a Python "
                        "float: NumPy promotes the result to float64, TensorFlow refuses to "
                        "mix them"
                    )
                continue
            # The dtype of the tensor is not known.
            if category == MEAN:
                plan.unsafe.append(
                    f"the dtype of `{text}` is not known: NumPy averages integers in float64, "
                    "TensorFlow in their own dtype"
                )
            elif category == ACCUMULATE:
                plan.unsafe.append(
                    f"the dtype of `{text}` is not known: NumPy accumulates integers in int64, "
                    "TensorFlow in their own dtype"
                )
            elif category in (FLOAT_ONLY, ROUNDING):
                plan.unsafe.append(
                    f"the dtype of `{text}` is not known: on integers NumPy returns "
                    "a result where the TensorFlow op raises"
                )
            elif floats:
                plan.unsafe.append(
                    f"the dtype of `{text}` is not known: with the Python float "
                    f"`{self.code(floats[0])}` NumPy promotes integers to float64"
                )

    def _cast_float64(self, plan: Plan, node: cst.BaseExpression) -> None:
        """NumPy averages integers and booleans in float64: so does the rewrite."""
        cast = cst.parse_expression(f"{self.tf}.cast({self.code(node)}, {self.tf}.float64)")
        plan.out = [
            OutArg(item.param, cast, item.origin) if item.value is node else item
            for item in plan.out
        ]

    def _clip(self, mapping: Mapping, bound: Bound) -> Plan:
        """`clip(a, lo, hi)`: NumPy computes `minimum(maximum(a, lo), hi)`,
        `tf.clip_by_value` `maximum(minimum(a, hi), lo)`; they agree when
        `lo <= hi`. A `None` bound leaves one side open."""
        for new, old in (("min", "a_min"), ("max", "a_max")):
            if new in bound.args and old in bound.args:
                raise Refusal(f"both `{old}=` and `{new}=` are given")
        if ("a_min" in bound.args) != ("a_max" in bound.args):
            given, missing = ("a_min", "a_max") if "a_min" in bound.args else ("a_max", "a_min")
            raise Refusal(
                f"`{given}` is given without `{missing}`, and NumPy raises `TypeError` "
                f"(pass `{missing}=None` for an open side)"
            )
        a = bound.value("a")
        if a is None:
            raise Refusal("the array argument is missing")
        low = bound.args.get("a_min") or bound.args.get("min")
        high = bound.args.get("a_max") or bound.args.get("max")
        low_value = None if low is None or is_none(low.value) else low.value
        high_value = None if high is None or is_none(high.value) else high.value
        if low_value is None and high_value is None:
            raise Refusal("both bounds are `None` (NumPy raises)")
        a_arg = bound.args["a"]
        if low_value is None or high_value is None:
            op, value, origin = (
                ("minimum", high_value, high) if low_value is None else ("maximum", low_value, low)
            )
            assert origin is not None
            # Written positionally: `tf.maximum(x, lo)`, whatever NumPy's keyword was.
            bound_arg = origin.with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT)
            plan = Plan(self._func(op), [OutArg("x", a, a_arg), OutArg("y", value, bound_arg)])
            self._check_dtypes(mapping, [a, value], plan)
            return plan
        plan = Plan(self._func(mapping.tf_op), self._out(mapping, bound))
        self._check_dtypes(mapping, [a, low_value, high_value], plan)
        ordered = literal_value(low_value), literal_value(high_value)
        if ordered[0] is None or ordered[1] is None:
            plan.unsafe.append(
                f"the bounds `{self.code(low_value)}` and `{self.code(high_value)}` are not "
                "number literals: where the lower bound exceeds the upper, NumPy returns the "
                "upper and `tf.clip_by_value` the lower"
            )
        elif ordered[0] > ordered[1]:
            raise Refusal(
                "the lower bound exceeds the upper: NumPy returns the upper bound, "
                "`tf.clip_by_value` the lower"
            )
        return plan

    def _where(self, mapping: Mapping, bound: Bound) -> Plan:
        condition, x, y = (bound.value(p) for p in ("condition", "x", "y"))
        if condition is None:
            raise Refusal("the condition is missing")
        if x is None or y is None:
            raise Refusal(
                "`where(condition)` with one argument returns index arrays; "
                f"use `{self.tf}.where(condition)` (one index tensor) by hand"
            )
        if not (self.operands.kind(x).tensor or self.operands.kind(y).tensor):
            raise Refusal(
                "neither value is a tensor: NumPy picks from Python numbers in float64 or int64, "
                f"`{self.tf}.where` in float32 or int32"
            )
        plan = Plan(self._func(mapping.tf_op), self._out(mapping, bound))
        condition_kind = self.operands.kind(condition)
        if condition_kind.floating or condition_kind.integer:
            raise Refusal(
                f"`{self.code(condition)}` is a numeric tensor: NumPy takes nonzero as true, "
                f"`{self.tf}.where` only booleans; compare it first (`{self.code(condition)} != 0`)"
            )
        if not condition_kind.boolean:
            plan.unsafe.append(
                f"`{self.code(condition)}` is not known to be boolean: NumPy takes any "
                f"truthy value, `{self.tf}.where` only booleans"
            )
        self._check_dtypes(mapping, [x, y], plan)
        if not self.operands.kind(x).tensor and self.operands.kind(y).tensor:
            # `tf.where(c, 0, y)` converts the leading Python number to its
            # default dtype (int32, float32) and raises on a float `y`; with
            # the condition negated the tensor goes first and sets the dtype.
            negated = cst.parse_expression(
                f"{self.tf}.logical_not({self.code(condition.with_changes(lpar=(), rpar=()))})"
            )
            plan.out = [
                OutArg(item.param, negated, item.origin) if item.value is condition else item
                for item in swapped(plan.out, "x", "y")
            ]
        return plan

    def _join(self, mapping: Mapping, bound: Bound) -> Plan:
        arrays = bound.value("arrays")
        if not isinstance(arrays, (cst.List, cst.Tuple)):
            raise Refusal("the arrays are not a list or tuple display")
        if any(isinstance(e, cst.StarredElement) for e in arrays.elements):
            raise Refusal("a starred element hides how many arrays there are")
        plan = Plan(self._func(mapping.tf_op), self._out(mapping, bound))
        axis = bound.args.get("axis")
        if axis is not None and is_none(axis.value):
            raise Refusal(
                "`axis=None` flattens the arrays first; write "
                f"`{self.tf}.concat([{self.tf}.reshape(a, [-1]), ...], 0)` by hand"
            )
        if mapping.tf_op == "concat" and axis is None:
            plan.out.append(OutArg("axis", cst.Integer("0"), None))
        self._check_dtypes(mapping, [e.value for e in arrays.elements], plan)
        return plan


def swapped(out: list[OutArg], first: str, second: str) -> list[OutArg]:
    """`out` with the values of two parameters exchanged; each argument keeps
    its place, keyword and layout."""
    values = {item.param: item.value for item in out}
    exchange = {first: values[second], second: values[first]}
    return [OutArg(item.param, exchange.get(item.param, item.value), item.origin) for item in out]


def literal_value(node: cst.BaseExpression) -> float | None:
    """The value of number-literal arithmetic (`-1.0`, `1.0 - 1e-7`, `1 / 255`), else None."""
    if isinstance(node, (cst.Integer, cst.Float)):
        return float(node.evaluated_value)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
        inner = literal_value(node.expression)
        if inner is None:
            return None
        return -inner if isinstance(node.operator, cst.Minus) else inner
    if isinstance(node, cst.BinaryOperation):
        left, right = literal_value(node.left), literal_value(node.right)
        if left is None or right is None:
            return None
        if isinstance(node.operator, cst.Add):
            return left + right
        if isinstance(node.operator, cst.Subtract):
            return left - right
        if isinstance(node.operator, cst.Multiply):
            return left * right
        if isinstance(node.operator, cst.Divide) and right != 0:
            return left / right
    return None
