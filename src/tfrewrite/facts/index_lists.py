"""The visitor's part that knows which `self` lists a class fills with
objects it builds, and which loop variables iterate them.

A layer that keeps its sublayers in a list (`self.blocks = [Block(n) for n
in sizes]`, or a local list filled with `append` and then kept) and calls
each in a loop (`for block in self.blocks: x = block(x)`) runs only what it
built: whether calling an element may read `training` is what those
constructor calls say, which are calls of the class's own methods
(`KerasClasses`). A list that may hold anything else (a parameter, an
element the class did not build) is not one of these.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from tfrewrite.facts.function_facts import is_self_attribute
from tfrewrite.facts.index_names import dotted
from tfrewrite.facts.index_records import ClassInfo, FunctionInfo
from tfrewrite.facts.vocabulary import LIST_GROWING_METHODS


def _built_elements(value: ast.expr) -> bool | None:
    """Whether a list `value` holds only objects built where it is written:
    `[Dense(4), Dropout(0.5)]`, `[Block(n) for n in sizes]`. None when it is
    not a list written here."""
    if isinstance(value, (ast.List, ast.Tuple)):
        return all(isinstance(e, ast.Call) for e in value.elts)
    if isinstance(value, ast.ListComp):
        return isinstance(value.elt, ast.Call)
    return None


class ListReferences:
    """Lists of built objects, for `ClassInfo.built_lists` and
    `FunctionInfo.loop_attributes`."""

    function_stack: list[FunctionInfo]
    # Per function being visited: local names bound to a list, and whether
    # every element so far is an object built there.
    local_lists: list[dict[str, bool]]
    # Per function being visited: local names last bound to an object a
    # call built (`conv = Conv2D(n, 3)`), which an `append` then adds.
    built_locals: list[set[str]]
    _method_class: Callable[[], ClassInfo | None]

    def record_list_binding(self, targets: list[ast.expr], value: ast.expr) -> None:
        """`blocks = [Block(4)]` (a local list) or `self.blocks = blocks` /
        `self.blocks = [Block(n) for n in sizes]` (a kept one)."""
        if not self.local_lists:
            return
        built = _built_elements(value)
        lists = self.local_lists[-1]
        if built is None and isinstance(value, ast.Name):
            built = lists.get(value.id)
        owner = self._method_class()
        loops = self.function_stack[-1].loop_attributes or {}
        for target in targets:
            if isinstance(target, ast.Name):
                if isinstance(value, ast.Call):
                    self.built_locals[-1].add(target.id)
                else:
                    self.built_locals[-1].discard(target.id)
                if target.id in loops:
                    loops[target.id] = ""  # no longer only the list's items
                if built is None:
                    lists.pop(target.id, None)
                else:
                    lists[target.id] = built
            elif owner is not None and is_self_attribute(target):
                assert isinstance(target, ast.Attribute)
                if built is None and isinstance(value, ast.Constant) and value.value is None:
                    continue  # `self.blocks = None` before the list is built
                known = owner.built_lists.get(target.attr, True)
                owner.built_lists[target.attr] = known and bool(built)

    def record_list_growth(self, call: ast.Call) -> None:
        """`blocks.append(Block(4))` or `self.blocks.append(...)`: the list
        keeps holding only built objects when the element is one."""
        func = call.func
        if not (isinstance(func, ast.Attribute) and func.attr in LIST_GROWING_METHODS):
            return
        if func.attr == "extend":
            built = len(call.args) == 1 and bool(_built_elements(call.args[0]))
        else:
            last = call.args[-1] if call.args else None
            built = isinstance(last, ast.Call) or (
                isinstance(last, ast.Name)
                and bool(self.built_locals)
                and last.id in self.built_locals[-1]
            )
        receiver = func.value
        if isinstance(receiver, ast.Name) and self.local_lists:
            lists = self.local_lists[-1]
            if receiver.id in lists:
                lists[receiver.id] = lists[receiver.id] and built
        elif is_self_attribute(receiver):
            owner = self._method_class()
            assert isinstance(receiver, ast.Attribute)
            if owner is not None and receiver.attr in owner.built_lists:
                owner.built_lists[receiver.attr] = owner.built_lists[receiver.attr] and built

    def record_list_loop(self, target: ast.expr, iterable: ast.expr) -> None:
        """`for block in self.blocks`, `for i, block in
        enumerate(self.blocks)`, `for fc, drop in zip(self.fcs, self.drops)`:
        each loop variable that takes the items of a `self` list."""
        if not self.function_stack:
            return
        pairs: list[tuple[ast.expr, ast.expr]] = [(target, iterable)]
        if isinstance(iterable, ast.Call) and dotted(iterable.func) in ("enumerate", "zip"):
            sources = list(iterable.args)
            targets = list(target.elts) if isinstance(target, ast.Tuple) else []
            if dotted(iterable.func) == "enumerate":
                sources = sources[:1]
                targets = targets[1:]
            same = len(targets) == len(sources)
            pairs = list(zip(targets, sources, strict=True)) if same else []
        info = self.function_stack[-1]
        found = info.loop_attributes if info.loop_attributes is not None else {}
        if self.built_locals:
            self.built_locals[-1].difference_update(
                node.id for node in ast.walk(target) if isinstance(node, ast.Name)
            )
        paired = {id(name) for name, _ in pairs}
        for node in ast.walk(target):
            if isinstance(node, ast.Name) and id(node) not in paired and node.id in found:
                found[node.id] = ""  # bound here to something else
        for name, source in pairs:
            if not isinstance(name, ast.Name):
                continue
            attr = source.attr if isinstance(source, ast.Attribute) else ""
            if not is_self_attribute(source) or found.get(name.id, attr) != attr:
                attr = ""  # a name that also takes other values
            found[name.id] = attr
        if found:
            info.loop_attributes = found
