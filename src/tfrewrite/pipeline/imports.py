"""Tidy imports after a fix, as a careful person would.

- An import that a fix made unused (`numpy` once `np.random.normal` became
  `tf.random.normal`) is removed when no other statement reads it and no
  string mentions it. Only imports the replaced code referred to are
  candidates, so an import that was unused before the fix is never touched.
  (LibCST's `RemoveImportsVisitor` would run a scope analysis of the whole
  file for each round; the candidates make it unnecessary.)
- A standard-library import a fix adds (`import sys` for
  `tf.print(..., output_stream=sys.stderr)`) goes into the standard-library
  group of the file's leading imports, not after `import tensorflow`.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

import libcst as cst

from tfrewrite.facts.walk import child_nodes

# (module, obj, alias) as `RemoveImportsVisitor` takes them.
ImportSpec = tuple[str, "str | None", "str | None"]


@dataclass
class _ReferencedNames:
    """Names a piece of code reads: `np` in `np.random.normal(...)`, not
    `random` (an attribute), not keyword names or parameter names (their
    defaults and annotations are read); and the words of its string
    literals, where a name can be read too (a string annotation,
    `__all__`)."""

    names: set[str] = field(default_factory=set)
    string_words: set[str] = field(default_factory=set)

    def read(self, root: cst.CSTNode) -> None:
        """Collect from `root`, walking its fields directly
        (`walk.child_nodes`): a LibCST visitor costs several times more, and
        every fix round and every fix's edits ask this."""
        stack = [root]
        while stack:
            node = stack.pop()
            kind = node.__class__
            if kind is cst.Name:
                self.names.add(node.value)  # type: ignore[attr-defined]
            elif kind is cst.Attribute or kind is cst.Arg:
                stack.append(node.value)  # type: ignore[attr-defined]
            elif kind is cst.Param:
                parts = (node.default, node.annotation)  # type: ignore[attr-defined]
                stack += [part for part in parts if part is not None]
            else:
                if kind is cst.SimpleString or kind is cst.FormattedStringText:
                    self._add_words(node.value)  # type: ignore[attr-defined]
                stack += child_nodes(node)

    def _add_words(self, text: str) -> None:
        word = ""
        for char in f"{text} ":
            if char.isalnum() or char == "_":
                word += char
            elif word:
                self.string_words.add(word)
                word = ""


def _visit_all(nodes: Iterable[object]) -> _ReferencedNames:
    found = _ReferencedNames()
    for node in nodes:
        if isinstance(node, cst.FlattenSentinel):
            for inner in node.nodes:
                found.read(inner)
        elif isinstance(node, cst.CSTNode):
            found.read(node)
    return found


def referenced_names(nodes: Iterable[object]) -> set[str]:
    """Names read by `nodes` (nodes, `FlattenSentinel`s of nodes, removals)."""
    return _visit_all(nodes).names


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


def names_read(statements: Iterable[cst.CSTNode]) -> set[str]:
    """What `remove_unused` counts as a use of an import: the names the
    statements read and the words of their strings (import lines excluded)."""
    read = _visit_all(s for s in statements if not _is_import_line(s))
    return read.names | read.string_words


def remove_unused(
    module: cst.Module,
    candidates: dict[str, ImportSpec],
    read_elsewhere: AbstractSet[str] = frozenset(),
) -> cst.Module:
    """Remove the top-level imports in `candidates` that nothing in `module`
    uses now. A name counts as used when any other statement reads it, or
    any string mentions it (a string annotation, `__all__`): a removal must
    never break the file, and keeping an import too many is harmless."""
    still_named = names_read(module.body) | read_elsewhere
    gone = {name: spec for name, spec in candidates.items() if name not in still_named}
    if not gone:
        return module
    body = []
    for statement in module.body:
        kept = _without_bindings(statement, gone)
        if kept is not None:
            body.append(kept)
    tidied = module.with_changes(body=body)
    return tidied.with_changes(body=_keep_blank_lines(module, tidied))


def _without_bindings(statement: cst.CSTNode, gone: dict[str, ImportSpec]) -> cst.CSTNode | None:
    """`statement` without the import aliases that bind a name in `gone` to
    the same import; None when nothing is left of it."""
    if not isinstance(statement, cst.SimpleStatementLine):
        return statement
    smalls = []
    for small in statement.body:
        if isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(
            small.names, cst.ImportStar
        ):
            names = [a for a in small.names if _binding(small, a) not in gone.items()]
            if not names:
                continue
            if len(names) < len(small.names):
                names[-1] = names[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
                small = small.with_changes(names=names)
        smalls.append(small)
    if not smalls:
        return None
    if len(smalls) < len(statement.body):
        smalls[-1] = smalls[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
    return statement.with_changes(body=smalls) if smalls != list(statement.body) else statement


def _binding(
    statement: cst.Import | cst.ImportFrom, alias: cst.ImportAlias
) -> tuple[str, ImportSpec]:
    """The name one alias of a top-level import binds, and its spec (as
    `module_import_bindings` gives them)."""
    bound = (
        alias.asname.name.value
        if alias.asname and isinstance(alias.asname.name, cst.Name)
        else None
    )
    name = _dotted(alias.name)
    if isinstance(statement, cst.Import):
        if bound is not None:
            return bound, (name, None, bound)
        return name.split(".")[0], (name, None, None)
    module = (
        _dotted(statement.module) if statement.module is not None and not statement.relative else ""
    )
    return (bound or name), (module, name, bound)


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
            kept is statement
            or old.code_for_node(statement) == new.code_for_node(kept)
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


def _is_import_line(statement: cst.CSTNode) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and all(
        isinstance(small, (cst.Import, cst.ImportFrom)) for small in statement.body
    )


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


def import_insertion_point(module: cst.Module) -> int:
    """Where LibCST's `AddImportsVisitor` inserts new imports: after a
    leading docstring (or `__strict__` flag) and the run of one-import lines
    that follows it, before the first other statement."""
    start = 1 if module.body and _is_head_marker(module.body[0]) else 0
    end = start
    while end < len(module.body) and _is_one_import(module.body[end]):
        end += 1
    return end


def _only_small_statement(statement: cst.CSTNode) -> cst.BaseSmallStatement | None:
    if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1:
        return statement.body[0]
    return None


def _is_one_import(statement: cst.CSTNode) -> bool:
    return isinstance(_only_small_statement(statement), (cst.Import, cst.ImportFrom))


def _is_head_marker(statement: cst.CSTNode) -> bool:
    """A one-string docstring line, or a `__strict__ = ...` flag: new imports
    never go above it."""
    small = _only_small_statement(statement)
    if isinstance(small, cst.Expr):
        return isinstance(small.value, cst.SimpleString)
    return (
        isinstance(small, cst.Assign)
        and len(small.targets) == 1
        and isinstance(small.targets[0].target, cst.Name)
        and small.targets[0].target.value == "__strict__"
    )


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
