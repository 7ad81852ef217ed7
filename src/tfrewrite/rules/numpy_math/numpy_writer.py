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

from tfrewrite.facts.context import RuleContext
from tfrewrite.facts.import_requests import ImportRequest
from tfrewrite.facts.tensor_kinds import is_python_number
from tfrewrite.rewrite.numpy_operands import Operands, is_python_float
from tfrewrite.rewrite.numpy_ops import (
    ACCUMULATE,
    FLOAT_ONLY,
    INDEX,
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
from tfrewrite.rewrite.traced_calls import Refusal, is_none
from tfrewrite.rules.numpy_math.numpy_argument_casts import Bound, OutArg, bind, build_call


@dataclass
class Plan:
    """The TensorFlow call for a site, and why the fix is unsafe (if it is).

    `expression`, when set, is the whole replacement's source (a computation
    that is not one call: `tf.math.log(x) / math.log(2.0)`), with the imports
    it needs beyond TensorFlow's."""

    func: str
    out: list[OutArg]
    unsafe: list[str] = field(default_factory=list)
    expression: str | None = None
    imports: tuple[ImportRequest, ...] = ()


class Writer:
    """Decides and writes the TensorFlow call for one NumPy call on tensors."""

    def __init__(self, ctx: RuleContext, operands: Operands, tf: str) -> None:
        self.ctx = ctx
        self.operands = operands
        self.tf = tf
        self._call: cst.Call | None = None
        # The tensors the result meets in arithmetic or comparisons (set per
        # call from its uses): a cast to NumPy's dtype takes theirs instead.
        self.meets: list[cst.BaseExpression] = []
        self.unknown_meets: list[cst.BaseExpression] = []

    def code(self, node: cst.CSTNode) -> str:
        return self.ctx.code(node)

    def plan(self, name: str, call: cst.Call) -> Plan:
        """The TensorFlow call for `call` (set `meets` first: what the result
        meets decides the dtype of a cast)."""
        mapping = MAPPINGS[name]
        if mapping.category == UNMAPPED:
            raise Refusal(UNMAPPED_REASONS[name])
        self._call = call
        bound = bind(call, mapping)
        special: dict[str, Callable[[Mapping, Bound], Plan]] = {
            "clip": self._clip,
            "where": self._where,
            "concatenate": self._join,
            "stack": self._join,
            "power": self._power,
            "log2": self._log2,
            "linalg.norm": self._norm,
            "argmax": self._arg_extremum,
            "argmin": self._arg_extremum,
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
            if kind.boolean and category == INDEX:
                raise Refusal(
                    f"`{text}` is boolean: `{self.tf}.argmax`/`argmin` take numbers; "
                    f"cast it first (`{self.tf}.cast({text}, {self.tf}.int32)`)"
                )
            if kind.boolean and category not in (SELECT, JOIN):
                if category == MEAN:
                    self._cast_like_numpy(plan, node, "float64")
                    continue
                if category == ACCUMULATE:
                    # NumPy counts booleans in int64: so does the rewrite.
                    self._cast_like_numpy(plan, node, "int64")
                    continue
                raise Refusal(
                    f"`{text}` is boolean: NumPy computes on booleans as integers, "
                    "the TensorFlow op does not accept them; cast it first"
                )
            if kind.integer or kind.boolean:
                if category == MEAN:
                    self._cast_like_numpy(plan, node, "float64")
                elif category == ACCUMULATE:
                    self._cast_like_numpy(plan, node, "int64")
                    plan.unsafe.append(
                        f"`{text}` is cast to int64, as NumPy accumulates signed integers; "
                        "NumPy accumulates unsigned integers in uint64"
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

    def _cast_like_numpy(self, plan: Plan, node: cst.BaseExpression, numpy_dtype: str) -> None:
        """NumPy averages integers and booleans in float64 and sums them in
        int64. A NumPy scalar that then meets a tensor in arithmetic or a
        comparison takes the tensor's dtype (`loss + np.mean(mask)` stays
        float32), where a float64 tensor would make TensorFlow raise: so the
        cast goes to the dtype the result meets (`loss.dtype`; `self.meets`,
        found by following the result to its uses), and to NumPy's dtype
        where it meets no tensor."""
        dtype = f"{self.tf}.{numpy_dtype}"
        met = {self.code(node): node for node in self.meets}
        if len(met) == 1:
            [tensor] = met.values()
            if isinstance(tensor, (cst.Name, cst.Attribute)):
                dtype = f"{self.code(tensor)}.dtype"
            else:
                plan.unsafe.append(
                    f"the {numpy_dtype} result meets `{self.code(tensor)}`, whose dtype NumPy's "
                    f"scalar would take; a {numpy_dtype} tensor there raises unless that "
                    f"tensor is {numpy_dtype} too"
                )
        elif len(met) > 1:
            names = ", ".join(f"`{code}`" for code in met)
            plan.unsafe.append(
                f"the {numpy_dtype} result meets {names}, whose dtypes may differ; NumPy's "
                f"scalar takes each one's, a {numpy_dtype} tensor raises against any other"
            )
        for other in self.unknown_meets:
            plan.unsafe.append(
                f"the {numpy_dtype} result meets `{self.code(other)}`, whose dtype is not known"
            )
        cast = cst.parse_expression(f"{self.tf}.cast({self.code(node)}, {dtype})")
        plan.out = [
            OutArg(item.param, cast, item.origin) if item.value is node else item
            for item in plan.out
        ]

    def _power(self, mapping: Mapping, bound: Bound) -> Plan:
        """`np.power(x, y)` is `tf.pow(x, y)`. A Python number base cannot go
        first in `tf.pow` (it would take TensorFlow's default dtype), and the
        op is not symmetric: `2.0 ** x` converts the number to `x`'s dtype."""
        base, exponent = bound.value("x1"), bound.value("x2")
        if base is None or exponent is None:
            raise Refusal("an array argument is missing")
        plan = Plan(self._func(mapping.tf_op), self._out(mapping, bound))
        self._check_dtypes(mapping, [base, exponent], plan)
        base_kind, exponent_kind = self.operands.kind(base), self.operands.kind(exponent)
        negative = literal_value(exponent)
        if base_kind.integer and negative is not None and negative < 0:
            raise Refusal(
                f"`{self.code(exponent)}` raises an integer tensor to a negative power: NumPy "
                "raises `ValueError`, TensorFlow returns integers"
            )
        if base_kind.integer and not exponent_kind.tensor and negative is None:
            plan.unsafe.append(
                f"`{self.code(exponent)}` may be negative: NumPy refuses negative integer "
                "powers of integers, TensorFlow computes them"
            )
        if not base_kind.tensor and exponent_kind.tensor:
            plan.expression = f"{_operand(self.code(base))} ** {_operand(self.code(exponent))}"
        return plan

    def _log2(self, mapping: Mapping, bound: Bound) -> Plan:
        """TensorFlow has no `log2`; `log(x) / log(2)` in the tensor's dtype
        (the Python float takes it), as `tf.experimental.numpy.log2` does.
        Within a unit in the last place, but not exact at every power of two
        (measured: `2**15` gives 14.999999 in float32): unsafe."""
        x = bound.value("x")
        if x is None:
            raise Refusal("the array argument is missing")
        plan = Plan(self._func(mapping.tf_op), self._out(mapping, bound))
        self._check_dtypes(mapping, [x], plan)
        math_alias = self.ctx.names.alias_for("math")
        if math_alias is None:
            math_alias = "math"
            if "math" in self.ctx.index.functions:
                raise Refusal("`math` is a function of this file; write `tf.math.log(x) / ...`")
            plan.imports = (ImportRequest("math"),)
        log = build_call(self._call_of(), plan.func, plan.out, mapping.tf_positional)
        plan.expression = f"{self.code(log)} / {math_alias}.log(2.0)"
        plan.unsafe.append(
            "TensorFlow has no `log2`: `log(x) / log(2)` can miss an exact power of two by a "
            "unit in the last place (float32 `2**15` gives 14.999999), so a `floor` of it can "
            "be off by one"
        )
        return plan

    def _norm(self, mapping: Mapping, bound: Bound) -> Plan:
        """`np.linalg.norm(x)` is the 2-norm of all elements (Frobenius for
        matrices), `tf.norm(x)`; along one integer axis the vector 2-norm,
        `tf.norm(x, axis=a)`. Any `ord`, or an axis pair, picks a norm that
        depends on the rank: refused (`ord=None` is dropped)."""
        x = bound.value("x")
        if x is None:
            raise Refusal("the array argument is missing")
        axis = bound.value("axis")
        if axis is not None and not is_none(axis) and not _is_int_literal(axis):
            raise Refusal(
                f"`axis={self.code(axis)}` is not one integer: an axis pair picks a matrix norm"
            )
        keepdims = bound.value("keepdims")
        if keepdims is not None and self.code(keepdims) not in ("True", "False"):
            raise Refusal(f"`keepdims={self.code(keepdims)}` is not a literal")
        plan = Plan(self._func(mapping.tf_op), self._out(mapping, bound))
        plan.out = [
            item
            for item in plan.out
            if not (item.param == "axis" and is_none(item.value))
            and not (item.param == "keepdims" and self.code(item.value) == "False")
        ]
        self._check_dtypes(mapping, [x], plan)
        return plan

    def _arg_extremum(self, mapping: Mapping, bound: Bound) -> Plan:
        """`np.argmax(a)` flattens `a` first; `tf.argmax` reduces axis 0 when
        given no axis: the flat index needs `tf.reshape(a, [-1])`. Both give
        int64 and the first index of a tie."""
        a = bound.value("a")
        if a is None:
            raise Refusal("the array argument is missing")
        axis = bound.value("axis")
        plan = Plan(self._func(mapping.tf_op), self._out(mapping, bound))
        self._check_dtypes(mapping, [a], plan)
        if axis is None or is_none(axis):
            flat = cst.parse_expression(f"{self.tf}.reshape({self.code(a)}, [-1])")
            plan.out = [
                OutArg(item.param, flat, item.origin) for item in plan.out if item.param != "axis"
            ]
        return plan

    def _call_of(self) -> cst.Call:
        assert self._call is not None
        return self._call

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


def _operand(code: str) -> str:
    """`code` as an operand of `**`: parenthesized unless it is a name, a
    number or a call/attribute/subscript chain."""
    expression = cst.parse_expression(code)
    atoms = (cst.Name, cst.Integer, cst.Float, cst.Call, cst.Attribute, cst.Subscript)
    if isinstance(expression, atoms) or expression.lpar:
        return code
    return f"({code})"


def _is_int_literal(node: cst.BaseExpression) -> bool:
    """`1`, `-1`: an integer literal, possibly signed."""
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        return _is_int_literal(node.expression)
    return isinstance(node, cst.Integer)


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
