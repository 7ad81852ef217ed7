"""The calls of plain names in a module (`evaluate(model, val_ds)`), by
name, with the function each is in: the call sites a fact about one of the
file's functions reads its arguments at (the datasets a loop's parameter is
handed, the variables a step is given), worked out once per module."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from tfrewrite.facts.walk import child_nodes

if TYPE_CHECKING:
    from tfrewrite.facts.context import RuleContext

# A plain-name call, and the function it is in (None at module level).
NamedCall = tuple[cst.Call, cst.FunctionDef | None]


def calls_by_name(ctx: RuleContext) -> dict[str, list[NamedCall]]:
    """Every call of a plain name in the module (`evaluate(model, val_ds)`),
    by that name, with the function it is in: the call sites a fact about a
    function of the file reads its arguments at, worked out once per module."""
    return ctx.module_fact(calls_by_name, _calls_by_name)


def _calls_by_name(module: cst.Module) -> dict[str, list[NamedCall]]:
    found: dict[str, list[NamedCall]] = {}
    stack: list[tuple[cst.CSTNode, cst.FunctionDef | None]] = [(module, None)]
    while stack:
        node, function = stack.pop()
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name):
            found.setdefault(node.func.value, []).append((node, function))
        inner = node if isinstance(node, cst.FunctionDef) else function
        stack.extend((child, inner) for child in child_nodes(node))
    return found
