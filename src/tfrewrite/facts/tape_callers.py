"""Functions whose result a gradient tape differentiates through a caller.

A helper that computes part of a loss (`def td_target(...)`: the
target-network values of a DQN step) opens no tape itself, yet it runs while
a caller's `with tf.GradientTape()` block is recording: everything it
computes is recorded, and gradients flow back through it into the caller's
loss. A host round trip there (`target_net(s).numpy()`) cut that flow, so
its rewrite must keep the cut with `tf.stop_gradient` exactly as one written
in the tape block itself.

The tape blocks come from `facts.training` (every function that opens a
tape, and the module level). A function is under a tape when a call of it is
written inside such a block, or inside a function already under a tape.
Calls are matched the way the rules resolve this file's functions: a plain
name to a function nested in the caller (or its enclosing functions) or a
top-level one, `self.name(...)` to a method of the caller's own class.
Callers in other files are not seen: their helpers keep the rule's default.

Over-approximating is harmless here: `tf.stop_gradient(x)` is what the host
round trip did to gradients, whether or not any flow; missing a caller
drops the cut.
"""

from __future__ import annotations

import weakref

import libcst as cst

from tfrewrite.facts.context import FunctionScope, RuleContext
from tfrewrite.facts.training import tape_blocks
from tfrewrite.facts.walk import iter_nodes

# Per file: qualname of each function under a tape -> why.
_CACHE: weakref.WeakKeyDictionary[RuleContext, dict[str, str]] = weakref.WeakKeyDictionary()


def under_tape(ctx: RuleContext, scope: FunctionScope) -> str | None:
    """Why what `scope` (or a function it is nested in) computes is recorded
    by a caller's gradient tape (a phrase), or None when no call in this file
    shows it."""
    reasons = _CACHE.get(ctx)
    if reasons is None:
        reasons = _CACHE[ctx] = _functions_under_tape(ctx)
    current: FunctionScope | None = scope
    while current is not None:
        reason = reasons.get(current.qualname)
        if reason is not None:
            return reason
        current = current.parent
    return None


def _functions_under_tape(ctx: RuleContext) -> dict[str, str]:
    reasons: dict[str, str] = {}
    pending: list[FunctionScope] = []

    def found(callee: FunctionScope, reason: str) -> None:
        if callee.qualname not in reasons:
            reasons[callee.qualname] = reason
            pending.append(callee)

    callers: list[tuple[FunctionScope | None, cst.CSTNode]] = [(None, ctx.module)]
    callers += [(function, function.node.body) for function in ctx.functions]
    for caller, root in callers:
        where = f" in `{caller.qualname}`" if caller is not None else ""
        for block, _ in tape_blocks(ctx, root):
            for callee in _callees(ctx, caller, block.body):
                found(callee, f"called inside a `tf.GradientTape` block{where}")
    while pending:
        caller = pending.pop()
        for callee in _callees(ctx, caller, caller.node.body):
            found(callee, f"called from `{caller.qualname}`, which runs under a gradient tape")
    return reasons


def _callees(
    ctx: RuleContext, caller: FunctionScope | None, root: cst.CSTNode
) -> list[FunctionScope]:
    """The functions of this file that calls under `root` (not in nested
    definitions) resolve to."""
    result: list[FunctionScope] = []
    for node in iter_nodes(root, into_functions=False):
        if isinstance(node, cst.Call):
            callee = _resolve(ctx, caller, node.func)
            if callee is not None:
                result.append(callee)
    return result


def _resolve(
    ctx: RuleContext, caller: FunctionScope | None, func: cst.BaseExpression
) -> FunctionScope | None:
    """`name` -> a function nested in `caller` or an enclosing function, else
    a top-level function; `self.name` -> a method of `caller`'s class."""
    if isinstance(func, cst.Name):
        if ctx.names.qualified_name(func) is not None:
            return None  # an imported name
        enclosing: FunctionScope | None = caller
        while enclosing is not None:
            for child in enclosing.children:
                if child.node.name.value == func.value:
                    return child
            enclosing = enclosing.parent
        return next(
            (
                f
                for f in ctx.functions
                if f.parent is None and not f.is_method and f.node.name.value == func.value
            ),
            None,
        )
    method = caller
    while method is not None and method.class_name is None:
        method = method.parent  # `self` of a function nested in a method is the method's
    if (
        isinstance(func, cst.Attribute)
        and isinstance(func.value, cst.Name)
        and func.value.value == "self"
        and method is not None
    ):
        return next(
            (
                f
                for f in ctx.functions
                if f.class_name == method.class_name and f.node.name.value == func.attr.value
            ),
            None,
        )
    return None
