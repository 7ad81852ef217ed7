"""Apply rule fixes to a LibCST module.

A round applies every fix whose edits do not overlap an edit applied earlier in
the same round (fixes are tried in the fixed rule order), and that introduces
no name another fix of the round introduces; the others wait for the next
round, when the rules run again on the re-parsed result.
Imports are added once each, where LibCST's `AddImportsVisitor` would add them;
`tfrewrite.pipeline.imports` then places new standard-library imports in their group
and removes imports the fixes made unused.
"""

from __future__ import annotations

from collections.abc import Sequence
from collections.abc import Set as AbstractSet

import libcst as cst

from tfrewrite.facts.import_requests import ImportRequest
from tfrewrite.facts.walk import parent_links
from tfrewrite.pipeline.imports import (
    ImportSpec,
    import_insertion_point,
    module_import_bindings,
    place_stdlib_imports,
    referenced_names,
    remove_unused,
)
from tfrewrite.rewrite.fixes import CstFix, NodeEdit


class _ReplaceNodes(cst.CSTTransformer):
    """Swap nodes by identity; refuse a replacement whose subtree already
    changed (a nested fix applied in this round). With `on_path` (the ids
    of the nodes above the targets) only those nodes are entered: the rest
    of the tree is kept as it is, not rebuilt."""

    def __init__(self, edits: dict[int, NodeEdit], on_path: AbstractSet[int] | None) -> None:
        self.edits = edits
        self.on_path = on_path
        self.changed_below: list[bool] = []
        self.applied: set[int] = set()
        self.skipped: set[int] = set()

    def on_visit(self, node: cst.CSTNode) -> bool:
        self.changed_below.append(False)
        return self.on_path is None or id(node) in self.on_path

    def on_leave(self, original_node, updated_node):  # type: ignore[override]
        nested_change = self.changed_below.pop()
        edit = self.edits.get(id(original_node))
        result = updated_node
        if edit is not None:
            if nested_change:
                self.skipped.add(id(original_node))
            else:
                result = edit.replacement
                self.applied.add(id(original_node))
                nested_change = True
        if nested_change and self.changed_below:
            self.changed_below[-1] = True
        return result


def _paths_to(
    module: cst.Module, targets: Sequence[int], parents: dict[int, cst.CSTNode] | None
) -> set[int] | None:
    """The ids of the nodes from `module` down to the parents of `targets`
    (`parents`: `walk.parent_links` of the module, or of the file an excerpt
    is cut from); None when a target is not found (a formatting node), so
    the whole tree is visited."""
    if parents is None:
        parents = parent_links(module)
    on_path = {id(module)}
    for target in targets:
        node = parents.get(target)
        if node is None:
            return None
        while node is not None and id(node) not in on_path:
            on_path.add(id(node))
            node = parents.get(id(node))
    return on_path


def apply_fixes(
    module: cst.Module,
    fixes: Sequence[CstFix],
    read_elsewhere: AbstractSet[str] = frozenset(),
    parents: dict[int, cst.CSTNode] | None = None,
) -> tuple[cst.Module, list[int]]:
    """Apply as many of `fixes` as do not overlap; return the new module and the
    positions (in `fixes`) of the ones applied. `read_elsewhere`: names read
    by code of the file that `module` leaves out (an excerpt of the file):
    imports of those names stay. `parents`: the module's parent links
    (`walk.parent_links`), when the caller applies many fixes to it."""
    claimed: dict[int, int] = {}  # node id -> fix position
    introduced: set[str] = set()  # names the claiming fixes introduce
    for position, fix in enumerate(fixes):
        ids = [id(edit.target) for edit in fix.edits]
        if any(i in claimed for i in ids) or fix.introduces & introduced:
            continue
        for i in ids:
            claimed[i] = position
        introduced |= fix.introduces
    edits = {
        id(edit.target): edit
        for position, fix in enumerate(fixes)
        for edit in fix.edits
        if claimed.get(id(edit.target)) == position
    }
    if not edits:
        return module, []
    transformer = _ReplaceNodes(edits, _paths_to(module, list(edits), parents))
    new_module = module.visit(transformer)

    # A fix applies only when all of its edits did.
    # A fix counts only through the edits it claimed: another fix may have
    # replaced the same node (and so made this one wait for the next round).
    def claimed_and_applied(position: int, edit: NodeEdit) -> bool:
        return claimed.get(id(edit.target)) == position and id(edit.target) in transformer.applied

    applied = [
        position
        for position, fix in enumerate(fixes)
        if fix.edits and all(claimed_and_applied(position, e) for e in fix.edits)
    ]
    partially = [
        position
        for position, fix in enumerate(fixes)
        if position not in applied and any(claimed_and_applied(position, e) for e in fix.edits)
    ]
    if partially:
        # Rare: one edit of a multi-place fix was blocked by a nested change.
        # Redo the round without the partial fixes so nothing is half applied.
        keep = [fixes[i] for i in range(len(fixes)) if i not in partially]
        new_module, kept_applied = apply_fixes(module, keep, read_elsewhere, parents)
        positions = [i for i in range(len(fixes)) if i not in partially]
        return new_module, [positions[i] for i in kept_applied]
    new_module = _tidy_imports(module, new_module, [fixes[i] for i in applied], read_elsewhere)
    return new_module, applied


def _tidy_imports(
    module: cst.Module,
    new_module: cst.Module,
    applied: Sequence[CstFix],
    read_elsewhere: AbstractSet[str],
) -> cst.Module:
    """Add the imports the applied fixes need, place new standard-library ones
    in their group, and remove the imports the fixes made unused."""
    bindings = module_import_bindings(module)
    candidates: dict[str, ImportSpec] = {}
    if bindings:
        replaced = referenced_names(e.target for f in applied for e in f.edits)
        kept = referenced_names(e.replacement for f in applied for e in f.edits)
        candidates = {n: bindings[n] for n in replaced - kept if n in bindings}
    imports = [imp for fix in applied for imp in fix.imports]
    if imports:
        with_imports = add_imports(new_module, imports)
        if with_imports is not new_module:
            with_imports = place_stdlib_imports(new_module, with_imports)
        new_module = with_imports
    if candidates:
        new_module = remove_unused(new_module, candidates, read_elsewhere)
    return new_module


def add_imports(module: cst.Module, imports: Sequence[ImportRequest]) -> cst.Module:
    """`module` with the `import X` / `import X as A` lines `imports` asks
    for and the leading imports lack, placed where LibCST's
    `AddImportsVisitor` places them (so a file reads the same whichever
    added them): after the leading docstring and run of import lines, plain
    imports sorted by name, then aliased ones in the order asked, with a
    blank line kept before the next statement. Written here rather than
    running that visitor because importing LibCST's codemod package costs
    about a second, paid by every `check` that simulates a fix. Returns
    `module` itself when every import is there."""
    point = import_insertion_point(module)
    present = module_import_bindings(module.with_changes(body=module.body[:point]))
    missing = [r for r in dict.fromkeys(imports) if not _already_imported(r, present)]
    if not missing:
        return module
    if any(r.obj is not None for r in missing):
        raise ValueError("only `import module [as alias]` requests are supported")
    plain = sorted({r.module for r in missing if r.alias is None})
    aliased = {r.module: r.alias for r in missing if r.alias is not None}
    new_lines = [_import_line(name, None) for name in plain]
    new_lines += [_import_line(name, alias) for name, alias in aliased.items()]
    rest = list(module.body[point:])
    if rest:
        rest[0] = _with_blank_line_above(rest[0])
    return module.with_changes(body=[*module.body[:point], *new_lines, *rest])


def _import_line(module_name: str, alias: str | None) -> cst.SimpleStatementLine:
    """The statement `import module_name [as alias]`."""
    name: cst.Name | cst.Attribute = cst.Name(module_name.split(".")[0])
    for part in module_name.split(".")[1:]:
        name = cst.Attribute(value=name, attr=cst.Name(part))
    asname = cst.AsName(name=cst.Name(alias)) if alias else None
    return cst.SimpleStatementLine([cst.Import(names=[cst.ImportAlias(name=name, asname=asname)])])


def _with_blank_line_above(statement: cst.CSTNode) -> cst.CSTNode:
    """The first statement after new imports starts after a blank line: one
    is added unless its leading lines already begin with one."""
    leading = statement.leading_lines  # type: ignore[attr-defined]
    if leading and leading[0].comment is None:
        return statement
    return statement.with_changes(leading_lines=(cst.EmptyLine(), *leading))


def _already_imported(request: ImportRequest, present: dict[str, ImportSpec]) -> bool:
    """Whether the leading imports bind `request` exactly as it asks (`import
    tensorflow as tf` for `tf`)."""
    if request.obj is None and request.alias is None:
        return "." not in request.module and present.get(request.module) == (
            request.module,
            None,
            None,
        )
    bound = request.alias or request.obj
    return present.get(bound or "") == (request.module, request.obj, request.alias)
