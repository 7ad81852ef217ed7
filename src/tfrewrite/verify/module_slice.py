"""Which top-level statements of a module a function needs: the imports,
constants, helper functions and classes it reaches (through its body, the
names it reads, its class's construction and hooks), in their original
order, and never a statement bound to a name the function only shadows.
Verify runs only this slice, so a script that trains at import time, or a
later `test_loss = ...` that divides by zero, is never run.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from tfrewrite.verify.abstract_classes import concrete_subclass
from tfrewrite.verify.project_imports import LoadError


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

    binders, keep = needed_statements(
        tree, [top] if concrete is None else [top, concrete], provided
    )
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


def needed_statements(
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


# Methods that run without the method under test naming them: building an
# instance, and the hooks Keras and Python call on it.
_IMPLICIT_METHODS = frozenset(
    {"__init__", "__new__", "__post_init__", "__init_subclass__", "__call__", "build", "call"}
)


def _without_annotations(node: ast.AST) -> ast.AST:
    """A copy of `node` without its annotations (`data: pd.DataFrame`,
    `-> pd.Series`): a class body evaluates them when it runs, but only
    stores them, so a missing package named there only as a type is no
    package the method reaches (its stand-in answers attribute look-ups)."""
    import copy

    node = copy.deepcopy(node)
    for sub in ast.walk(node):
        if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)):
            sub.returns = None
        elif isinstance(sub, ast.arg):
            sub.annotation = None
        elif isinstance(sub, ast.AnnAssign):
            sub.annotation = ast.Constant(None)
    return node


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
            wanted |= _names_in(_without_annotations(stmt))
    todo = [method, *(m for m in methods if m in _IMPLICIT_METHODS)]
    done: set[str] = set()
    while todo:
        name = todo.pop()
        if name in done or name not in methods:
            continue
        done.add(name)
        node = methods[name]
        wanted |= _names_in(_without_annotations(node))
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
                out.setdefault(prefix + stmt.name, "".join(lines[start - 1 : stmt.end_lineno]))
            elif isinstance(stmt, ast.ClassDef):
                visit(stmt.body, f"{prefix}{stmt.name}.")
            elif not prefix and is_main_guard(stmt):
                # A script's `if __name__ == "__main__":` block defines module
                # names too (a train step its loop calls), unless the module
                # defines the name itself.
                visit(stmt.body, prefix)  # type: ignore[attr-defined]

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
