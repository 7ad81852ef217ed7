"""Whether traced code runs with AutoGraph: a fact about a function's traced
context that rewrites ask before relying on AutoGraph to convert Python
control flow (a `tf.cond` written out is needed where it does not run).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tfrewrite.facts.traced_function import COMPILE_CONTEXT

if TYPE_CHECKING:
    from tfrewrite.facts.context import FunctionScope, RuleContext


def autograph_off(ctx: RuleContext, function: FunctionScope) -> str | None:
    """Why the traced code around `function` runs without AutoGraph, or None
    when AutoGraph may apply: `@tf.function(autograph=False)`, or a loss given
    to Keras `compile` (Keras 3 traces its train step without AutoGraph)."""
    outer: FunctionScope | None = function
    while outer is not None:
        traced = outer.traced
        if traced is not None and not traced.reason.startswith(("called from", "nested in")):
            info = ctx.index.functions.get(outer.qualname)
            if info is not None:
                for keywords in info.decorator_keywords.values():
                    if keywords.get("autograph", "").strip() == "False":
                        return f"`{outer.node.name.value}` is traced with `autograph=False`"
            # Any context: a compiled loss whose own decorator a fix removes
            # runs in `fit`'s step alone.
            if any(c.startswith(COMPILE_CONTEXT) for c in traced.contexts):
                return (
                    f"Keras traces `{outer.node.name.value}`, a loss given to `compile`, "
                    "without AutoGraph"
                )
            return None
        outer = outer.parent
    return None
