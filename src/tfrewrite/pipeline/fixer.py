"""Apply rule fixes to a LibCST module.

A round applies every fix whose edits do not overlap an edit applied earlier in
the same round (fixes are tried in the fixed rule order), and that introduces
no name another fix of the round introduces; the others wait for the next
round, when the rules run again on the re-parsed result.
Imports are added through LibCST's `AddImportsVisitor`, so each is added once;
`tfrewrite.pipeline.imports` then places new standard-library imports in their group
and removes imports the fixes made unused.
"""

from __future__ import annotations

from collections.abc import Sequence
from collections.abc import Set as AbstractSet

import libcst as cst
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import AddImportsVisitor, ImportItem

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
    changed (a nested fix applied in this round)."""

    def __init__(self, edits: dict[int, NodeEdit]) -> None:
        self.edits = edits
        self.changed_below: list[bool] = []
        self.applied: set[int] = set()
        self.skipped: set[int] = set()

    def on_visit(self, node: cst.CSTNode) -> bool:
        self.changed_below.append(False)
        return True

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


def apply_fixes(
    module: cst.Module, fixes: Sequence[CstFix], read_elsewhere: AbstractSet[str] = frozenset()
) -> tuple[cst.Module, list[int]]:
    """Apply as many of `fixes` as do not overlap; return the new module and the
    positions (in `fixes`) of the ones applied. `read_elsewhere`: names read
    by code of the file that `module` leaves out (an excerpt of the file):
    imports of those names stay."""
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
    transformer = _ReplaceNodes(edits)
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
        new_module, kept_applied = apply_fixes(module, keep, read_elsewhere)
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


def add_imports(module: cst.Module, imports) -> cst.Module:  # type: ignore[no-untyped-def]
    """`module` with `imports` added by LibCST's `AddImportsVisitor`, run on
    the file's head only: what that visitor reads is the leading docstring
    and import block, and what it changes besides is the blank lines above
    the first statement after them. That statement is handed to it as a
    `pass` with the same leading lines, so the rest of the tree is neither
    copied nor walked. Returns `module` itself when every import is there."""
    items = [ImportItem(i.module, i.obj, i.alias) for i in dict.fromkeys(imports)]
    point = import_insertion_point(module)
    present = module_import_bindings(module.with_changes(body=module.body[:point]))
    if all(_already_imported(item, present) for item in items):
        return module  # what the visitor would find too, without building it
    after = module.body[point] if point < len(module.body) else None
    stand_in = (
        [cst.SimpleStatementLine([cst.Pass()], leading_lines=after.leading_lines)]
        if after is not None
        else []
    )
    head = module.with_changes(body=[*module.body[:point], *stand_in])
    with_imports = AddImportsVisitor(CodemodContext(), items).transform_module(head)
    if with_imports.deep_equals(head):
        return module
    body = list(with_imports.body)
    if after is not None:
        body[-1] = after.with_changes(leading_lines=body[-1].leading_lines)
    return module.with_changes(body=[*body, *module.body[point + 1 :]])


def _already_imported(item: ImportItem, present: dict[str, ImportSpec]) -> bool:
    """Whether the leading imports bind `item` exactly as it asks (`import
    tensorflow as tf` for `tf`), so `AddImportsVisitor` would add nothing."""
    if item.obj_name is None and item.alias is None:
        return "." not in item.module and present.get(item.module) == (item.module, None, None)
    bound = item.alias or item.obj_name
    return present.get(bound or "") == (item.module, item.obj_name, item.alias)
