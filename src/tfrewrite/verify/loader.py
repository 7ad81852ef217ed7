"""Load one function with only the module-level code it depends on.

Training scripts often train at import time (`model.fit(...)` at the top
level), so verification never executes a whole file. Instead the module is
sliced with the standard `ast` module: starting from the function under test,
keep the top-level statements that bind a name it (transitively) references —
imports, constants, helper functions and classes — in their original order,
and drop everything else (bare calls, `if __name__ == "__main__":` blocks).

The slice is compiled from the original syntax tree, so line numbers in
tracebacks are the user's, and the full source is registered with `linecache`
so `inspect.getsource` (and therefore AutoGraph) sees the real text. Where
the slice's imports resolve, and what a failed one means, is
`project_imports`.

This module uses only the standard library: it runs inside verification
workers, which may live in another virtual environment.
"""

from __future__ import annotations

import ast
import itertools
import linecache
import os
import sys
import types
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from tfrewrite.verify import appended, project_imports, sandbox
from tfrewrite.verify.project_imports import LoadError

_counter = itertools.count()


class Unreachable(LoadError):
    """The function lives where verification cannot build it from the module
    (a class defined inside a function)."""


@dataclass
class ModuleSlice:
    """The statements of a module needed by one function."""

    tree: ast.Module
    kept: list[int]  # first line of each kept top-level statement
    constants: dict[str, object] = field(default_factory=dict)  # NAME = literal kept in the slice
    # Constants that behave like switches: tested in a condition, declared
    # `global` somewhere, or assigned in more than one place in the module.
    flags: dict[str, object] = field(default_factory=dict)
    # First lines of kept imports the function does not reach (a plotting
    # import a class's other methods use): bound to stand-ins if they fail.
    unreached: set[int] = field(default_factory=set)
    # The module's concrete subclass a method of an abstract class is called
    # on (`Impl` for `Base.loss` when `Base` has abstract methods).
    concrete: str | None = None


_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _names_in(node: ast.AST) -> set[str]:
    """The module-level names a top-level statement reads when it runs or
    when the functions it defines run. A name a function binds itself (a
    local, a parameter, a comprehension variable) is not one: keeping the
    module's statement of that name would run code the function never
    needs (`test_loss = ...` that divides by zero, beside a function whose
    own `test_loss` is a local). Class bodies are over-approximated (every
    name they read): keeping one statement too many is harmless, missing one
    is a NameError."""
    free, _ = _scope_names(node, module_level=True)
    return free


def _scope_names(scope: ast.AST, module_level: bool = False) -> tuple[set[str], set[str]]:
    """`(free names, names leaked to the enclosing scope)` of one scope:
    a function, lambda, class or comprehension, or (`module_level`) a
    top-level statement, whose every read is of a module-level name. Leaked
    names are the targets of `:=` inside a comprehension, which bind in the
    scope around it."""
    loads: set[str] = set()
    binds: set[str] = set()
    declared: set[str] = set()  # `global` / `nonlocal`: not this scope's own names
    inner: set[str] = set()  # free names of nested scopes
    leaked: set[str] = set()
    comprehension = isinstance(scope, _COMPREHENSIONS)

    def nested(node: ast.AST) -> None:
        free, leaks = _scope_names(node)
        inner.update(free)
        binds.update(leaks)

    def outer_parts_of_arguments(args: ast.arguments) -> None:
        for default in [*args.defaults, *args.kw_defaults]:
            if default is not None:
                visit(default)
        for a in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
            if a is not None and a.annotation is not None:
                visit(a.annotation)

    def visit(node: ast.AST) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for part in node.decorator_list:
                visit(part)
            outer_parts_of_arguments(node.args)
            if node.returns is not None:
                visit(node.returns)
            binds.add(node.name)
            nested(node)
        elif isinstance(node, ast.Lambda):
            outer_parts_of_arguments(node.args)
            nested(node)
        elif isinstance(node, ast.ClassDef):
            for part in [*node.decorator_list, *node.bases, *(k.value for k in node.keywords)]:
                visit(part)
            binds.add(node.name)
            nested(node)
        elif isinstance(node, _COMPREHENSIONS):
            visit(node.generators[0].iter)  # evaluated in the enclosing scope
            nested(node)
        elif isinstance(node, ast.Name):
            (loads if isinstance(node.ctx, ast.Load) else binds).add(node.id)
        elif isinstance(node, ast.NamedExpr) and comprehension:
            leaked.update(_bound_by_target(node.target))
            visit(node.value)
        else:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                binds.update(a.asname or a.name.split(".")[0] for a in node.names if a.name != "*")
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                declared.update(node.names)
            elif isinstance(node, ast.ExceptHandler) and node.name:
                binds.add(node.name)
            elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
                binds.add(node.name)
            elif isinstance(node, ast.MatchMapping) and node.rest:
                binds.add(node.rest)
            for child in ast.iter_child_nodes(node):
                visit(child)

    if module_level:
        visit(scope)
        return loads | inner | declared, set()
    if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        args = scope.args
        for a in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
            if a is not None:
                binds.add(a.arg)
        for stmt in scope.body if isinstance(scope.body, list) else [scope.body]:
            visit(stmt)
        own = binds - declared
        return ((loads | inner) - own) | declared, set()
    if isinstance(scope, ast.ClassDef):
        for stmt in scope.body:
            visit(stmt)
        # A class body reads a module-level name it also binds (`x = x + 1`):
        # every name it reads counts; its own names do not reach its methods.
        return loads | inner | declared, set()
    assert isinstance(scope, _COMPREHENSIONS)
    for i, generator in enumerate(scope.generators):
        visit(generator.target)
        if i:
            visit(generator.iter)
        for condition in generator.ifs:
            visit(condition)
    for part in (scope.key, scope.value) if isinstance(scope, ast.DictComp) else (scope.elt,):
        visit(part)
    return ((loads | inner) - binds) | declared, leaked


def _bound_by_target(target: ast.AST) -> set[str]:
    if isinstance(target, ast.Name):
        return {target.id}
    if isinstance(target, (ast.Tuple, ast.List)):
        return set().union(*(_bound_by_target(e) for e in target.elts)) if target.elts else set()
    if isinstance(target, ast.Starred):
        return _bound_by_target(target.value)
    return set()  # attribute or subscript assignment binds no new name


def is_main_guard(node: ast.stmt) -> bool:
    """`if __name__ == "__main__":`, the script's own entry point."""
    test = getattr(node, "test", None)
    return (
        isinstance(node, ast.If)
        and isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
        and any(isinstance(c, ast.Constant) and c.value == "__main__" for c in test.comparators)
    )


def bound_names(stmt: ast.stmt) -> set[str] | None:
    """Names a top-level statement binds; None for statements a slice never
    keeps (bare expressions, loops, `with`, the `__main__` guard)."""
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        names = set()
        for alias in stmt.names:
            if alias.name == "*":
                return {"*"}
            names.add(alias.asname or alias.name.split(".")[0])
        return names
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {stmt.name}
    if isinstance(stmt, ast.Assign):
        return set().union(*(_bound_by_target(t) for t in stmt.targets))
    if isinstance(stmt, (ast.AnnAssign, ast.AugAssign)):
        return _bound_by_target(stmt.target)
    if isinstance(stmt, ast.Try) or (isinstance(stmt, ast.If) and not is_main_guard(stmt)):
        names: set[str] = set()
        for sub in ast.walk(stmt):
            if (
                isinstance(sub, ast.stmt)
                and sub is not stmt
                and not isinstance(sub, (ast.Try, ast.If))
            ):
                names |= bound_names(sub) or set()
        return names
    return None


def _literal(node: ast.expr | None) -> tuple[bool, object]:
    if node is None:
        return False, None
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False, None
    if isinstance(value, (bool, int, float, str)):
        return True, value
    return False, None


def find_definition(tree: ast.Module, qualname: str) -> ast.FunctionDef | ast.AsyncFunctionDef:
    """The `def` of `name` or `Class.method` (or `outer.inner`, by nesting)."""
    body: list[ast.stmt] = tree.body
    found: ast.AST | None = None
    for part in qualname.split("."):
        found = None
        for stmt in body:
            if (
                isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                and stmt.name == part
            ):
                found = stmt  # the last definition wins, as at run time
        if found is None:
            raise LoadError(f"`{qualname}` is not defined at module level")
        body = found.body  # type: ignore[attr-defined]
    if not isinstance(found, (ast.FunctionDef, ast.AsyncFunctionDef)):
        raise LoadError(f"`{qualname}` is a class, not a function")
    return found


def slice_module(
    source: str,
    qualname: str,
    filename: str = "<source>",
    provided: frozenset[str] = frozenset(),
) -> ModuleSlice:
    """The top-level statements that `qualname` needs, in source order.
    Names in `provided` (given by a harness) are not built from the module."""
    try:
        tree = ast.parse(source, filename=filename)
    except SyntaxError as err:
        raise LoadError(f"syntax error: {err.msg} (line {err.lineno})") from err
    find_definition(tree, qualname)
    top = qualname.split(".")[0]
    concrete = concrete_subclass(tree, qualname)

    binders, keep = _needed(tree, [top] if concrete is None else [top, concrete], provided)
    body = [tree.body[i] for i in sorted(keep)]
    reached = _reached_names(tree, qualname, binders, provided, concrete)
    unreached = {
        stmt.lineno
        for stmt in body
        if isinstance(stmt, (ast.Import, ast.ImportFrom))
        and reached is not None
        and not (bound_names(stmt) or {"*"}) & (reached | {"*"})  # a star import may be reached
        and not (isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__")
    }
    constants: dict[str, object] = {}
    for stmt in body:
        if (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
        ):
            ok, value = _literal(stmt.value)
            if ok:
                constants[stmt.targets[0].id] = value
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            ok, value = _literal(stmt.value)
            if ok:
                constants[stmt.target.id] = value
    # A name rebound by something other than a literal is not a simple constant.
    for stmt in body:
        if isinstance(
            stmt, (ast.AugAssign, ast.FunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)
        ):
            for name in bound_names(stmt) or ():
                constants.pop(name, None)
    for name in list(constants):
        if len(binders.get(name, ())) > 1:
            constants.pop(name)
    module = ast.Module(body=body, type_ignores=[])
    flags = {name: value for name, value in constants.items() if name in _switch_names(tree, body)}
    return ModuleSlice(module, [s.lineno for s in body], constants, flags, unreached, concrete)


def _needed(
    tree: ast.Module, roots: list[str], provided: frozenset[str]
) -> tuple[dict[str, list[int]], set[int]]:
    """`(name -> indices of the top-level statements binding it, indices of
    the statements `roots` need)`: star and `__future__` imports, and every
    statement binding a name they (transitively) read."""
    binders: dict[str, list[int]] = {}
    star_imports: list[int] = []
    for i, stmt in enumerate(tree.body):
        names = bound_names(stmt)
        if names is None:
            continue
        if "*" in names:
            star_imports.append(i)
        for name in names:
            binders.setdefault(name, []).append(i)

    keep: set[int] = set(star_imports)
    keep.update(
        i
        for i, s in enumerate(tree.body)
        if isinstance(s, ast.ImportFrom) and s.module == "__future__"
    )
    wanted = list(roots)
    seen: set[str] = set(provided)
    for i in list(keep):
        wanted.extend(_names_in(tree.body[i]))
    while wanted:
        name = wanted.pop()
        if name in seen:
            continue
        seen.add(name)
        for i in binders.get(name, ()):
            if i not in keep:
                keep.add(i)
                wanted.extend(_names_in(tree.body[i]) - seen)
    return binders, keep


def _classes(tree: ast.Module) -> dict[str, ast.ClassDef]:
    """The module's top-level classes by name (the last definition wins)."""
    return {s.name: s for s in tree.body if isinstance(s, ast.ClassDef)}


def _base_names(cls: ast.ClassDef) -> list[str]:
    """The names of a class's bases (`Base`, `abc.ABC` -> `ABC`)."""
    out = []
    for base in cls.bases:
        if isinstance(base, ast.Name):
            out.append(base.id)
        elif isinstance(base, ast.Attribute):
            out.append(base.attr)
    return out


def _is_abstract_method(node: ast.stmt) -> bool:
    """`@abstractmethod`, or a body that only raises NotImplementedError
    (an abstract method by convention, which Python does not enforce but
    which fails when the method under test calls it)."""
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    for decorator in node.decorator_list:
        name = decorator.attr if isinstance(decorator, ast.Attribute) else None
        name = decorator.id if isinstance(decorator, ast.Name) else name
        if name in ("abstractmethod", "abstractproperty"):
            return True
    body = [
        s
        for s in node.body
        if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
        and not isinstance(s, ast.Pass)
    ]
    if len(body) != 1 or not isinstance(body[0], ast.Raise) or body[0].exc is None:
        return False
    exc = body[0].exc
    exc = exc.func if isinstance(exc, ast.Call) else exc
    return isinstance(exc, ast.Name) and exc.id == "NotImplementedError"


def _method_table(classes: dict[str, ast.ClassDef], name: str) -> dict[str, bool]:
    """`method -> abstract?` of a module class, own methods over inherited
    ones (bases defined in the module only, first base first)."""
    table: dict[str, bool] = {}
    seen: set[str] = set()

    def visit(current: str) -> None:
        if current in seen or current not in classes:
            return
        seen.add(current)
        cls = classes[current]
        for stmt in cls.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                table.setdefault(stmt.name, _is_abstract_method(stmt))
        for base in _base_names(cls):
            visit(base)

    visit(name)
    return table


def concrete_subclass(tree: ast.Module, qualname: str) -> str | None:
    """For `Base.method` of a class with abstract methods, the first
    subclass in the module (direct or not) that inherits `method` from it
    unchanged and implements every abstract method: the class whose
    instances run `Base.method`. None when the class is concrete or no
    subclass fits (the class is then built as it is)."""
    parts = qualname.split(".")
    if len(parts) != 2:
        return None
    top, method = parts
    classes = _classes(tree)
    if top not in classes or not any(_method_table(classes, top).values()):
        return None

    def descends(name: str, seen: frozenset[str] = frozenset()) -> bool:
        if name in seen or name not in classes:
            return False
        return any(
            base == top or descends(base, seen | {name}) for base in _base_names(classes[name])
        )

    for stmt in tree.body:
        if not isinstance(stmt, ast.ClassDef) or stmt.name == top or not descends(stmt.name):
            continue
        if classes.get(stmt.name) is not stmt:
            continue  # a later definition of the same name is the one that exists
        table = _method_table(classes, stmt.name)
        if any(table.values()):
            continue
        # `method` must still be the base's: no class between overrides it.
        owner = stmt.name
        while owner != top:
            if any(
                isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == method
                for s in classes[owner].body
            ):
                break
            owner = next(b for b in _base_names(classes[owner]) if b == top or descends(b))
        if owner == top:
            return stmt.name
    return None


# Methods that run without the method under test naming them: building an
# instance, and the hooks Keras and Python call on it.
_IMPLICIT_METHODS = frozenset(
    {"__init__", "__new__", "__post_init__", "__init_subclass__", "__call__", "build", "call"}
)


def _reached_names(
    tree: ast.Module,
    qualname: str,
    binders: dict[str, list[int]],
    provided: frozenset[str],
    concrete: str | None = None,
) -> set[str] | None:
    """The module-level names a method reaches: its own free names, its
    class's header and body statements, the methods building an instance
    runs, the methods it calls on `self` or `cls` (transitively), and what
    those names need in turn. None when every kept name counts (a
    module-level function needs all its slice; a class's other methods are
    what a slice keeps without reaching)."""
    parts = qualname.split(".")
    if len(parts) != 2:
        return None
    top, method = parts
    cls = next(
        (s for s in reversed(tree.body) if isinstance(s, ast.ClassDef) and s.name == top), None
    )
    if cls is None:
        return None
    methods = {
        s.name: s for s in cls.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))
    }
    wanted: set[str] = {concrete} if concrete else set()
    for part in [*cls.decorator_list, *cls.bases, *(k.value for k in cls.keywords)]:
        wanted |= _names_in(part)
    for stmt in cls.body:
        if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            wanted |= _names_in(stmt)
    todo = [method, *(m for m in methods if m in _IMPLICIT_METHODS)]
    done: set[str] = set()
    while todo:
        name = todo.pop()
        if name in done or name not in methods:
            continue
        done.add(name)
        node = methods[name]
        wanted |= _names_in(node)
        todo.extend(
            sub.attr
            for sub in ast.walk(node)
            if isinstance(sub, ast.Attribute)
            and isinstance(sub.value, ast.Name)
            and sub.value.id in ("self", "cls", top)
        )
    # Properties and other methods read by plain attribute cannot be told
    # from data attributes: a method the walk above missed keeps working,
    # its missing import becomes a stand-in that says where it was touched.
    reached: set[str] = {top}
    stack = list(wanted)
    while stack:
        name = stack.pop()
        if name in reached or name in provided:
            continue
        reached.add(name)
        for i in binders.get(name, ()):
            stack.extend(_names_in(tree.body[i]) - reached)
    return reached


def _switch_names(tree: ast.Module, kept: list[ast.stmt]) -> set[str]:
    """Names that a module treats as switches rather than fixed constants."""
    names: set[str] = set()
    assigned: dict[str, int] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Global):
            names.update(node.names)
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for name in _bound_by_target(target):
                    assigned[name] = assigned.get(name, 0) + 1
    names.update(name for name, count in assigned.items() if count > 1)
    for stmt in kept:
        for node in ast.walk(stmt):
            tests: list[ast.expr] = []
            if isinstance(node, (ast.If, ast.IfExp, ast.While)):
                tests.append(node.test)
            elif isinstance(node, ast.BoolOp):
                tests.extend(node.values)
            for test in tests:
                names.update(n.id for n in ast.walk(test) if isinstance(n, ast.Name))
    return names


def function_sources(source: str) -> dict[str, str]:
    """`qualname -> source text` (decorators included) of every function and
    method, for finding which functions a rewrite changed."""
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    out: dict[str, str] = {}

    def visit(body: Iterable[ast.stmt], prefix: str) -> None:
        for stmt in body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                start = min([stmt.lineno, *(d.lineno for d in stmt.decorator_list)])
                out[prefix + stmt.name] = "".join(lines[start - 1 : stmt.end_lineno])
            elif isinstance(stmt, ast.ClassDef):
                visit(stmt.body, f"{prefix}{stmt.name}.")

    visit(tree.body, "")
    return out


def references(source: str) -> dict[str, set[str]]:
    """`qualname -> top-level names it needs` (transitively), for finding the
    callers of a changed helper."""
    out: dict[str, set[str]] = {}
    for qualname in function_sources(source):
        try:
            piece = slice_module(source, qualname)
        except LoadError:
            continue
        names: set[str] = set()
        for stmt in piece.tree.body:
            names |= bound_names(stmt) or set()
        out[qualname] = names
    return out


@dataclass
class LoadedFunction:
    """A function loaded from a module slice."""

    module: types.ModuleType
    function: object  # the callable as the module exposes it (maybe a tf.function)
    python_function: object  # the plain Python function (or bound method)
    slice: ModuleSlice


def _register_source(filename: str, source: str) -> None:
    lines = source.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    # mtime None: linecache.checkcache keeps entries that have no file on disk.
    linecache.cache[filename] = (len(source), None, lines, filename)


# How to build an object of a class its `__init__` defaults cannot build, from
# the script's own code that constructs one: `(cls, source, path, package) ->
# (instance, how it was built) or None`. Set by `caller_capture` (it needs the caller
# machinery, which imports this module).
construct_from_script: Callable[[type, str, str, str | None], tuple[object, str] | None] | None = (
    None
)


def _resolve(
    module: types.ModuleType,
    qualname: str,
    factory: object = None,
    origin: tuple[str, str, str | None] | None = None,
    concrete: str | None = None,
) -> object:
    parts = qualname.split(".")
    # A configured factory says how to build the class: no subclass is sought.
    own_choice = not callable(factory)
    if concrete is not None and own_choice:
        # `Base.method` of an abstract class runs on its concrete subclass.
        built_with.pop(qualname, None)
        method = _instantiate(getattr(module, concrete), qualname, parts[-1], factory, origin)
        how = built_with.get(qualname)
        built_with[qualname] = (
            f"`{parts[0]}` is abstract: `{qualname}` was run on an instance of `{concrete}`, "
            "its concrete subclass in the module" + (f"; {how}" if how else "")
        )
        return method
    obj: object = module
    for i, part in enumerate(parts):
        if isinstance(obj, type) and i == len(parts) - 1:
            found = _project_subclass(obj, part, origin) if origin and own_choice else None
            if found is not None:
                subclass, where = found
                built_with.pop(qualname, None)
                method = _instantiate(subclass, qualname, part, factory, origin)
                how = built_with.get(qualname)
                built_with[qualname] = (
                    f"`{parts[0]}` is abstract: `{qualname}` was run on an instance of "
                    f"`{subclass.__name__}`, its concrete subclass in {where}"
                    + (f"; {how}" if how else "")
                )
                return method
            return _instantiate(obj, qualname, part, factory, origin)
        if i > 0 and not isinstance(obj, (type, types.ModuleType)):
            raise Unreachable(
                f"`{qualname}` is defined inside the function `{'.'.join(parts[:i])}`: verify "
                "builds functions and classes of the module, not ones a function creates when "
                "it runs; verify the function that creates it, with its inputs in "
                f'[tool.tfrewrite.verify] inputs."module:{".".join(parts[:i])}" or a harness'
            )
        obj = getattr(obj, part)
    return obj


def _project_subclass(
    cls: type, method: str, origin: tuple[str, str, str | None]
) -> tuple[type, str] | None:
    """For an abstract `cls` whose module has no concrete subclass, one in
    another file of its folder (`class Impl(Base)` in `impl.py`) that
    inherits `method` from it: `(the subclass, its file)`. The subclass's
    statement and what it needs are run from that file's text with `cls`
    (this side's class, original or rewrite) as its base, so the method run
    is the one being verified. None when there is none."""
    import inspect

    _, path, package = origin
    if not inspect.isabstract(cls) or path.startswith("<"):
        return None
    folder = os.path.dirname(os.path.abspath(path))
    try:
        files = sorted(f for f in os.listdir(folder) if f.endswith(".py"))
    except OSError:
        return None
    for file in files:
        other = os.path.join(folder, file)
        if os.path.abspath(other) == os.path.abspath(path):
            continue
        try:
            with open(other, encoding="utf-8") as handle:
                text = handle.read()
            tree = ast.parse(text, filename=other) if cls.__name__ in text else None
        except (OSError, SyntaxError, ValueError):
            continue
        for stmt in tree.body if tree is not None else ():
            # Bases by plain name only (`from base import Base`): `base.Base`
            # would import the whole module as the project runs it.
            if not isinstance(stmt, ast.ClassDef) or not any(
                isinstance(b, ast.Name) and b.id == cls.__name__ for b in stmt.bases
            ):
                continue
            subclass = _run_subclass(text, tree, stmt.name, cls, other, package)
            if (
                isinstance(subclass, type)
                and issubclass(subclass, cls)
                and not inspect.isabstract(subclass)
                and next(k for k in subclass.__mro__ if method in k.__dict__) is cls
            ):
                return subclass, file
    return None


def _run_subclass(
    text: str, tree: ast.Module, name: str, base: type, path: str, package: str | None
) -> object:
    """Class `name` of another file, built on `base`: the statements it
    needs, except those binding `base`'s name (its import of the base).
    None when they fail."""
    _, keep = _needed(tree, [name], frozenset({base.__name__}))
    n = next(_counter)
    filename = f"{path} (subclass #{n})"
    _register_source(filename, text)
    module = types.ModuleType(f"tfrewrite_verify_subclass_{n}")
    module.__file__ = path
    if package:
        module.__package__ = package
    module.__dict__[base.__name__] = base
    sys.modules[module.__name__] = module
    body = [tree.body[i] for i in sorted(keep)]
    try:
        exec(compile(ast.Module(body=body, type_ignores=[]), filename, "exec"), module.__dict__)
    except Exception:
        return None
    return module.__dict__.get(name)


def module_file(source: str, path: str) -> str | None:
    """A file whose text is `source`, for a module's `__file__`: `path`
    itself when it holds that text (the original), else a file beside the
    mirror of `path` in the sandbox's working directory (the rewrite; that
    directory shows the script's folder, see `sandbox`); None outside a
    sandbox, where no file can be written."""
    if path.startswith("<"):
        return None
    try:
        with open(path, encoding="utf-8") as handle:
            if handle.read() == source:
                return os.path.abspath(path)
    except (OSError, ValueError):
        pass
    return sandbox.write_beside(os.path.basename(path), source)


class NeedsFactory(LoadError):
    """A method's class cannot be built from its `__init__` defaults: the
    user must say how (a factory), so the method is not proven, not broken."""


# qualname -> how its class was built when `__init__` needed arguments (said in the result).
built_with: dict[str, str] = {}


def _constructor_guess(cls: type) -> dict[str, object] | None:
    """Arguments for a constructor whose required parameters are sizes,
    shapes or rates by their names (`Critic(state_dim)`, `Agent(n_actions,
    lr)`); None when one of them is anything else (a model, an environment)."""
    import inspect

    try:
        params = inspect.signature(cls.__init__).parameters.values()  # type: ignore[misc]
    except (TypeError, ValueError):
        return None
    guessed: dict[str, object] = {}
    for p in list(params)[1:]:
        if p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        name = p.name.lower()
        if name.endswith("_shape") or name == "shape":
            guessed[p.name] = (4,)
        elif name in ("lr", "learning_rate") or name.endswith(("_lr", "_rate")):
            guessed[p.name] = 0.001
        elif name in ("gamma", "tau", "discount", "alpha", "beta", "epsilon", "eps"):
            guessed[p.name] = 0.9
        elif (
            name in ("size", "depth", "units", "n", "k")
            or name.endswith(("_dim", "_size", "_units", "_len", "_num", "_count", "_actions"))
            or name.startswith(("num_", "n_"))
        ):
            guessed[p.name] = 4
        else:
            return None
    return guessed or None


def _instantiate(
    cls: type,
    qualname: str,
    method: str,
    factory: object = None,
    origin: tuple[str, str, str | None] | None = None,
) -> object:
    """A method of a class is called on an instance built from the class's
    `__init__` defaults (`Loss.call` needs `self`), by a configured factory
    `(cls) -> instance`, or by the script's own code that constructs one
    (`agent = PERAgent(model, target, env)` in `main()`)."""
    try:
        if callable(factory):
            instance = factory(cls)
        else:
            try:
                instance = cls()
            except TypeError as first:
                guessed = _constructor_guess(cls)
                built = None
                if guessed is None and origin is not None and construct_from_script is not None:
                    built = construct_from_script(cls, *origin)
                if built is not None:
                    instance, how = built
                    built_with[qualname] = how
                elif guessed is None:
                    raise first
                else:
                    instance = cls(**guessed)
                    built_with[qualname] = (
                        f"`{cls.__name__}` was built as `{cls.__name__}("
                        + ", ".join(f"{k}={v!r}" for k, v in guessed.items())
                        + ")` from its parameter names; configure a factory to build it otherwise"
                    )
        # A bound `tf.function` method holds its object weakly: keep it alive.
        project_imports.kept.append(instance)
    except Exception as err:
        found = project_imports.missing_package(err)
        if found is not None:
            raise found from err
        raise NeedsFactory(
            f"cannot construct `{cls.__name__}()` to call `{qualname}`: {err!r}; configure a "
            f'factory: [tool.tfrewrite.verify] harness."module:{cls.__name__}" = '
            '"verify_harness:make" with `def make(cls): return cls(...)`'
        ) from err
    return getattr(instance, method)


def load_function(
    source: str,
    qualname: str,
    role: str,
    path: str = "<source>",
    package: str | None = None,
    tree: ast.Module | None = None,
    extra_globals: dict[str, object] | None = None,
    factory: object = None,
    provided: dict[str, object] | None = None,
) -> LoadedFunction:
    """Execute the slice of `source` needed by `qualname` as a fresh module
    named after `role` (each call gets its own module object, so an original
    and its rewrite live side by side).

    `tree` replaces the slice's syntax tree (used for instrumented copies);
    `extra_globals` are placed in the module before it runs."""
    piece = slice_module(source, qualname, path, frozenset(provided or ()))
    if tree is not None:
        piece = ModuleSlice(
            tree, piece.kept, piece.constants, piece.flags, piece.unreached, piece.concrete
        )
    n = next(_counter)
    name = f"tfrewrite_verify_{role}_{n}"
    filename = f"{path} ({role} #{n})"  # not a real file: the source lives in linecache
    _register_source(filename, source)
    module = types.ModuleType(name)
    # The code is compiled under `filename` (its source in linecache), while
    # `__file__` names a real file holding the same text: data paths read
    # from `os.path.dirname(__file__)` resolve, and tools that re-read a
    # module's source (typeguard's `@typechecked`) read this version of it.
    file = module_file(source, path)
    if file is not None:
        module.__file__ = file
    if package:
        module.__package__ = package
    if extra_globals:
        module.__dict__.update(extra_globals)
    if provided:
        module.__dict__.update(provided)
    sys.modules[name] = module  # Keras serialization and pickling look modules up by name
    appended.relocate(piece.tree, source)  # a replay or caller keeps the script's lines
    compiled = piece.tree
    if piece.unreached:
        module.__dict__[_STAND_IN] = project_imports.stand_in
        compiled = _guard_unreached_imports(piece.tree, piece.unreached, path)
    code = compile(compiled, filename, "exec")
    try:
        exec(code, module.__dict__)
    except ImportError as err:
        found = project_imports.missing_package(err)
        if found is not None:
            raise found from err
        problem = project_imports.project_import_problem(err, path)
        if problem is not None:
            raise LoadError(problem) from err
        raise
    function = _resolve(module, qualname, factory, (source, path, package), piece.concrete)
    python_function = getattr(function, "python_function", function)
    # A bound method of a tf.function-decorated method exposes its own python_function.
    return LoadedFunction(module, function, python_function, piece)


_STAND_IN = "__tfrewrite_stand_in__"


def _guard_unreached_imports(tree: ast.Module, lines: set[int], path: str) -> ast.Module:
    """A copy of `tree` whose top-level imports on `lines` bind stand-ins
    (see `project_imports.StandIn`) when they fail:

        try:
            import cv2
        except ImportError as error:
            __tfrewrite_stand_in__(error, globals(), {"cv2": "cv2"}, "m.py, line 3")
    """
    body: list[ast.stmt] = []
    for stmt in tree.body:
        if not isinstance(stmt, (ast.Import, ast.ImportFrom)) or stmt.lineno not in lines:
            body.append(stmt)
            continue
        bindings: dict[str, str] = {}
        for alias in stmt.names:
            if isinstance(stmt, ast.Import):
                bound = alias.asname or alias.name.split(".")[0]
                bindings[bound] = alias.name if alias.asname else bound
            else:
                module = "." * stmt.level + (stmt.module or "")
                bindings[alias.asname or alias.name] = f"{module}.{alias.name}"
        importer = f"{os.path.basename(path)}, line {stmt.lineno}"
        handler = ast.parse(
            "try:\n    pass\nexcept ImportError as __tfrewrite_error:\n"
            f"    {_STAND_IN}(__tfrewrite_error, globals(), {bindings!r}, {importer!r})\n"
        ).body[0]
        assert isinstance(handler, ast.Try)
        handler.body = [stmt]
        for node in ast.walk(handler):
            if node is not stmt and not _inside_node(node, stmt):
                ast.copy_location(node, stmt)
                if hasattr(node, "end_lineno"):
                    node.end_lineno = stmt.end_lineno  # type: ignore[attr-defined]
        body.append(handler)
    return ast.Module(body=body, type_ignores=tree.type_ignores)


def _inside_node(node: ast.AST, stmt: ast.stmt) -> bool:
    return any(node is sub for sub in ast.walk(stmt))


def own_scope_nodes(node: ast.AST) -> Iterator[ast.AST]:
    """`node` and the nodes under it, not entering nested functions,
    lambdas or classes: the code that runs when `node` runs."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        for child in ast.iter_child_nodes(current):
            if not isinstance(
                child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
            ):
                stack.append(child)


def no_arguments() -> ast.arguments:
    """The parameter list of a generated function that takes none."""
    return ast.arguments(
        posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]
    )
