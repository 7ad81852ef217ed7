"""Tensor facts for NumPy math: the shared analysis, extended to the results
of NumPy calls that TFR104 rewrites into TensorFlow ops.

`np.square(y_true - y_pred)` is a floating-point tensor once rewritten, so
`np.mean` around it, or around a local name bound only to it, is found in the
same run.
"""

from __future__ import annotations

import libcst as cst

from tfrewrite.facts.bindings import local_bindings
from tfrewrite.facts.context import RuleContext
from tfrewrite.facts.tensor_kinds import (
    FLOATING,
    NOT_TENSOR,
    TENSOR,
    TensorKind,
    is_python_number,
)
from tfrewrite.facts.tensors import TensorFacts
from tfrewrite.rewrite.numpy_ops import (
    ACCUMULATE,
    INDEX,
    JOIN,
    MAPPINGS,
    MEAN,
    PRESERVE,
    SELECT,
    UNMAPPED,
    Mapping,
)


def numpy_function(node: cst.CSTNode, ctx: RuleContext) -> str | None:
    """`mean` for a call to `numpy.mean` (any import spelling), else None."""
    if not isinstance(node, cst.Call):
        return None
    qualified = ctx.names.qualified_name(node.func)
    if qualified is None or not qualified.startswith("numpy."):
        return None
    name = qualified[len("numpy.") :]
    return name if name in MAPPINGS else None


def builtin_extremum(node: cst.CSTNode, ctx: RuleContext) -> str | None:
    """`max` or `min` for a call to the builtin (not imported, not defined in
    this file), else None."""
    if not (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Name)
        and node.func.value in ("max", "min")
    ):
        return None
    name = node.func.value
    if ctx.names.qualified_name(node.func) is not None or name in ctx.index.functions:
        return None
    return name


def extremum_operands(call: cst.Call) -> list[cst.BaseExpression]:
    """The values `max(a, b)` / `max([a, b])` compares (one list or tuple
    display is looked into; `max(x)` compares the elements of `x`)."""
    values = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
    if len(values) == 1 and isinstance(values[0], (cst.List, cst.Tuple)):
        return [e.value for e in values[0].elements if not isinstance(e, cst.StarredElement)]
    return values


def numpy_modules() -> tuple[str, ...]:
    """The NumPy modules whose functions the op table maps (`numpy`, `numpy.linalg`)."""
    return tuple(sorted({"numpy", *("numpy." + n.rsplit(".", 1)[0] for n in MAPPINGS if "." in n)}))


def is_python_float(node: cst.BaseExpression) -> bool:
    """A Python number literal expression whose value is a float."""
    if not is_python_number(node):
        return False
    if isinstance(node, cst.Float):
        return True
    if isinstance(node, cst.UnaryOperation):
        return is_python_float(node.expression)
    if isinstance(node, cst.BinaryOperation):
        return (
            isinstance(node.operator, cst.Divide)
            or is_python_float(node.left)
            or is_python_float(node.right)
        )
    return False


class Operands:
    """Tensor facts for one traced function, extended to the results of NumPy
    calls this rule rewrites: `np.square(y_true - y_pred)` is a floating-point
    tensor once rewritten, so `np.mean` around it is a finding too."""

    def __init__(self, ctx: RuleContext, facts: TensorFacts) -> None:
        self.ctx = ctx
        self.facts = facts
        self._bindings: dict[str, list[cst.BaseExpression | None]] | None = None
        self._visiting: set[str] = set()

    def kind(self, node: cst.BaseExpression) -> TensorKind:
        known = self.facts.kind(node)
        if known.tensor and not (known.boolean or known.integer or known.floating):
            logical = self._logical_kind(node)
            if logical is not None:
                return logical
        if known.tensor:
            return known
        if isinstance(node, cst.Name):
            return self._name_kind(node.value)
        extremum = builtin_extremum(node, self.ctx)
        if extremum is not None:
            assert isinstance(node, cst.Call)
            kinds = [self.kind(value) for value in extremum_operands(node)]
            if not any(k.tensor for k in kinds):
                return NOT_TENSOR
            tensors = [k for k in kinds if k.tensor]
            return TensorKind(
                True,
                floating=all(k.floating for k in tensors),
                integer=all(k.integer for k in tensors),
            )
        name = numpy_function(node, self.ctx)
        if name is not None:
            assert isinstance(node, cst.Call)
            return self._numpy_result(name, node)
        if isinstance(node, cst.BinaryOperation):
            left, right = self.kind(node.left), self.kind(node.right)
            if not (left.tensor or right.tensor):
                return NOT_TENSOR
            floating = (
                left.floating
                or right.floating
                or is_python_float(node.left)
                or is_python_float(node.right)
                or isinstance(node.operator, cst.Divide)
            )
            return FLOATING if floating else TENSOR
        if isinstance(node, cst.UnaryOperation) and not isinstance(node.operator, cst.Not):
            inner = self.kind(node.expression)
            return TensorKind(inner.tensor, floating=inner.floating, integer=inner.integer)
        if isinstance(node, cst.Subscript):
            base = self.kind(node.value)
            return TensorKind(base.tensor, floating=base.floating, integer=base.integer)
        return NOT_TENSOR

    def _logical_kind(self, node: cst.BaseExpression) -> TensorKind | None:
        """`~m`, `m & n`, `m | n`, `m ^ n` of boolean tensors are boolean
        (`np.mean(~mask)` averages booleans: NumPy in float64)."""
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.BitInvert):
            inner = self.kind(node.expression)
            return inner if inner.boolean else None
        if isinstance(node, cst.BinaryOperation) and isinstance(
            node.operator, (cst.BitAnd, cst.BitOr, cst.BitXor)
        ):
            left, right = self.kind(node.left), self.kind(node.right)
            if left.boolean and right.boolean:
                return TensorKind(True, boolean=True)
        return None

    def _name_kind(self, name: str) -> TensorKind:
        """A local name every binding of which is a plain assignment of a
        tensor, counting the NumPy calls this rule rewrites (`err =
        np.square(y_true - y_pred)`): the shared analysis will know it for a
        tensor once those are rewritten, so it is reported in the same run."""
        if self._bindings is None:
            self._bindings = local_bindings(self.facts.function)
        values = self._bindings.get(name)
        if not values or name in self.facts.params or name in self._visiting:
            return NOT_TENSOR
        self._visiting.add(name)
        try:
            kinds = [self.kind(value) if value is not None else NOT_TENSOR for value in values]
        finally:
            self._visiting.discard(name)
        if not all(k.tensor for k in kinds):
            return NOT_TENSOR
        return TensorKind(
            True,
            floating=all(k.floating for k in kinds),
            integer=all(k.integer for k in kinds),
            boolean=all(k.boolean for k in kinds),
        )

    def _numpy_result(self, name: str, call: cst.Call) -> TensorKind:
        mapping = MAPPINGS[name]
        if mapping.category == UNMAPPED:
            return NOT_TENSOR  # stays NumPy: reported on its own, never a tensor
        data = self.data_operands(mapping, call)
        if mapping.category == SELECT:
            data = data[1:]  # the condition does not give the result its dtype
        kinds = [self.kind(node) for node in data]
        tensors = [k for k in kinds if k.tensor]
        if not tensors:
            return NOT_TENSOR
        if mapping.category == INDEX:
            return TensorKind(True, integer=True)
        if mapping.category == MEAN or all(k.floating for k in tensors):
            return FLOATING
        if mapping.category == ACCUMULATE and all(k.integer or k.boolean for k in tensors):
            return TensorKind(True, integer=True)
        if mapping.category in (PRESERVE, SELECT, JOIN) and all(k.integer for k in tensors):
            return TensorKind(True, integer=True)
        return TENSOR

    def data_operands(self, mapping: Mapping, call: cst.Call) -> list[cst.BaseExpression]:
        """The array operands of a call, found leniently (before binding): the
        positional and keyword arguments of the data parameters; the elements
        of a list or tuple display for `concatenate`/`stack`."""
        found: list[cst.BaseExpression] = []
        for position, arg in enumerate(call.args):
            if arg.star:
                continue
            param = (
                arg.keyword.value
                if arg.keyword is not None
                else (mapping.params[position] if position < len(mapping.params) else None)
            )
            if param in mapping.data:
                found.append(arg.value)
        if mapping.category == JOIN:
            return [
                element.value
                for sequence in found
                if isinstance(sequence, (cst.List, cst.Tuple))
                for element in sequence.elements
                if not isinstance(element, cst.StarredElement)
            ]
        return found
