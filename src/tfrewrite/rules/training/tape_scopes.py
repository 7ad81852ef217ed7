"""Where the training rules look for tapes (TFR304, TFR305): the module and
each function as a scope, and the tapes a `with` block opens."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from tfrewrite.facts.context import RuleContext
from tfrewrite.facts.training import tape_name


def scopes(ctx: RuleContext) -> Iterator[tuple[cst.CSTNode, bool, str | None]]:
    """(scope root, whether it is a method, the class whose `self` it sees)
    for the module and every function."""
    yield ctx.module, False, None
    for function in ctx.functions:
        owner = ctx.class_of(function)
        yield function.node, function.is_method, owner[0] if owner is not None else None


def scope_body(root: cst.CSTNode) -> cst.CSTNode:
    """What to walk for a scope: the module itself, or a function's body."""
    return root if isinstance(root, cst.Module) else root.body  # type: ignore[attr-defined]


def opened_tapes(ctx: RuleContext, node: cst.With, known: dict[str, cst.With]) -> set[str]:
    """Tapes a `with` opens: `with tf.GradientTape() as tape:`, or `with tape:`
    re-entering a persistent tape opened before."""
    names = set()
    name = tape_name(ctx, node)
    if name:
        names.add(name)
    for item in node.items:
        if isinstance(item.item, cst.Name) and item.item.value in known:
            names.add(item.item.value)
    return names
