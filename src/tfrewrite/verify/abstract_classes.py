"""Which class to build for a method of an abstract class: verify runs the
method on a concrete subclass that inherits it unchanged (read from the
source with `ast`, before anything is imported), so a loss defined on an
abstract base is proven on the class the project actually uses.
"""

from __future__ import annotations

import ast


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
