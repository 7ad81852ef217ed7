"""Conditions of a tensor `if`, as `tf.cond` needs them.

A Python `if` calls `bool()` on its condition; `tf.cond` needs a scalar
boolean tensor. So `and`/`or`/`not` become `tf.logical_and`/`tf.logical_or`/
`tf.logical_not`, a chained comparison becomes the `tf.logical_and` of its
links (AutoGraph leaves it as a Python `and`, which fails in a graph), and a
scalar that is not boolean gets the comparison Python's truthiness means
(`x != 0`, or `tf.cast(x, tf.bool)` when its dtype is unknown). Python skips
the right operand of `and`/`or` once the left one decides; where evaluating it
anyway could fail or have an effect, it stays lazy inside a `tf.cond`, as
AutoGraph's own `and`/`or` does.

Whether an operand is a tensor, a scalar, boolean or numeric is the shared
tensor analysis's call; a condition with no tensor in it stays a Python `if`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import libcst as cst

from tfrewrite.facts.tensor_kinds import (
    ALWAYS_SCALAR,
    BOOL_RESULTS,
    REDUCTIONS,
    SCALAR_PRESERVING,
    TensorKind,
    read_kind,
)
from tfrewrite.facts.tensors import TensorFacts
from tfrewrite.facts.walk import iter_nodes
from tfrewrite.rules.tensor_conditions.cond_codegen import is_keras_ops
from tfrewrite.rules.tensor_conditions.cond_dtypes import literal_kind


@dataclass(frozen=True)
class Condition:
    """A translated condition: `tensor` False means a Python condition (no
    finding); `reason` set means a tensor condition that cannot be converted."""

    tensor: bool
    code: str = ""
    reason: str | None = None


PYTHON = Condition(False)


class ConditionTranslator:
    """Turns a condition into the code of a scalar boolean tensor, or says
    why it cannot (`code` prints a node as source)."""

    def __init__(
        self,
        facts: TensorFacts,
        tf: str,
        code: Callable[[cst.CSTNode], str],
        assume_scalar: bool = False,
    ) -> None:
        """With `assume_scalar`, a tensor condition of unknown rank is taken
        to be a scalar (for likely tensors, whose fix is unsafe anyway:
        `tf.cond` on a non-scalar fails loudly when traced)."""
        self.assume_scalar = assume_scalar
        self.facts = facts
        self.tf = tf
        self.code = code
        self.at: cst.CSTNode | None = None

    def translate(self, node: cst.BaseExpression, at: cst.CSTNode) -> Condition:
        """Translate the condition `node` of the conditional `at` (whose
        position decides which bindings of a name can reach the test)."""
        self.at = at
        if not self._involves_tensor(node):
            return PYTHON
        return self._translate(node)

    def _kind(self, node: cst.BaseExpression) -> TensorKind:
        assert self.at is not None
        if isinstance(node, cst.Call):
            qualified = self.facts.resolver.qualified_name(node.func) or ""
            if qualified.startswith(_PYTHON_VALUED_PREFIXES):
                return TensorKind(False)
        # A condition reads its value: a `tf.Variable` tested by `if` is a
        # tensor there (`if self.training:` on `tf.Variable(False)`).
        return read_kind(self.facts.kind_at(node, self.at))

    def _involves_tensor(self, node: cst.BaseExpression) -> bool:
        """Whether the truth of `node` depends on a tensor: some operand of
        its `and`/`or`/`not`/chained comparison is a tensor. A tensor used
        only for its static facts (`x.shape[0] == 1`, `x is None`,
        `len(x.shape)`) does not count."""
        if isinstance(node, cst.BooleanOperation):
            return self._involves_tensor(node.left) or self._involves_tensor(node.right)
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
            return self._involves_tensor(node.expression)
        if isinstance(node, cst.Comparison) and len(node.comparisons) > 1:
            operands = _operands(node)
            return any(
                self._kind(cst.Comparison(left=operands[i], comparisons=[c])).tensor
                for i, c in enumerate(node.comparisons)
            )
        if self._membership_of_a_tensor(node):
            return True
        return self._kind(node).tensor

    def _membership_of_a_tensor(self, node: cst.BaseExpression) -> bool:
        """`t in (a, b)` with `t` a tensor: Python compares `t == a`, a
        tensor, and calls `bool()` on it."""
        return (
            isinstance(node, cst.Comparison)
            and len(node.comparisons) == 1
            and isinstance(node.comparisons[0].operator, (cst.In, cst.NotIn))
            and isinstance(node.comparisons[0].comparator, (cst.Tuple, cst.List, cst.Set))
            and bool(self._kind(node.left).tensor)
        )

    def _translate(self, node: cst.BaseExpression) -> Condition:
        if isinstance(node, cst.BooleanOperation):
            left = self._operand(node.left)
            right = self._operand(node.right)
            for side in (left, right):
                if side.reason:
                    return side
            if not (left.tensor and right.tensor):
                word = "and" if isinstance(node.operator, cst.And) else "or"
                python_side = node.left if not left.tensor else node.right
                return Condition(
                    True,
                    reason=(
                        f"the condition mixes the Python value `{self.code(python_side)}` and a "
                        f"tensor with `{word}`: test the Python part in its own `if`"
                    ),
                )
            is_and = isinstance(node.operator, cst.And)
            if self._may_fail(node.right):
                # Python skips the right operand once the left one decides; evaluating it
                # anyway could fail (`n > 0 and total // n > 1`) or run its effects.
                if _contains_walrus(node.right):
                    return Condition(
                        True,
                        reason=(
                            f"`{self.code(node.right)}` binds a name with `:=` but runs only "
                            "when the left operand does not decide the condition"
                        ),
                    )
                if is_and:
                    lazy = f"lambda: {right.code}, lambda: False"
                else:
                    lazy = f"lambda: True, lambda: {right.code}"
                return Condition(True, f"{self.tf}.cond({left.code}, {lazy})")
            op = "logical_and" if is_and else "logical_or"
            return Condition(True, f"{self.tf}.{op}({left.code}, {right.code})")
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
            inner = self._operand(node.expression)
            if inner.reason or not inner.tensor:
                if not inner.tensor and not inner.reason:
                    return PYTHON
                return inner
            return Condition(True, f"{self.tf}.logical_not({inner.code})")
        if isinstance(node, cst.Comparison) and len(node.comparisons) > 1:
            return self._chained(node)
        return self._leaf(node)

    def _operand(self, node: cst.BaseExpression) -> Condition:
        if not self._involves_tensor(node):
            return Condition(False, self._bare(node))
        return self._translate(node)

    def _may_fail(self, node: cst.BaseExpression) -> bool:
        """Whether evaluating `node` where Python would skip it could raise or
        have an effect: it indexes (out of range), divides integers (by zero)
        or calls anything but a pure TensorFlow math function."""
        for current in iter_nodes(node):
            if isinstance(current, (cst.Subscript, cst.Lambda, cst.NamedExpr)):
                return True
            if isinstance(current, cst.BinaryOperation) and isinstance(
                current.operator, (cst.FloorDivide, cst.Modulo)
            ):
                return True
            if isinstance(current, cst.Call):
                qualified = self.facts.resolver.qualified_name(current.func)
                if qualified not in _PURE_CALLS:
                    return True
        return False

    def _chained(self, node: cst.Comparison) -> Condition:
        """`a < b <= c` -> `tf.logical_and(a < b, b <= c)` (the middle operands
        are evaluated twice, so they must be free of calls)."""
        operands = _operands(node)
        for middle in operands[1:-1]:
            if any(isinstance(n, cst.Call) for n in iter_nodes(middle)):
                return Condition(
                    True,
                    reason=(
                        f"the chained comparison would evaluate `{self.code(middle)}` twice: "
                        "assign it to a variable first"
                    ),
                )
        for later in operands[2:]:
            if self._may_fail(later):
                return Condition(
                    True,
                    reason=(
                        f"the chained comparison would evaluate `{self.code(later)}` even when "
                        "an earlier link is False: split it into two `if`s"
                    ),
                )
        links: list[str] = []
        for i, comparison in enumerate(node.comparisons):
            link = cst.Comparison(
                left=operands[i].with_changes(lpar=[], rpar=[])
                if not _needs_parens(operands[i])
                else operands[i],
                comparisons=[comparison.with_changes(comparator=comparison.comparator)],
            )
            kind = self._kind(link)
            if not kind.tensor:
                return Condition(
                    True,
                    reason=(
                        f"`{self.code(link)}` in the chained comparison is not a tensor comparison"
                    ),
                )
            if not kind.scalar and not self.assume_scalar:
                return Condition(
                    True, reason=f"`{self.code(link)}` is not known to be a scalar tensor"
                )
            links.append(self.code(link))
        code = links[0]
        for link in links[1:]:
            code = f"{self.tf}.logical_and({code}, {link})"
        return Condition(True, code)

    def _leaf(self, node: cst.BaseExpression) -> Condition:
        kind = self._kind(node)
        text = self._bare(node)
        if self._membership_of_a_tensor(node):
            assert isinstance(node, cst.Comparison)
            return Condition(
                True,
                reason=(
                    f"`{text}` compares the tensor `{self.code(node.left)}` with each element "
                    "using `==`: write the comparisons with `tf.logical_or`"
                ),
            )
        if not kind.tensor:
            return Condition(
                True,
                reason=(
                    f"the condition `{text}` uses a tensor in a way that is not a tensor "
                    "condition (for example a Python call on a tensor)"
                ),
            )
        measured = self._length_of_a_tensor(node)
        if measured is not None:
            return Condition(
                True,
                reason=(
                    f"`len({measured})` of a tensor needs AutoGraph, since its length may be "
                    f"unknown while tracing: write `{self.tf}.shape({measured})[0]`"
                ),
            )
        if not kind.scalar and not self.assume_scalar:
            return Condition(True, reason=self._not_scalar(node, text))
        if kind.boolean:
            return Condition(True, text)
        wrapped = f"({text})" if _needs_parens_for_comparison(node) else text
        if kind.numeric:
            return Condition(True, f"{wrapped} != 0")
        boolean = '"bool"' if is_keras_ops(self.tf, self.facts.resolver) else f"{self.tf}.bool"
        return Condition(True, f"{self.tf}.cast({text}, {boolean})")

    def _length_of_a_tensor(self, node: cst.BaseExpression) -> str | None:
        """The source of `t` in a `len(t)` inside the condition, `t` a tensor:
        AutoGraph turns it into `tf.shape(t)[0]`; traced without AutoGraph, it
        raises on an unknown length."""
        for inner in iter_nodes(node):
            if (
                isinstance(inner, cst.Call)
                and isinstance(inner.func, cst.Name)
                and inner.func.value == "len"
                and len(inner.args) == 1
                and self._kind(inner.args[0].value).tensor
            ):
                return self.code(inner.args[0].value)
        return None

    def _not_scalar(self, node: cst.BaseExpression, text: str) -> str:
        """Why a tensor condition is not known to be a scalar: a Python
        operand of unknown shape, or a tensor that is not reduced."""
        if isinstance(node, cst.Comparison):
            operands = _operands(node)
            kinds = [self._kind(o) for o in operands]
            if any(k.scalar for k in kinds):
                unknown = next(
                    (
                        o
                        for o, k in zip(operands, kinds, strict=True)
                        if not k.tensor and not k.variable and not _is_number(o)
                    ),
                    None,
                )
                if unknown is not None:
                    return (
                        f"`{self.code(unknown)}` is not known to be a Python number, so "
                        f"`{text}` is not known to be a scalar"
                    )
        return (
            f"the condition `{text}` is a tensor not known to be a scalar "
            "(reduce it, e.g. with `tf.reduce_any`/`tf.reduce_all`)"
        )

    def _bare(self, node: cst.BaseExpression) -> str:
        """Source of `node` without redundant outer parentheses."""
        if node.lpar and not isinstance(node, (cst.Tuple, cst.GeneratorExp)):
            return self.code(node.with_changes(lpar=[], rpar=[]))
        return self.code(node)


# TensorFlow functions that neither fail on any input of the right dtype nor
# have effects, so evaluating them where Python would not is harmless.
# (`tf.pow` is not: an integer to a negative power fails.)
_PURE_CALLS = (REDUCTIONS | ALWAYS_SCALAR | SCALAR_PRESERVING | BOOL_RESULTS) - {"tensorflow.pow"}


# TensorFlow functions that return Python values (structure checks): an `if`
# on them is a Python `if` (`tf.nest.is_nested(state)`).
_PYTHON_VALUED_PREFIXES = (
    "tensorflow.nest.",
    "tensorflow.is_tensor",
    "tensorflow.executing_eagerly",
)


def _contains_walrus(node: cst.BaseExpression) -> bool:
    return any(isinstance(n, cst.NamedExpr) for n in iter_nodes(node))


def _operands(node: cst.Comparison) -> list[cst.BaseExpression]:
    """`[a, b, c]` for `a < b <= c`."""
    return [node.left, *(c.comparator for c in node.comparisons)]


def _is_number(node: cst.BaseExpression) -> bool:
    return literal_kind(node) in ("int", "float")


def _needs_parens(node: cst.BaseExpression) -> bool:
    return isinstance(
        node, (cst.BooleanOperation, cst.IfExp, cst.Lambda, cst.NamedExpr, cst.Comparison)
    )


def _needs_parens_for_comparison(node: cst.BaseExpression) -> bool:
    return isinstance(
        node,
        (
            cst.BooleanOperation,
            cst.IfExp,
            cst.Lambda,
            cst.NamedExpr,
            cst.Comparison,
            cst.UnaryOperation,
        ),
    ) and not (isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus))
