"""The conditions a function's branches test, read from its source.

Random inputs seldom land between two nearby thresholds: a `tf.cond` whose
threshold moved from 1.0 to 1.2 agrees with the original on every draw that
falls below 1.0 or above 1.2, and a `tf.where(tf.math.is_nan(x), ...)` agrees
on every input without a NaN. So the input search needs to know, from the
code, what the branches test: the constants each compared value is compared
with, and where a branch tests for NaN, infinity or an empty batch.

Both versions of the function are read (the original and the rewrite): a
rewrite that moved a threshold must be probed at both values, and between
them.

What is collected, anywhere in the function's body:

* **thresholds** — a comparison of a value with a number (`loss > 1.0`,
  `tf.greater(x, 0.5)`, `tf.where(x < 0.5, ...)`, `tf.reduce_mean(x) >= 2`,
  `tf.norm(g) < 1e-3`; the number written out, negated, or a module-level or
  local name bound to one). The compared value is kept as source text with
  local names replaced by what they were last assigned before the
  comparison, so that it reads only parameters and module-level names
  (`error > 0.3` after `error = tf.reduce_mean(tf.abs(y_true - y_pred))`).
  A compared value that reads no parameter, or a name bound otherwise (a
  loop variable, an argument of a lambda, `self`), is left out.
* **NaN and infinity tests** — `is_nan`, `isnan`, `is_inf`, `isinf`,
  `is_finite`, `isfinite` (TensorFlow, NumPy or `math`) of a value: the
  parameters it reads.
* **emptiness tests** — a size, shape or length (`tf.size(x) == 0`,
  `tf.shape(x)[0] > 0`, `len(x) < 1`, `x.shape[0] == 0`) compared with 0 or
  1: the parameters it reads.

Standard library only: no TensorFlow, no NumPy. How the input search lands
a compared value on each constant is `boundaries`'s part.
"""

from __future__ import annotations

import ast
import copy
import math
from dataclasses import dataclass

from tfrewrite.verify.module_slice import find_definition
from tfrewrite.verify.project_imports import LoadError

MAX_THRESHOLDS = 8  # compared values probed per function
DEPTH = 8  # local names followed back through their assignments

_COMPARISON_CALLS = frozenset(
    {"greater", "greater_equal", "less", "less_equal", "equal", "not_equal"}
)
_NAN_TESTS = frozenset({"is_nan", "isnan"})
_INF_TESTS = frozenset({"is_inf", "isinf", "isposinf", "isneginf"})
_FINITE_TESTS = frozenset({"is_finite", "isfinite"})
_SIZE_CALLS = frozenset({"size", "shape", "len", "shape_n"})


@dataclass(frozen=True)
class Threshold:
    """A value the function compares with constants."""

    compared: str  # source over parameters and module-level names
    parameters: tuple[str, ...]  # the parameters `compared` reads
    constants: tuple[float, ...]  # sorted
    side: str  # "original" or "rewrite": the module whose names `compared` reads


@dataclass(frozen=True)
class Conditions:
    """What the branches of one function test (both versions together)."""

    thresholds: tuple[Threshold, ...] = ()
    nan: tuple[str, ...] = ()  # parameters whose NaN values a branch tests
    inf: tuple[str, ...] = ()  # parameters whose infinite values a branch tests
    empty: tuple[str, ...] = ()  # parameters whose emptiness a branch tests

    def __bool__(self) -> bool:
        return bool(self.thresholds or self.nan or self.inf or self.empty)


def collect(
    original_source: str, rewrite_source: str | None, qualname: str, method: bool = False
) -> Conditions:
    """The conditions of `qualname` in the original and in the rewrite."""
    found: dict[str, tuple[str, set[str], set[float]]] = {}
    nan: set[str] = set()
    inf: set[str] = set()
    empty: set[str] = set()
    for side, source in (("original", original_source), ("rewrite", rewrite_source)):
        if source is None:
            continue
        try:
            tree = ast.parse(source)
            node = find_definition(tree, qualname)
        except (SyntaxError, LoadError):
            continue
        reader = _Reader(node, method, _module_numbers(tree))
        for compared, params, constant in reader.thresholds():
            _, _, constants = found.setdefault(compared, (side, params, set()))
            constants.add(constant)
        nan |= reader.nan
        inf |= reader.inf
        empty |= reader.empty
    thresholds = tuple(
        Threshold(compared, tuple(sorted(params)), tuple(sorted(constants)), side)
        for compared, (side, params, constants) in list(found.items())[:MAX_THRESHOLDS]
    )
    return Conditions(thresholds, tuple(sorted(nan)), tuple(sorted(inf)), tuple(sorted(empty)))


def _module_numbers(tree: ast.Module) -> dict[str, float]:
    """Module-level names bound once to a number (`THRESHOLD = 1.0`)."""
    numbers: dict[str, float] = {}
    bound: dict[str, int] = {}
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for sub in ast.walk(stmt):  # every binding: `X = 1.0` then `X += 1` is no constant
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                bound[sub.id] = bound.get(sub.id, 0) + 1
        if isinstance(stmt, ast.Assign):
            value = _number(stmt.value, {})
            for target in stmt.targets:
                if isinstance(target, ast.Name) and value is not None:
                    numbers[target.id] = value
    return {name: value for name, value in numbers.items() if bound[name] == 1}


def _number(node: ast.expr, names: dict[str, float]) -> float | None:
    """The number `node` writes (`0.5`, `-1`, `1e-3`, a name bound to one)."""
    if isinstance(node, ast.Constant):
        value = node.value
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value) if math.isfinite(value) else None
        return None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = _number(node.operand, names)
        if inner is None:
            return None
        return -inner if isinstance(node.op, ast.USub) else inner
    if isinstance(node, ast.Name):
        return names.get(node.id)
    return None


def _callee(node: ast.Call) -> str:
    func = node.func
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def _reads_size(node: ast.expr) -> bool:
    return any(
        (isinstance(sub, ast.Call) and _callee(sub) in _SIZE_CALLS)
        or (isinstance(sub, ast.Attribute) and sub.attr in ("shape", "size"))
        for sub in ast.walk(node)
    )


class _Reader:
    """The conditions of one function definition."""

    def __init__(
        self, node: ast.FunctionDef | ast.AsyncFunctionDef, method: bool, globals_: dict[str, float]
    ) -> None:
        self.node = node
        args = node.args
        params = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
        if method and params:
            params = params[1:]  # `self` is not an input the search varies
        self.params = set(params)
        # name -> [(line, value)] of its single-target assignments, in order
        self.assigned: dict[str, list[tuple[int, ast.expr]]] = {}
        self.bound: set[str] = set()  # every name bound in the function
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                self.bound.add(sub.id)
            elif isinstance(sub, ast.arg) and sub is not node:
                self.bound.add(sub.arg)
            if isinstance(sub, ast.Assign) and len(sub.targets) == 1:
                target = sub.targets[0]
                if isinstance(target, ast.Name):
                    self.assigned.setdefault(target.id, []).append((sub.lineno, sub.value))
            elif isinstance(sub, ast.AnnAssign) and sub.value is not None:
                if isinstance(sub.target, ast.Name):
                    self.assigned.setdefault(sub.target.id, []).append((sub.lineno, sub.value))
        for values in self.assigned.values():
            values.sort(key=lambda item: item[0])
        self.globals = {k: v for k, v in globals_.items() if k not in self.bound}
        self.nan: set[str] = set()
        self.inf: set[str] = set()
        self.empty: set[str] = set()

    def _value_before(self, name: str, line: int) -> ast.expr | None:
        """What `name` was last assigned before `line` (None: not by a plain assignment)."""
        earlier = [value for at, value in self.assigned.get(name, []) if at < line]
        return earlier[-1] if earlier else None

    def resolve(self, expr: ast.expr, line: int, depth: int = 0) -> ast.expr | None:
        """`expr` with local names replaced by their values, reading only
        parameters and module-level names; None when that cannot be done."""
        if depth > DEPTH:
            return None
        failed = False
        reader = self

        class Substitute(ast.NodeTransformer):
            def visit_Lambda(self, node: ast.Lambda) -> ast.AST:
                nonlocal failed
                failed = True  # its arguments are no values of the function
                return node

            def visit_Name(self, node: ast.Name) -> ast.AST:
                nonlocal failed
                if node.id in reader.params and node.id not in reader.assigned:
                    return node
                if node.id not in reader.bound:
                    return node  # a module-level name
                value = reader._value_before(node.id, line)
                if value is None:
                    if node.id in reader.params:
                        return node  # a parameter before it is reassigned
                    failed = True
                    return node
                resolved = reader.resolve(value, _line(value), depth + 1)
                if resolved is None:
                    failed = True
                    return node
                return resolved

        out = Substitute().visit(copy.deepcopy(expr))
        return None if failed else out

    def _parameters(self, expr: ast.expr) -> set[str]:
        return {
            n.id
            for n in ast.walk(expr)
            if isinstance(n, ast.Name) and n.id in self.params and isinstance(n.ctx, ast.Load)
        }

    def thresholds(self) -> list[tuple[str, set[str], float]]:
        """(compared value's source, parameters it reads, constant) of each
        comparison with a number; NaN, infinity and emptiness tests are
        noted on the way."""
        found: list[tuple[str, set[str], float]] = []
        numbers = dict(self.globals)
        for sub in ast.walk(self.node):
            pairs: list[tuple[ast.expr, ast.expr]] = []
            if isinstance(sub, ast.Compare):
                sides = [sub.left, *sub.comparators]
                pairs = list(zip(sides, sides[1:], strict=False))
            elif isinstance(sub, ast.Call):
                name = _callee(sub)
                operands = [*sub.args, *(k.value for k in sub.keywords if k.arg in ("x", "y"))]
                if name in _COMPARISON_CALLS and len(operands) == 2:
                    pairs = [(operands[0], operands[1])]
                elif operands and name in _NAN_TESTS | _INF_TESTS | _FINITE_TESTS:
                    self._note_special(name, operands[0], _line(sub))
            for left, right in pairs:
                line = _line(sub)
                for value, other in ((left, right), (right, left)):
                    constant = self._constant(other, line, numbers)
                    if constant is None or self._constant(value, line, numbers) is not None:
                        continue
                    resolved = self.resolve(value, line)
                    if resolved is None:
                        continue
                    params = self._parameters(resolved)
                    if not params:
                        continue
                    if _reads_size(resolved):
                        if constant in (0.0, 1.0):
                            self.empty |= params
                        continue
                    found.append((ast.unparse(resolved), params, constant))
        return found

    def _constant(self, node: ast.expr, line: int, numbers: dict[str, float]) -> float | None:
        """A number, also through a local name bound to one (`t = 1.0`)."""
        value = _number(node, numbers)
        if value is None and isinstance(node, ast.Name) and node.id in self.bound:
            assigned = self._value_before(node.id, line)
            if assigned is not None and len(self.assigned.get(node.id, [])) == 1:
                value = _number(assigned, numbers)
        return value

    def _note_special(self, name: str, operand: ast.expr, line: int) -> None:
        resolved = self.resolve(operand, line)
        if resolved is None:
            return
        params = self._parameters(resolved)
        if name in _NAN_TESTS | _FINITE_TESTS:
            self.nan |= params
        if name in _INF_TESTS | _FINITE_TESTS:
            self.inf |= params


def _line(node: ast.AST) -> int:
    return getattr(node, "lineno", 0)
