"""What a traced print must print instead of what Python would have shown.

Three differences between a `print` run eagerly and a `tf.print` in a graph,
each fixed on the printed arguments before they are turned into `tf.print`
arguments:

- Host reads of a tensor (`float(loss)`, `loss.numpy()`, `int(step)`) fail on
  a symbolic tensor; printed, they show the tensor's value, which `tf.print`
  shows from the tensor itself (`int(x)` of a float truncates toward zero, as
  `tf.cast` to an integer does).
- `x.shape[0]` is the static dimension: under an `input_signature` or
  `reduce_retracing=True` it is `None` while tracing, where the eager `print`
  showed the batch size; `tf.shape(x)[0]` is the dimension at run time.
- `tf.print` abbreviates a tensor past three elements per dimension
  (`summarize=3`); `print` showed every value of a small array, so a print
  that may show a tensor of more than one element passes `summarize=-1`.
"""

from __future__ import annotations

import libcst as cst

from tfrewrite.facts.bindings import single_values
from tfrewrite.facts.context import RuleContext
from tfrewrite.facts.tensor_kinds import NON_TENSOR_ATTRIBUTES, TensorKind
from tfrewrite.facts.tensors import TensorFacts
from tfrewrite.facts.walk import child_nodes, iter_expression
from tfrewrite.rewrite.traced_calls import Refusal
from tfrewrite.rules.host_values.print_array_methods import (
    ArrayFold,
    FoldedMethods,
    fold_array_methods,
)
from tfrewrite.rules.host_values.print_containers import Containers
from tfrewrite.rules.host_values.print_pieces import STATIC_BUILTINS

# Builtins whose result is a Python number read from a scalar tensor.
_NUMBER_READS = frozenset({"float", "int"})


def host_read(facts: TensorFacts, node: cst.CSTNode, ctx: RuleContext) -> cst.BaseExpression | None:
    """The tensor `T` of `float(T)`, `int(T)` or `T.numpy()` when `T` is a
    tensor, else None."""
    if not isinstance(node, cst.Call):
        return None
    func = node.func
    if (
        isinstance(func, cst.Attribute)
        and func.attr.value == "numpy"
        and not node.args
        and not isinstance(func.value, (cst.SimpleString, cst.FormattedString, cst.List))
    ):
        return func.value  # only TensorFlow values have `.numpy()`
    if _number_read(ctx, node) and facts.is_tensor(node.args[0].value):
        return node.args[0].value
    return None


class _HostReads(cst.CSTTransformer):
    def __init__(self, ctx: RuleContext, facts: TensorFacts, tf: str) -> None:
        self.ctx = ctx
        self.facts = facts
        self.tf = tf
        self.assumed: set[str] = set()  # `.numpy()` receivers not known to be tensors
        self.methods = FoldedMethods()
        # Array methods after a `.numpy()` read, by the call they end in.
        self.folds: dict[int, ArrayFold] = {}
        # The original nodes around the one being left (itself excluded).
        self.ancestors: list[cst.CSTNode] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        self.ancestors.append(node)
        return super().on_visit(node)

    def on_leave(
        self, original_node: cst.CSTNode, updated_node: cst.CSTNode
    ) -> cst.CSTNode | cst.RemovalSentinel | cst.FlattenSentinel[cst.CSTNode]:
        self.ancestors.pop()
        return super().on_leave(original_node, updated_node)

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        fold = self.folds.get(id(original_node))
        if fold is not None:
            return self._folded(fold, original_node, updated_node)
        tensor = host_read(self.facts, original_node, self.ctx)
        kind = self.facts.kind(tensor) if tensor is not None else None
        if tensor is None and _number_read(self.ctx, original_node):
            # `float(y.numpy().sum())`: a Python number read from the fold.
            fold = self.folds.get(id(original_node.args[0].value))
            if fold is not None:
                tensor, kind = original_node.args[0].value, fold.kind
        if tensor is None or kind is None:
            return updated_node
        func = original_node.func
        if isinstance(func, cst.Attribute):
            self._fold_methods(original_node, tensor, kind)
        if not kind.tensor and not kind.variable:
            self.assumed.add(self.ctx.code(tensor.with_changes(lpar=(), rpar=())))
        # The updated operand (a nested read inside it is already replaced).
        func = updated_node.func
        inner = func.value if isinstance(func, cst.Attribute) else updated_node.args[0].value
        if (
            isinstance(original_node.func, cst.Name)
            and original_node.func.value == "int"
            and not kind.integer
        ):
            bare = inner.with_changes(lpar=(), rpar=())
            code = self.ctx.code(bare)
            cast = cst.parse_expression(f"{self.tf}.cast({code}, {self.tf}.int64)")
            return cast.with_changes(lpar=original_node.lpar, rpar=original_node.rpar)
        return _in_place_of(original_node, inner)

    def _fold_methods(self, read: cst.Call, tensor: cst.BaseExpression, kind: TensorKind) -> None:
        """Record what the array methods after `read` become (`Refusal`: why
        they cannot), for the calls that end them to be replaced."""
        if not kind.tensor and not kind.variable:
            kind = TensorKind(True)  # assumed, as the read is
        try:
            fold = fold_array_methods(read, tensor, self.ancestors, kind, self.ctx.code, self.tf)
        except Refusal as refusal:
            self.methods.refuse(str(refusal))
            return
        if fold is not None:
            self.folds[id(fold.top)] = fold

    def _folded(
        self, fold: ArrayFold, original_node: cst.Call, updated_node: cst.Call
    ) -> cst.BaseExpression:
        receiver = fold.receiver(updated_node)
        if not fold.reductions:
            return _in_place_of(original_node, receiver)
        code = fold.apply(self.ctx.code(receiver.with_changes(lpar=(), rpar=())), self.tf)
        self.methods.kinds[code] = fold.kind
        self.methods.notes += [note for note in fold.notes if note not in self.methods.notes]
        replacement = cst.parse_expression(code)
        return replacement.with_changes(lpar=original_node.lpar, rpar=original_node.rpar)


def _in_place_of(original: cst.Call, inner: cst.BaseExpression) -> cst.BaseExpression:
    """`inner` written where the call `original` was: with the call's
    parentheses, or with its own where an operator would bind differently."""
    if original.lpar:
        return inner.with_changes(lpar=original.lpar, rpar=original.rpar)
    if isinstance(inner, (cst.BinaryOperation, cst.BooleanOperation, cst.IfExp)):
        return inner.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return inner


def _number_read(ctx: RuleContext, node: cst.Call) -> bool:
    """`float(v)` or `int(v)` of the builtins, with one plain argument."""
    return (
        isinstance(node.func, cst.Name)
        and node.func.value in _NUMBER_READS
        and ctx.names.qualified_name(node.func) is None
        and len(node.args) == 1
        and node.args[0].keyword is None
        and not node.args[0].star
    )


def strip_host_reads(
    ctx: RuleContext, facts: TensorFacts, node: cst.Call, tf: str
) -> tuple[cst.Call, set[str], FoldedMethods]:
    """`node` with each host read of a tensor replaced by the tensor (and the
    NumPy reductions after a `.numpy()` read by TensorFlow's), the `.numpy()`
    receivers that are not known to be tensors (assumed to be), and what the
    array methods after the reads became."""
    transformer = _HostReads(ctx, facts, tf)
    result = node.visit(transformer)
    assert isinstance(result, cst.Call)
    return result, transformer.assumed, transformer.methods


class _ShapeReads(cst.CSTTransformer):
    def __init__(self, ctx: RuleContext, facts: TensorFacts, tf: str) -> None:
        self.ctx = ctx
        self.facts = facts
        self.tf = tf
        self.changed = False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def leave_Subscript(
        self, original_node: cst.Subscript, updated_node: cst.Subscript
    ) -> cst.BaseExpression:
        value = original_node.value
        if not (
            isinstance(value, cst.Attribute)
            and value.attr.value == "shape"
            and len(original_node.slice) == 1
            and isinstance(original_node.slice[0].slice, cst.Index)
            and _is_tensor_or_param(self.facts, value.value)
        ):
            return updated_node
        self.changed = True
        base = self.ctx.code(value.value.with_changes(lpar=(), rpar=()))
        index = self.ctx.code(original_node.slice[0].slice.value)
        replacement = cst.parse_expression(f"{self.tf}.shape({base})[{index}]")
        return replacement.with_changes(lpar=original_node.lpar, rpar=original_node.rpar)


def _is_tensor_or_param(facts: TensorFacts, node: cst.BaseExpression) -> bool:
    """A tensor, or a parameter of a function traced with an `input_signature`
    (every argument is then a tensor)."""
    if facts.is_tensor(node):
        return True
    return isinstance(node, cst.Name) and node.value in facts.params - {"self", "cls"}


def dynamic_shape_reads(
    ctx: RuleContext, facts: TensorFacts, node: cst.Call, tf: str
) -> tuple[cst.Call, bool]:
    """`node` with each static dimension read `x.shape[i]` of a tensor
    replaced by its run-time value `tf.shape(x)[i]`, and whether any was."""
    transformer = _ShapeReads(ctx, facts, tf)
    result = node.visit(transformer)
    assert isinstance(result, cst.Call)
    return result, transformer.changed


def shows_many(facts: TensorFacts, node: cst.CSTNode) -> bool:
    """Whether printing `node` may show a tensor of more than one element: a
    tensor not known to be a scalar, printed itself or inside a container or
    string formatting (not inside an op that reduces it, nor static facts)."""
    stack: list[cst.CSTNode] = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, (cst.Lambda, cst.FunctionDef)):
            continue
        if isinstance(current, cst.Attribute) and current.attr.value in NON_TENSOR_ATTRIBUTES:
            continue
        if isinstance(current, cst.Call) and isinstance(current.func, cst.Name):
            if current.func.value in STATIC_BUILTINS or current.func.value in _NUMBER_READS:
                continue
        if isinstance(current, (cst.BinaryOperation, cst.UnaryOperation)):
            # Element-wise (or string formatting): as many elements as its operands.
            stack.extend(child_nodes(current))
            continue
        if isinstance(current, cst.BaseExpression) and facts.is_tensor(current):
            if not (facts.is_scalar_tensor(current) or _scalar_read(facts, current)):
                return True
            continue
        if (
            isinstance(current, cst.Name)
            and isinstance(facts, PrintedFacts)
            and facts.containers.many.get(current.value, False)
        ):
            return True  # a container of tensors, one of which may be long
        stack.extend(child_nodes(current))
    return False


def _scalar_read(facts: TensorFacts, node: cst.BaseExpression) -> bool:
    """Scalars the shared analysis does not mark as such: one dimension of
    `tf.shape(x)` (`tf.shape(x)[0]`) and a cast of a scalar."""
    if (
        isinstance(node, cst.Subscript)
        and isinstance(node.value, cst.Call)
        and facts.resolver.qualified_name(node.value.func) == "tensorflow.shape"
        and len(node.slice) == 1
        and isinstance(node.slice[0].slice, cst.Index)
    ):
        return True
    if (
        isinstance(node, cst.Call)
        and facts.resolver.qualified_name(node.func) == "tensorflow.cast"
        and node.args
        and node.args[0].keyword is None
    ):
        first = node.args[0].value
        return facts.is_scalar_tensor(first) or _scalar_read(facts, first)
    return False


def leftover_numpy_read(node: cst.CSTNode) -> cst.Call | None:
    """A `.numpy()` call left in a print's arguments once the reads of known
    tensors are replaced: only TensorFlow values have `.numpy()`, so it fails
    when traced, and nothing shows what `tf.print` could print instead."""
    for current in iter_expression(node):
        if (
            isinstance(current, cst.Call)
            and isinstance(current.func, cst.Attribute)
            and current.func.attr.value == "numpy"
            and not current.args
        ):
            return current
    return None


def host_read_names(
    ctx: RuleContext, function: cst.FunctionDef, facts: TensorFacts
) -> frozenset[str]:
    """Names `function` binds exactly once, to `t.numpy()`, `float(t)` or
    `int(t)` of a proven tensor `t` (`loss_value = loss.numpy()`)."""
    names = set()
    for name, value in single_values(function).items():
        source = _host_read_source(ctx, value)
        if source is not None and facts.kind(source).tensor:
            names.add(name)
    return frozenset(names)


def _host_read_source(ctx: RuleContext, node: cst.BaseExpression) -> cst.BaseExpression | None:
    """`t` for `t.numpy()`, `float(t)` or `int(t)` (builtins, not shadowed)."""
    if (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and node.func.attr.value == "numpy"
        and not node.args
    ):
        return node.func.value
    if (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Name)
        and node.func.value in ("float", "int")
        and ctx.names.qualified_name(node.func) is None
        and len(node.args) == 1
        and node.args[0].keyword is None
        and not node.args[0].star
    ):
        return node.args[0].value
    return None


class PrintedFacts:
    """Tensor facts as a print sees them: a `tf.Variable` prints its value as
    a tensor does (`tf.print(v)` shows it on every call), and the receivers
    of `.numpy()` reads replaced by `strip_host_reads` (only TensorFlow
    values have `.numpy()`) are taken for tensors: `assumed` holds their
    source, for the fix to say what it assumes. `host_values` are names bound
    once to a host read of a proven tensor (`loss_value = loss.numpy()`),
    which TFR105 turns back into the tensor in the same run: the print shows
    them as the tensors they become. `methods` says what the NumPy array
    methods after the reads became (`tf.reduce_max(y)` for `y.numpy().max()`)
    and the kind of each. `containers` are names holding a dict, list or
    tuple of tensors (`print_containers`): no tensors, but a print of them
    shows tensor values (`shows_values` asks)."""

    def __init__(
        self,
        facts: TensorFacts,
        ctx: RuleContext,
        assumed: set[str],
        host_values: frozenset[str] = frozenset(),
        methods: FoldedMethods | None = None,
        containers: Containers | None = None,
    ) -> None:
        self.facts = facts
        self.ctx = ctx
        self.assumed = assumed
        self.host_values = host_values
        self.methods = methods if methods is not None else FoldedMethods()
        self.containers = containers if containers is not None else Containers()

    def kind(self, node: cst.BaseExpression) -> TensorKind:
        known = self.facts.kind(node)
        if known.tensor:
            return known
        if known.variable:
            return TensorKind(True, known.scalar, known.boolean, known.floating, known.integer)
        if isinstance(node, cst.Name) and node.value in self.host_values:
            return TensorKind(True)
        if self.assumed or self.methods.kinds:
            code = self.ctx.code(node.with_changes(lpar=(), rpar=()))
            if code in self.methods.kinds:
                return self.methods.kinds[code]
            if code in self.assumed:
                return TensorKind(True)
        return known

    def is_tensor(self, node: cst.BaseExpression) -> bool:
        return self.kind(node).tensor

    def is_scalar_tensor(self, node: cst.BaseExpression) -> bool:
        kind = self.kind(node)
        return kind.tensor and kind.scalar

    def __getattr__(self, name: str) -> object:
        return getattr(self.facts, name)


def formatted_operands(node: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The values a Python string formatting shows: the operands of
    `"..." % (a, b)`, the arguments of `"...".format(a, b)`, the fields of an
    f-string (none for anything else)."""
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Modulo):
        if isinstance(node.right, cst.Tuple):
            return [e.value for e in node.right.elements]
        return [node.right]
    if (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and node.func.attr.value == "format"
    ):
        return [arg.value for arg in node.args]
    if isinstance(node, cst.FormattedString):
        return [
            part.expression
            for part in node.parts
            if isinstance(part, cst.FormattedStringExpression)
        ]
    if isinstance(node, cst.ConcatenatedString):
        return [*formatted_operands(node.left), *formatted_operands(node.right)]
    return []


def python_only(facts: TensorFacts, node: cst.BaseExpression) -> bool:
    """A value known to be Python's: a literal, a name bound only to numbers,
    a static fact about a tensor (`x.shape`, `len(x)`)."""
    if isinstance(
        node,
        (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString, cst.Integer, cst.Float),
    ):
        return True
    if isinstance(node, cst.Attribute) and node.attr.value in NON_TENSOR_ATTRIBUTES:
        return True
    if (
        isinstance(node, cst.Subscript)
        and isinstance(node.value, cst.Attribute)
        and node.value.attr.value == "shape"
    ):
        return True
    if (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Name)
        and node.func.value in STATIC_BUILTINS
    ):
        return True
    return facts._is_number(node)  # noqa: SLF001 - the facts' own number test
