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


def _names_in(node: ast.AST) -> set[str]:
    """Every plain name a statement mentions (an over-approximation is fine:
    keeping one statement too many is harmless, missing one is a NameError)."""
    names: set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            names.add(sub.id)
        elif isinstance(sub, ast.Global):
            names.update(sub.names)
    return names


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
    wanted = [top]
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

    body = [tree.body[i] for i in sorted(keep)]
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
    return ModuleSlice(module, [s.lineno for s in body], constants, flags)


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
) -> object:
    obj: object = module
    parts = qualname.split(".")
    for i, part in enumerate(parts):
        if isinstance(obj, type) and i == len(parts) - 1:
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
        piece = ModuleSlice(tree, piece.kept, piece.constants)
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
    code = compile(piece.tree, filename, "exec")
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
    function = _resolve(module, qualname, factory, (source, path, package))
    python_function = getattr(function, "python_function", function)
    # A bound method of a tf.function-decorated method exposes its own python_function.
    return LoadedFunction(module, function, python_function, piece)


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
