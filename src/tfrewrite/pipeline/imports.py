"""Tidy imports after a fix, as a careful person would.

- An import that a fix made unused (`numpy` once `np.random.normal` became
  `tf.random.normal`) is removed when nothing else uses it, with LibCST's
  `RemoveImportsVisitor`. Only imports the replaced code referred to are
  candidates, so an import that was unused before the fix is never touched.
- A standard-library import a fix adds (`import sys` for
  `tf.print(..., output_stream=sys.stderr)`) goes into the standard-library
  group of the file's leading imports, not after `import tensorflow`.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence

import libcst as cst
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import RemoveImportsVisitor

# (module, obj, alias) as `RemoveImportsVisitor` takes them.
ImportSpec = tuple[str, "str | None", "str | None"]


class _ReferencedNames(cst.CSTVisitor):
    """Names a piece of code reads: `np` in `np.random.normal(...)`, not
    `random` (an attribute), not keyword names or parameters."""

    def __init__(self) -> None:
        self.names: set[str] = set()

    def visit_Name(self, node: cst.Name) -> None:
        self.names.add(node.value)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        node.value.visit(self)
        return False

    def visit_Arg(self, node: cst.Arg) -> bool:
        node.value.visit(self)
        return False

    def visit_Param(self, node: cst.Param) -> bool:
        return False


def referenced_names(nodes: Iterable[object]) -> set[str]:
    """Names read by `nodes` (nodes, `FlattenSentinel`s of nodes, removals)."""
    visitor = _ReferencedNames()
    for node in nodes:
        if isinstance(node, cst.FlattenSentinel):
            for inner in node.nodes:
                inner.visit(visitor)
        elif isinstance(node, cst.CSTNode):
            node.visit(visitor)
    return visitor.names


def _dotted(node: cst.BaseExpression) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{_dotted(node.value)}.{node.attr.value}"
    return ""


def module_import_bindings(module: cst.Module) -> dict[str, ImportSpec]:
    """Names bound by the module's top-level imports: `np` -> ("numpy", None, "np")."""
    bindings: dict[str, ImportSpec] = {}
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.Import):
                for alias in small.names:
                    name = _dotted(alias.name)
                    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                        bindings[alias.asname.name.value] = (name, None, alias.asname.name.value)
                    elif "." not in name:
                        bindings[name] = (name, None, None)
                    else:  # `import numpy.random` binds `numpy`
                        bindings.setdefault(name.split(".")[0], (name, None, None))
            elif (
                isinstance(small, cst.ImportFrom)
                and not small.relative
                and small.module is not None
                and not isinstance(small.names, cst.ImportStar)
            ):
                for alias in small.names:
                    obj = _dotted(alias.name)
                    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                        bound = alias.asname.name.value
                        bindings[bound] = (_dotted(small.module), obj, bound)
                    else:
                        bindings[obj] = (_dotted(small.module), obj, None)
    return bindings


def remove_unused(module: cst.Module, candidates: dict[str, ImportSpec]) -> cst.Module:
    """Remove the imports in `candidates` that nothing in `module` uses now."""
    still_named = referenced_names(_non_import_statements(module))
    gone = [spec for name, spec in candidates.items() if name not in still_named]
    if not gone:  # the common case, without LibCST's scope analysis
        return module
    tidied = RemoveImportsVisitor(CodemodContext(), gone).transform_module(module)
    return tidied.with_changes(body=_keep_blank_lines(module, tidied))


def _keep_blank_lines(old: cst.Module, new: cst.Module) -> list:
    """A removed import line hands its leading blank lines and comments to
    the next line, so import groups stay separated. (The removal works on a
    copy of the tree, so statements are matched by their code.)"""
    result: list = []
    j = 0
    carried: Sequence[cst.EmptyLine] | None = None  # from the removed lines just before
    for statement in old.body:
        kept = new.body[j] if j < len(new.body) else None
        same = kept is not None and (
            old.code_for_node(statement) == new.code_for_node(kept)
            or (
                _import_root(statement) is not None
                and _import_root(statement) == _import_root(kept)
            )
        )
        if kept is not None and same:
            j += 1
            # At the top of the file the removed line's spacing wins (no blank
            # first line); elsewhere a line keeps its own blank lines if it has any.
            if carried is not None and (not result or not kept.leading_lines):  # type: ignore[attr-defined]
                kept = kept.with_changes(leading_lines=carried)
            carried = None
            result.append(kept)
        elif not carried:
            carried = statement.leading_lines  # type: ignore[attr-defined]
    result.extend(new.body[j:])
    return result


def _non_import_statements(module: cst.Module) -> list[cst.CSTNode]:
    return [
        s
        for s in module.body
        if not (
            isinstance(s, cst.SimpleStatementLine)
            and all(isinstance(small, (cst.Import, cst.ImportFrom)) for small in s.body)
        )
    ]


def _import_root(statement: cst.CSTNode) -> str | None:
    """The top-level module an import statement line imports, or None."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return None
    small = statement.body[0]
    if isinstance(small, cst.Import):
        return _dotted(small.names[0].name).split(".")[0]
    if isinstance(small, cst.ImportFrom):
        if small.relative or small.module is None:
            return "."
        return _dotted(small.module).split(".")[0]
    return None


def _is_stdlib(root: str | None) -> bool:
    return root is not None and root != "__future__" and root in sys.stdlib_module_names


def place_stdlib_imports(before: cst.Module, after: cst.Module) -> cst.Module:
    """Move standard-library imports that are new in `after` into the
    standard-library group of the leading imports (alphabetically), or into a
    new group before the third-party ones."""
    old = {before.code_for_node(s) for s in before.body if _import_root(s) is not None}
    body = list(after.body)
    added = [s for s in body if _is_stdlib(_import_root(s)) and after.code_for_node(s) not in old]
    for statement in added:
        body.remove(statement)
        body = _insert_stdlib(body, statement.with_changes(leading_lines=()))
    return after.with_changes(body=body) if added else after


def _insert_stdlib(body: list[cst.CSTNode], statement: cst.SimpleStatementLine) -> list:
    name = _import_root(statement) or ""
    # The leading block: docstring, then import lines.
    start = 0
    if body and _is_docstring(body[0]):
        start = 1
    end = start
    while end < len(body) and _import_root(body[end]) is not None:
        end += 1
    block = range(start, end)
    stdlib = [i for i in block if _is_stdlib(_import_root(body[i]))]
    others = [
        i
        for i in block
        if not _is_stdlib(_import_root(body[i])) and _import_root(body[i]) != "__future__"
    ]
    if not stdlib and not others:
        return [*body[:end], statement, *body[end:]]
    if stdlib:
        group = [i for i in stdlib if not others or i < others[0]] or stdlib
        after_index = next((i for i in group if (_import_root(body[i]) or "") > name), None)
        if after_index is None:
            position = group[-1] + 1
            return [*body[:position], statement, *body[position:]]
        first = body[after_index]
        moved = statement.with_changes(leading_lines=first.leading_lines)
        return [
            *body[:after_index],
            moved,
            first.with_changes(leading_lines=()),
            *body[after_index + 1 :],
        ]
    first_index = others[0]
    first = body[first_index]
    moved = statement.with_changes(leading_lines=first.leading_lines)
    separated = first.with_changes(leading_lines=(cst.EmptyLine(),))
    return [*body[:first_index], moved, separated, *body[first_index + 1 :]]


def _is_docstring(statement: cst.CSTNode) -> bool:
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )
