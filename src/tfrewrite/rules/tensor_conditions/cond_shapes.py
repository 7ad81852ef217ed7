"""Branches valid only for the shapes their condition selects.

A Python `if` runs one branch; `tf.cond` traces both, whatever the
condition. So `if tf.shape(y_pred)[0] > 1: v = y_pred[1]` is fine eagerly and
under AutoGraph when the batch size is unknown while tracing, but as a
`tf.cond` traced on a batch of one, `y_pred[1]` fails to build ("slice index
1 of dimension 0 out of bounds"), where the `if` would have skipped it; so
does `tf.squeeze(y, axis=-1)` guarded by `tf.rank(y) > 1` on a rank-1 `y`.

The hazard needs two facts about one value: the condition tests its
structure (its rank, a dimension, its shape or size, directly or through
names bound to such a test), and a branch reads that structure (an
index, an axis, a reshape, a call that is not element-wise math or a
reduction over all axes). Uses that hold for every shape (element-wise
arithmetic, `tf.shape(y)`, `y.shape.rank`) do not count. A branch that
cannot be shown to stay clear of the tested structure is treated as
reading it: the rewrite is refused rather than risked.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import libcst as cst

from tfrewrite.facts.bindings import iter_assignments, split_target
from tfrewrite.facts.block_exits import Statement
from tfrewrite.facts.names import NameResolver, dotted_name
from tfrewrite.facts.tensor_kinds import ELEMENTWISE_LEAVES, REDUCTIONS, SCALAR_PRESERVING
from tfrewrite.facts.walk import child_nodes, iter_nodes

# Functions whose result is the structure of their argument: a condition
# built on them tests that structure. They never fail, whatever the shape.
_RANK = frozenset({"tensorflow.rank", "tensorflow.math.rank"})
_SHAPE = frozenset({"tensorflow.shape"})
_SIZE = frozenset({"tensorflow.size"})
_STRUCTURE = _RANK | _SHAPE | _SIZE
# Ops whose result has as many rows as the data selects (besides the
# one-argument `tf.where`).
_DATA_SIZED = frozenset({"tensorflow.boolean_mask"})
# Ops whose result has as many rows as their indices (`tf.gather(x, rows)`
# along axis 0): data-sized when the indices are.
_ROWS_OF_INDICES = frozenset({"tensorflow.gather", "tensorflow.gather_nd"})
# Calls valid for a tensor of any shape, which read none of its structure.
_ANY_SHAPE = frozenset({"tensorflow.print", "tensorflow.identity"})
# Arguments of a reduction that keep it a reduction over every axis.
_WHOLE_REDUCTION_KEYWORDS = frozenset({"keepdims", "name"})


@dataclass(frozen=True)
class TestedStructure:
    """What a condition tests of one value: `what` for messages."""

    value: str  # dotted source of the value (`y_pred`, `self.targets`)
    what: str  # "the rank of `y`", "the batch size (dimension 0) of `y_pred`"
    rank: bool  # a rank test (its static form is `value.shape.rank`)
    # The count of its first dimension is tested: its batch size or its size.
    counts_rows: bool = False


class ShapeGuards:
    """What conditions in one function test of the structure of values, and
    whether code reads that structure."""

    def __init__(
        self,
        function: cst.FunctionDef,
        resolver: NameResolver,
        code: Callable[[cst.CSTNode], str],
    ) -> None:
        self.function = function
        self.resolver = resolver
        self.code = code
        self._values: dict[str, list[cst.CSTNode]] | None = None

    @property
    def values(self) -> dict[str, list[cst.CSTNode]]:
        """What each local name is bound to, every binding of it (a test may
        read `n = tf.shape(y_pred)[0]` through `n`, also after `n -= 1`)."""
        if self._values is None:
            self._values = {}
            for target, value, _ in iter_assignments(self.function.body):
                if isinstance(value, cst.For):
                    value = value.iter
                elif isinstance(value, cst.AugAssign):
                    value = value.value
                for name, part, _ in split_target(target, value):
                    if part is not None:
                        self._values.setdefault(name, []).append(part)
        return self._values

    def tested(self, test: cst.BaseExpression) -> list[TestedStructure]:
        """The structures `test` reads, in source order, each value once."""
        found: dict[str, TestedStructure] = {}
        self._collect(test, found, set())
        return list(found.values())

    def _collect(
        self, node: cst.CSTNode, found: dict[str, TestedStructure], seen: set[str]
    ) -> None:
        """Structure reads in `node`, and in the values of names bound once
        that it reads (not of the value a structure read measures: `y` in
        `tf.rank(y)` is tested, not followed)."""
        tested = self._structure_read(node)
        if tested is not None:
            found.setdefault(tested.value, tested)
            return
        if isinstance(node, cst.Name):
            if node.value not in seen:
                seen.add(node.value)
                for bound in self.values.get(node.value, ()):
                    self._collect(bound, found, seen)
            return
        for child in child_nodes(node):
            self._collect(child, found, seen)

    def _structure_read(self, node: cst.CSTNode) -> TestedStructure | None:
        """`tf.rank(y)`, `tf.shape(y)[0]`, `tf.shape(y)`, `tf.size(y)`."""
        dimension: int | None = None
        call = node
        if isinstance(node, cst.Subscript) and len(node.slice) == 1:
            element = node.slice[0].slice
            if isinstance(element, cst.Index):
                dimension = _integer(element.value)
            call = node.value
        if not (isinstance(call, cst.Call) and call.args and call.args[0].keyword is None):
            return None
        qualified = self.resolver.qualified_name(call.func)
        if qualified not in _STRUCTURE:
            return None
        value = self.key(call.args[0].value)
        if value is None:
            return None
        if qualified in _RANK:
            return TestedStructure(value, f"the rank of `{value}`", rank=True)
        if qualified in _SHAPE and node is not call and dimension is not None:
            if dimension == 0:
                what = f"the batch size (dimension 0) of `{value}`"
                return TestedStructure(value, what, False, counts_rows=True)
            return TestedStructure(value, f"dimension {dimension} of `{value}`", False)
        what = "size" if qualified in _SIZE else "shape"
        return TestedStructure(value, f"the {what} of `{value}`", False, qualified in _SIZE)

    def rows_unknown_while_tracing(self, structure: TestedStructure) -> bool:
        """Whether the rows the condition counts are never known while
        tracing: every binding of the value is an op whose number of rows
        depends on the data (`tf.where(mask)`, `tf.boolean_mask(x, mask)`:
        its static shape is `(None, ...)` even for constant inputs, measured
        on TensorFlow 2.21). A branch that reads those rows then cannot fail
        to trace, whatever the `if` would have skipped."""
        if not structure.counts_rows or "." in structure.value:
            return False
        return self._data_sized(cst.Name(structure.value), set())

    def _data_sized(self, value: cst.CSTNode, seen: set[str]) -> bool:
        """Whether the rows of `value` depend on the data: a data-sized op,
        a name every binding of which is one, rows picked by data-sized
        indices (`tf.gather(x, tf.where(m)[:, 0])`), or every row of such a
        value (`hits[:, 0]`)."""
        if isinstance(value, cst.Name):
            bindings = self.values.get(value.value, [])
            if value.value in seen or not bindings:
                return False
            seen.add(value.value)
            return all(self._data_sized(bound, seen) for bound in bindings)
        if isinstance(value, cst.Subscript):
            first = value.slice[0].slice
            every_row = (
                isinstance(first, cst.Slice)
                and first.lower is None
                and first.upper is None
                and first.step is None
            )
            return every_row and self._data_sized(value.value, seen)
        if not isinstance(value, cst.Call):
            return False
        qualified = self.resolver.qualified_name(value.func)
        positional = [a.value for a in value.args if a.keyword is None and not a.star]
        if qualified == "tensorflow.where":
            return len(positional) == 1 and len(value.args) == 1  # indices, not a select
        if qualified in _ROWS_OF_INDICES:
            # Along axis 0 only: an `axis` or `batch_dims` keeps other rows.
            return (
                len(positional) == 2
                and len(value.args) == 2
                and self._data_sized(positional[1], seen)
            )
        return qualified in _DATA_SIZED

    # -- what code reads of a value ---------------------------------------------
    def first_structural_use(
        self, statements: Sequence[Statement | cst.BaseExpression], values: set[str]
    ) -> cst.CSTNode | None:
        """The first expression in `statements` that reads the structure of
        one of `values` (or of a name computed from them element-wise),
        None when every use holds for any shape."""
        tracked = set(values)
        for statement in statements:
            small: Sequence[cst.CSTNode] = (
                statement.body if isinstance(statement, cst.SimpleStatementLine) else [statement]
            )
            for part in small:
                found = self._use(part, tracked)
                if found is not None:
                    return found
                if isinstance(part, cst.BaseCompoundStatement):
                    # Names it may bind from a tracked value keep carrying it.
                    for inner in iter_nodes(part, into_functions=False):
                        if isinstance(inner, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
                            self._follow(inner, tracked, conditional=True)
                else:
                    self._follow(part, tracked)
        return None

    def _follow(self, statement: cst.CSTNode, tracked: set[str], conditional: bool = False) -> None:
        """After `name = value` (or `name += value`): `name` carries the
        tested structure when `value` reads a tracked value (element-wise,
        or `_use` would have reported it), and no longer when it is bound
        to something else (unless the binding is `conditional`)."""
        if isinstance(statement, cst.Assign):
            targets = [t.target for t in statement.targets]
        elif isinstance(statement, (cst.AugAssign, cst.AnnAssign)):
            targets = [statement.target]
        else:
            return
        value = statement.value
        carries = value is not None and any(self._tracked(n, tracked) for n in iter_nodes(value))
        for target in targets:
            name = self.key(target)
            if name is None:
                continue
            if carries:
                tracked.add(name)
            elif not conditional and not isinstance(statement, cst.AugAssign):
                tracked.discard(name)

    def key(self, node: cst.CSTNode) -> str | None:
        """How a value is recognised in the code around: `y`, `self.y`,
        `outputs[0]` (by its source); None for a value computed in place."""
        if isinstance(node, (cst.Name, cst.Attribute)):
            return dotted_name(node)
        if isinstance(node, cst.Subscript) and self.key(node.value) is not None:
            return self.code(node.with_changes(lpar=[], rpar=[])).strip()
        return None

    def _tracked(self, node: cst.CSTNode, tracked: set[str]) -> bool:
        return isinstance(node, (cst.Name, cst.Attribute, cst.Subscript)) and (
            self.key(node) in tracked
        )

    def _reads_structure_of(self, node: cst.BaseExpression, tracked: set[str]) -> bool:
        """`y`, `y.shape`, `y[0]`: an index into these reads `y`'s structure."""
        while isinstance(node, (cst.Attribute, cst.Subscript)):
            if self._tracked(node, tracked):
                return True
            node = node.value
        return self._tracked(node, tracked)

    def _use(self, node: cst.CSTNode, tracked: set[str]) -> cst.CSTNode | None:
        if isinstance(node, cst.Subscript) and self._reads_structure_of(node.value, tracked):
            return node
        if (
            isinstance(node, cst.BinaryOperation)
            and isinstance(node.operator, cst.MatrixMultiply)
            and (self._tracked(node.left, tracked) or self._tracked(node.right, tracked))
        ):
            return node  # needs rank 2 or more
        if isinstance(node, (cst.For, cst.CompFor)) and self._tracked(node.iter, tracked):
            return node  # iterating needs a known first dimension
        if (
            isinstance(node, cst.Assign)
            and self._tracked(node.value, tracked)
            and any(isinstance(t.target, (cst.Tuple, cst.List)) for t in node.targets)
        ):
            return node  # unpacking needs a known first dimension
        if isinstance(node, cst.Call):
            func = node.func
            if isinstance(func, cst.Attribute) and self._reads_structure_of(func.value, tracked):
                return node  # a method of the value (`y.numpy()`, `y.shape.as_list()`)
            if any(self._tracked(arg.value, tracked) for arg in node.args):
                if not self._shape_agnostic(node):
                    return node
        for child in child_nodes(node):
            found = self._use(child, tracked)
            if found is not None:
                return found
        return None

    def _shape_agnostic(self, call: cst.Call) -> bool:
        """A call valid for any shape of its tensor arguments: element-wise
        math, a reduction over every axis, a structure query, or a print."""
        qualified = self.resolver.qualified_name(call.func) or ""
        if qualified in _STRUCTURE or qualified in _ANY_SHAPE or qualified in SCALAR_PRESERVING:
            return True
        namespace, _, leaf = qualified.rpartition(".")
        if namespace in ("tensorflow", "tensorflow.math") and leaf in ELEMENTWISE_LEAVES:
            return True
        if qualified in REDUCTIONS:
            positional = [a for a in call.args if a.keyword is None]
            keywords = {a.keyword.value for a in call.args if a.keyword is not None}
            return len(positional) == 1 and keywords <= _WHOLE_REDUCTION_KEYWORDS
        return False


def _describe(use: cst.CSTNode, code: Callable[[cst.CSTNode], str]) -> str:
    """The source of a use on one line, a loop by its header."""
    if isinstance(use, (cst.For, cst.CompFor)):
        return f"for {code(use.target).strip()} in {code(use.iter).strip()}"
    return " ".join(code(use).split())


def _integer(node: cst.BaseExpression) -> int | None:
    """The value of an integer literal, possibly negative."""
    if isinstance(node, cst.Integer):
        return int(node.value, 0)
    if (
        isinstance(node, cst.UnaryOperation)
        and isinstance(node.operator, cst.Minus)
        and isinstance(node.expression, cst.Integer)
    ):
        return -int(node.expression.value, 0)
    return None


def both_branches_problem(
    guards: ShapeGuards,
    test: cst.BaseExpression,
    branches: Sequence[tuple[str, Sequence[Statement | cst.BaseExpression]]],
    code: Callable[[cst.CSTNode], str],
) -> str | None:
    """Why a `tf.cond` on `test` with these branches would fail to trace
    where the `if` works: a branch reads the structure the condition tests.
    Each branch is (how to name a use in it, with `{use}` for the use's
    source; its statements). None when no branch does."""
    tested = [t for t in guards.tested(test) if not guards.rows_unknown_while_tracing(t)]
    if not tested:
        return None
    by_value = {t.value: t for t in tested}
    for side, statements in branches:
        for structure in tested:
            use = guards.first_structural_use(statements, {structure.value})
            if use is None:
                continue
            what = by_value[structure.value].what
            hint = (
                f": test the static `{structure.value}.shape.rank` instead"
                if structure.rank
                else ""
            )
            where = side.format(use=f"`{_describe(use, code)}`")
            return (
                f"`tf.cond` traces both branches: {where} needs {what} the condition tests, "
                f"and fails to trace where the `if` skips it{hint}"
            )
    return None


def lazy_operand_problem(
    guards: ShapeGuards, test: cst.BaseExpression, code: Callable[[cst.CSTNode], str]
) -> str | None:
    """Why the right operand of an `and`/`or` in `test` would fail to trace
    once the condition is a tensor: Python skips it when the left operand
    decides, but a tensor condition traces it anyway (in a lazy `tf.cond`),
    and it reads the structure the left operand tests."""
    for node in iter_nodes(test):
        if not isinstance(node, cst.BooleanOperation):
            continue
        word = "and" if isinstance(node.operator, cst.And) else "or"
        problem = both_branches_problem(
            guards, node.left, [(f"{{use}} in the right operand of `{word}`", [node.right])], code
        )
        if problem is not None:
            return problem
    return None
