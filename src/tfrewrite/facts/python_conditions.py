"""Which functions branch only on Python values: TFR101's pass-1 question.

A file whose traced functions test only Python values (`if training:`,
`if rank == 2:`, `if isinstance(x, list):`) holds nothing TFR101 reports, so
it need not be parsed with LibCST. This module answers from the standard
`ast` tree, the way the tensor analysis (`TensorFacts.kind`, whose condition
translator TFR101 uses) would: every answer "Python" here must be one the
analysis gives too, or a file with a finding would be skipped. Where the two
could differ, the answer is "may be a tensor" and the file is kept.

What the analysis never takes for a tensor:

- literals, displays, comprehensions, f-strings, lambdas, `is` tests;
- an attribute of anything but `self` or a module-level object (`x.shape`,
  `layer.built`), and `self.attr` unless some method assigns it from a call
  (it may hold a variable: `PythonNames.self_reads`, decided once the file
  is read);
- a call outside the namespaces whose functions return tensors
  (`len(...)`, `tree.is_nested(x)`, `standardize_dtype(d)` imported from a
  project's own module), but not `v.read_value()`, nor a call of a local
  name, which may hold a loss object, nor a call through `self` (a method,
  or a function the class binds there, may return a tensor);
- a name the function binds only to such values, or a parameter whose
  default or name says it holds a Python value (`training`, `k=3`), which
  only the project can prove a tensor (`PythonNames.params`);
- `and` / `or` / `not`, comparisons and arithmetic of those.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Iterator, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

from tfrewrite.facts.parameter_names import LOSS_PARAMETER_NAMES, is_python_parameter_name
from tfrewrite.facts.tensor_kinds import (
    OPTIMIZER_ATTRIBUTES,
    OPTIONAL_CHECKS,
    TENSOR_NAMESPACES,
    VARIABLE_CONSTRUCTORS,
    VARIABLE_READS,
)

# Builtins whose result the analysis never takes for a tensor. (It takes
# no call of a name that is not imported for one, unless the name holds a
# loss object; these are taken for the builtins.)
_PYTHON_VALUED_BUILTINS = frozenset(
    {
        "isinstance",
        "issubclass",
        "hasattr",
        "callable",
        "len",
        "str",
        "repr",
        "bool",
        "int",
        "float",
        "any",
        "all",
        "min",
        "max",
        "sum",
        "abs",
        "round",
        "type",
        "tuple",
        "list",
        "set",
        "frozenset",
        "dict",
        "sorted",
        "getattr",
        "id",
    }
)
# Expressions the analysis never takes for tensors, whatever they hold.
_NEVER_TENSORS = (
    ast.Constant,
    ast.Tuple,
    ast.List,
    ast.Set,
    ast.Dict,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
    ast.JoinedStr,
    ast.Lambda,
)


@dataclass(frozen=True)
class PythonNames:
    """A function whose conditions are all Python values, on two terms:
    that the project proves none of `params` a tensor, and that none of the
    `self` attributes in `self_reads` holds a variable."""

    params: frozenset[str]
    self_reads: frozenset[str]


@dataclass
class _Reads:
    """What a Python verdict on an expression rests on."""

    self_attrs: set[str] = field(default_factory=set)
    names: set[str] = field(default_factory=set)


class PythonConditions:
    """Reads conditions of one file, resolving names through its imports."""

    def __init__(
        self,
        resolve: Callable[[ast.AST], str | None],
        imports: Mapping[str, str],
        walrus: bool = True,
        objects: AbstractSet[str] = frozenset(),
    ) -> None:
        """`walrus`: whether the file may hold `:=` (a byte check).
        `objects`: module-level names bound once to an object (`store =
        Counter()`), whose attributes may hold variables."""
        self.resolve = resolve
        self.imports = imports
        self.walrus = walrus
        self.objects = objects

    def of_function(
        self, function: ast.FunctionDef | ast.AsyncFunctionDef, tests: Iterable[ast.expr]
    ) -> PythonNames | None:
        """Whether every condition in `tests` (of `if`, `while` and `a if c
        else b` in `function`) is a Python value; None when one may be a
        tensor."""
        reads = _Reads()
        if not all(self._condition(test, reads) for test in tests):
            return None
        if not reads.names:
            return PythonNames(frozenset(), frozenset(reads.self_attrs))
        return self._names(function, reads)

    # -- expressions ------------------------------------------------------------
    def _condition(self, node: ast.expr, reads: _Reads) -> bool:
        """As the condition translator walks a condition: through `and`,
        `or` and `not`, and link by link through a comparison."""
        if isinstance(node, ast.BoolOp):
            return all(self._condition(v, reads) for v in node.values)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return self._condition(node.operand, reads)
        if isinstance(node, ast.Compare):
            return self._comparison(node, reads)
        return self._value(node, reads)

    def _comparison(self, node: ast.Compare, reads: _Reads) -> bool:
        """Each link `a op b` is a Python value: an identity test; a
        membership test, unless it is the whole condition and tests a tensor
        against a literal tuple, list or set (`t in (a, b)` compares `t ==
        a`); or a comparison of two Python values."""
        operands = [node.left, *node.comparators]
        chained = len(node.ops) > 1
        for i, op in enumerate(node.ops):
            left, right = operands[i], operands[i + 1]
            if isinstance(op, (ast.Is, ast.IsNot)):
                continue
            if isinstance(op, (ast.In, ast.NotIn)) and (
                chained
                or not isinstance(right, (ast.Tuple, ast.List, ast.Set))
                or self._value(left, reads)
            ):
                continue
            if not (self._value(left, reads) and self._value(right, reads)):
                return False
        return True

    def _value(self, node: ast.expr, reads: _Reads) -> bool:
        if isinstance(node, _NEVER_TENSORS):
            return True
        if isinstance(node, ast.Name):
            reads.names.add(node.id)
            return True
        if isinstance(node, ast.Attribute):
            if node.attr in OPTIMIZER_ATTRIBUTES:
                return False  # `optimizer.iterations`: a variable, if its owner is an optimizer
            if isinstance(node.value, ast.Name) and node.value.id == "self":
                reads.self_attrs.add(node.attr)
            elif isinstance(node.value, ast.Name) and node.value.id in self.objects:
                # `store.count`: Python unless the name is the module's object.
                reads.names.add(node.value.id)
            return True
        if isinstance(node, ast.Subscript):
            return self._value(node.value, reads)
        if isinstance(node, ast.BinOp):
            return self._value(node.left, reads) and self._value(node.right, reads)
        if isinstance(node, ast.UnaryOp):
            return (
                self._condition(node, reads)
                if isinstance(node.op, ast.Not)
                else (self._value(node.operand, reads))
            )
        if isinstance(node, (ast.Compare, ast.BoolOp)):
            return self._condition(node, reads)
        if isinstance(node, ast.Call):
            return self._python_call(node.func)
        return False

    def _python_call(self, func: ast.expr) -> bool:
        if isinstance(func, ast.Name) and func.id not in self.imports:
            return func.id in _PYTHON_VALUED_BUILTINS
        if isinstance(func, ast.Attribute) and (
            func.attr in VARIABLE_READS or func.attr in OPTIONAL_CHECKS
        ):
            return False  # a variable's read, an `Optional`'s `has_value()`
        if (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id == "self"
        ):
            # `self.loss_fn(...)`: a method, or a function the class binds
            # there, which the project facts may know returns a tensor.
            return False
        qualified = self.resolve(func)
        if qualified is None:
            # A method of a value (`str(x).lower()`): the analysis takes only
            # a variable's reads for tensors.
            return isinstance(func, ast.Attribute)
        return not (qualified.startswith(TENSOR_NAMESPACES) or qualified in VARIABLE_CONSTRUCTORS)

    # -- names ------------------------------------------------------------------
    def _names(
        self, function: ast.FunctionDef | ast.AsyncFunctionDef, reads: _Reads
    ) -> PythonNames | None:
        """The names the conditions read, each a parameter or local that
        holds a Python value (see the module docstring): every binding of it
        in the function (a nested one included) is `name = <value>` with a
        Python value, whose own names are checked in turn."""
        bound = bindings(function, self.walrus)
        params = _python_params(function.args)
        others = _all_params(function.args) - params  # may hold tensors on entry
        relied: set[str] = set()
        todo, seen = list(reads.names), set(reads.names)
        while todo:
            name = todo.pop()
            stores = bound.by_name.get(name, [])
            if name in others:
                return None
            if name in params:
                relied.add(name)
            elif not stores:
                return None  # a closure, a global or a builtin: not known here
            if not stores:
                continue
            for store in stores:
                value = bound.values.get(id(store))
                inner = _Reads(reads.self_attrs)
                if value is None or not self._condition(value, inner):
                    return None
                todo.extend(inner.names - seen)
                seen |= inner.names
        return PythonNames(frozenset(relied), frozenset(reads.self_attrs))


@dataclass
class _Bindings:
    """Every binding of a name inside a function (its parameters aside),
    nested functions included: by name, the binding nodes; and the value of
    each `name = value` / `name: T = value` binding, by the id of its
    target."""

    by_name: dict[str, list[ast.AST]] = field(default_factory=dict)
    values: dict[int, ast.expr] = field(default_factory=dict)

    def bind(self, name: str, node: ast.AST) -> None:
        self.by_name.setdefault(name, []).append(node)

    def bind_targets(self, target: ast.expr, value: ast.expr | None = None) -> None:
        """The names `target` binds; `value` is recorded for a plain name."""
        if isinstance(target, ast.Name):
            self.bind(target.id, target)
            if value is not None:
                self.values[id(target)] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self.bind_targets(element)
        elif isinstance(target, ast.Starred):
            self.bind_targets(target.value)


def own_scope(function: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[ast.AST]:
    """The nodes of `function`'s body, not entering the functions, classes
    and lambdas defined inside it."""
    stack: list[ast.AST] = list(function.body)
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, _OWN_SCOPES):
            stack.extend(ast.iter_child_nodes(node))


_OWN_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def bindings(
    function: ast.FunctionDef | ast.AsyncFunctionDef, walrus: bool, nested: bool = True
) -> _Bindings:
    """The bindings of `function`, read from its statements: assignments of
    any form, loop and `with` targets, imports, nested definitions, `except
    ... as`, `del`, match captures, and `global` / `nonlocal` declarations
    (which make a name not the function's own). Expressions bind names only
    through `:=`, looked for only when the file has one (`walrus`). With
    `nested`, what the functions and classes defined inside bind counts too."""
    found = _Bindings()
    statements: list[ast.stmt] = list(function.body)
    while statements:
        node = statements.pop()
        if isinstance(node, ast.Assign):
            single = len(node.targets) == 1
            for target in node.targets:
                found.bind_targets(target, node.value if single else None)
        elif isinstance(node, ast.AnnAssign):
            found.bind_targets(node.target, node.value)
        elif isinstance(node, ast.AugAssign):
            found.bind_targets(node.target)
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            found.bind_targets(node.target)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                if item.optional_vars is not None:
                    found.bind_targets(item.optional_vars)
        elif isinstance(node, ast.Delete):
            for target in node.targets:
                found.bind_targets(target)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                found.bind((alias.asname or alias.name).split(".")[0], node)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.bind(node.name, node)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            for name in node.names:
                found.bind(name, node)
        elif isinstance(node, ast.Match):
            for inner in ast.walk(node):
                name = getattr(inner, "name", None) or getattr(inner, "rest", None)
                if isinstance(inner, ast.pattern) and isinstance(name, str):
                    found.bind(name, inner)
        if isinstance(node, ast.Try) or node.__class__.__name__ == "TryStar":
            for handler in node.handlers:  # type: ignore[attr-defined]
                if handler.name:
                    found.bind(handler.name, handler)
                statements.extend(handler.body)
        if not nested and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for attribute in ("body", "orelse", "finalbody"):
            inner_statements = getattr(node, attribute, None)
            if inner_statements.__class__ is list:
                statements.extend(inner_statements)
        if isinstance(node, ast.Match):
            for case in node.cases:
                statements.extend(case.body)
    if walrus:
        for node in ast.walk(function) if nested else own_scope(function):
            if isinstance(node, ast.NamedExpr):
                found.bind_targets(node.target)
    return found


def _all_params(args: ast.arguments) -> set[str]:
    params = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
    return {a.arg for a in params if a is not None}


def _python_params(args: ast.arguments) -> set[str]:
    """Parameters the analysis never takes for likely tensors: no
    annotation, and a default or a name that says Python value; never a
    loss argument (`y_true`), which it takes for a tensor by name."""
    positional = [*args.posonlyargs, *args.args]
    defaulted = {a.arg for a in positional[len(positional) - len(args.defaults) :]}
    defaulted |= {
        a.arg for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None
    }
    found = set()
    for arg in [*positional, *args.kwonlyargs, args.vararg, args.kwarg]:
        if arg is None or arg.annotation is not None or arg.arg in LOSS_PARAMETER_NAMES:
            continue
        starred = arg is args.vararg or arg is args.kwarg
        if starred or arg.arg in defaulted or is_python_parameter_name(arg.arg):
            found.add(arg.arg)
    return found
