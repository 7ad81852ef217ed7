"""Names in pass 1: what a reference names once resolved through the file's
imports, and which module-level names the file binds.

Every fact pass 1 records names functions and classes by their dotted names
across the project (`pkg.losses.dice`, `tensorflow.function` whatever alias
the file uses), so resolving a reference is asked by every other part of the
index; it lives here, apart from what those parts recognise.
"""

from __future__ import annotations

import ast
import builtins
import re
from collections.abc import Iterable, Iterator
from typing import TypeVar

from tfrewrite.facts.canonical_names import canonical_name
from tfrewrite.facts.index_records import ModuleIndex

# Python's builtin names (`len`, `range`, `int`): never the project's own.
BUILTIN_NAMES = frozenset(dir(builtins))

# The libraries whose names a module-level alias may stand for
# (`record_module_alias`).
ALIASED_LIBRARIES = frozenset(
    {"tensorflow", "keras", "tf_keras", "tensorflow_probability", "tensorflow_addons", "numpy"}
)


def dotted(node: ast.AST) -> str | None:
    """`a.b.c` for a Name/Attribute chain, else None."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def held_table_item(node: ast.AST) -> tuple[str, str] | None:
    """(`losses`, `gen`) for `self.losses["gen"]`: an item of a table an
    object holds, picked by a constant key (`ClassInfo.held_functions`
    records what such a table holds under `losses[gen]`)."""
    if not (
        isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Attribute)
        and isinstance(node.value.value, ast.Name)
        and node.value.value.id == "self"
        and isinstance(node.slice, ast.Constant)
        and isinstance(node.slice.value, str)
        and node.slice.value.isidentifier()
    ):
        return None
    return node.value.attr, node.slice.value


# Identifier-like words (Python identifiers may hold any letter).
_WORD = re.compile(r"[^\W\d]\w*")


def identifiers(source: str) -> frozenset[str]:
    """Every identifier-like word of the source (names, attributes,
    definitions, parameters, imports, and the words of comments and
    strings): a name a fix gives something new must be none of them,
    wherever in the file it is. A word of a comment counts too: a scan of
    the text costs a fraction of a walk of the tree."""
    return frozenset(_WORD.findall(source))


def _resolve_relative(module: str, level: int, name: str | None, is_package: bool) -> str:
    base = module.split(".") if module else []
    drop = level - (1 if is_package else 0)
    if drop > 0:
        base = base[:-drop] if drop <= len(base) else []
    return ".".join([*base, name] if name else base)


_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def body_nodes(body: list[ast.stmt]) -> list[ast.AST]:
    """Every node of a scope's body, not descending into nested definitions."""
    result: list[ast.AST] = []
    stack: list[ast.AST] = list(reversed(body))
    while stack:
        node = stack.pop()
        result.append(node)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        stack.extend(reversed(list(ast.iter_child_nodes(node))))
    return result


def iter_statements(body: list[ast.stmt], into_definitions: bool = True) -> Iterator[ast.stmt]:
    """Every statement, nested ones included, without visiting expressions
    (imports are statements, so this finds them all cheaply). Without
    `into_definitions`, the statements of one scope: the bodies of its
    `if`/`try`/`with`/loop statements (an `if __name__ == "__main__":` block
    binds module globals too), not those of the functions and classes it
    defines (their definitions are yielded)."""
    stack = list(reversed(body))
    while stack:
        statement = stack.pop()
        yield statement
        if not into_definitions and isinstance(statement, _DEFINITIONS):
            continue
        for field_name in ("body", "orelse", "finalbody", "handlers", "cases"):
            children = getattr(statement, field_name, None)
            if children.__class__ is list:
                stack.extend(reversed(children))


def module_bindings(
    body: list[ast.stmt], in_loop: bool = False
) -> dict[str, tuple[int, int, bool]]:
    """name -> (how many times it may be bound, line of the last binding, bound
    in a loop) for the names module-level statements bind, compound statements
    included (not functions, classes or comprehensions): `lr_scale = ...` in
    the module's epoch loop rebinds a module global as surely as a `global`
    statement does. Alternatives (`if`/`else`, `try`/`except`) count as the
    most bindings one of them makes, not their sum."""
    found: dict[str, tuple[int, int, bool]] = {}

    def add(name: str, count: int, line: int, looped: bool) -> None:
        old = found.get(name, (0, 0, False))
        found[name] = (old[0] + count, max(old[1], line), old[2] or looped)

    for statement in body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        targets: list[ast.AST] = []
        if isinstance(statement, ast.Assign):
            targets = list(statement.targets)
        elif isinstance(statement, ast.AugAssign):
            targets = [statement.target]
        elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
            targets = [statement.target]
        elif isinstance(statement, (ast.For, ast.AsyncFor)):
            targets = [statement.target]
        for target in targets:
            for name in _bound_names(target):
                add(
                    name,
                    1,
                    statement.lineno,
                    in_loop or isinstance(statement, (ast.For, ast.AsyncFor)),
                )
        if isinstance(statement, (ast.For, ast.AsyncFor, ast.While)):
            for name, value in module_bindings([*statement.body, *statement.orelse], True).items():
                add(name, *value)
        elif isinstance(statement, (ast.If, ast.Try)) or type(statement).__name__ == "TryStar":
            branches = [statement.body, statement.orelse]
            branches += [handler.body for handler in getattr(statement, "handlers", [])]
            merged: dict[str, tuple[int, int, bool]] = {}
            for branch in branches:
                for name, (count, line, looped) in module_bindings(branch, in_loop).items():
                    old = merged.get(name, (0, 0, False))
                    merged[name] = (max(old[0], count), max(old[1], line), old[2] or looped)
            for name, value in merged.items():
                add(name, *value)
            final = getattr(statement, "finalbody", [])
            for name, value in module_bindings(final, in_loop).items():
                add(name, *value)
        elif isinstance(statement, (ast.With, ast.AsyncWith)):
            for name, value in module_bindings(statement.body, in_loop).items():
                add(name, *value)
    return found


def _bound_names(target: ast.AST) -> Iterator[str]:
    if isinstance(target, ast.Name):
        yield target.id
    elif isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            yield from _bound_names(element)
    elif isinstance(target, ast.Starred):
        yield from _bound_names(target.value)


class ImportResolution:
    """The visitor's part that records a file's imports and resolves names
    through them: a name the file imports resolves to what it imports, `self.x`
    in a class to the class's attribute, a module-level definition to its
    qualified name."""

    index: ModuleIndex
    is_package: bool
    class_stack: list[str]  # qualnames of the enclosing classes
    module_level_names: set[str]  # functions and classes the module defines
    top_level: list[ast.stmt]  # the module's own statements (imports there bind for certain)

    def resolve(self, node: ast.AST) -> str | None:
        name = dotted(node)
        if name is None:
            item = held_table_item(node)
            if item is None:
                return None
            name = "self.{}[{}]".format(*item)
        head, _, rest = name.partition(".")
        if head in self.index.imports:
            target = self.index.imports[head]
            return canonical_name(f"{target}.{rest}" if rest else target)
        if head == "self" and self.class_stack and rest:
            return self.index.qualify(f"{self.class_stack[-1]}.{rest}")
        if head in self.module_level_names:
            return self.index.qualify(name)
        return name

    def record_module_alias(self, node: ast.Assign, bound_once: set[str]) -> None:
        """`tfk = tf.keras`, `tfb = tfp.bijectors`, `Dense = layers.Dense` at
        module level, bound once: the name stands for what it is bound to,
        as if imported so (`class Flow(tfb.Bijector)` derives from TFP's
        `Bijector`). Only names of the libraries whose classes and functions
        the facts know; a project's own objects stay names."""
        if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name):
            return
        name = node.targets[0].id
        if name not in bound_once or name in self.module_level_names:
            return
        if not isinstance(node.value, ast.Attribute):
            return
        target = self.resolve(node.value)
        head = dotted(node.value)
        if target is None or head is None or head.partition(".")[0] not in self.index.imports:
            return
        if target.partition(".")[0] in ALIASED_LIBRARIES:
            self.index.imports.setdefault(name, target)

    def record_import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.asname:
                self.index.imports[alias.asname] = alias.name
            else:
                head = alias.name.split(".")[0]
                self.index.imports[head] = head

    def record_import_from(self, node: ast.ImportFrom) -> None:
        if node.level:
            base = _resolve_relative(self.index.module, node.level, node.module, self.is_package)
        else:
            base = node.module or ""
        for alias in node.names:
            if alias.name == "*":
                if base:
                    self.index.star_imports.append(base)
                    if any(node is statement for statement in self.top_level):
                        self.index.reexported_stars.append(base)
                continue
            self.index.imports[alias.asname or alias.name] = (
                f"{base}.{alias.name}" if base else alias.name
            )


_Held = TypeVar("_Held")


def rebind(mapping: dict[str, _Held], names: Iterable[str], held: _Held | None) -> None:
    """An assignment to `names`: each now holds `held` in `mapping`, or,
    when nothing is known of the value (`held` empty), nothing: what a name
    held before the assignment is forgotten."""
    for name in names:
        if held:
            mapping[name] = held
        else:
            mapping.pop(name, None)


def on_super(func: ast.expr) -> bool:
    """`super().m` or `super(Cls, self).m`: a method the class extends."""
    return (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Call)
        and isinstance(func.value.func, ast.Name)
        and func.value.func.id == "super"
    )
