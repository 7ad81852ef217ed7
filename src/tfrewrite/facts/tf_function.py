"""`@tf.function` on LibCST nodes: whether an expression is `tf.function`
(any spelling pass 1 knows, `index.TF_FUNCTION_NAMES`), a function's
decorator, and the decorator source a step takes over from its loss. A leaf
of the fact model.
"""

from __future__ import annotations

import libcst as cst

from tfrewrite.facts.context import RuleContext
from tfrewrite.facts.index_calls import TF_FUNCTION_NAMES

# Options of a loss's `tf.function` that describe how the whole step should be
# compiled; a step that takes over the decorator takes these over too.
CARRIED_OPTIONS = ("jit_compile", "reduce_retracing")


def is_tf_function(ctx: RuleContext, expr: cst.BaseExpression) -> bool:
    """`tf.function`, `tensorflow.function`, `from tensorflow import function`."""
    return ctx.names.qualified_name(expr) in TF_FUNCTION_NAMES


def has_input_signature(decorator: cst.Decorator) -> bool:
    """`@tf.function(input_signature=...)`: a signature fixed for export."""
    expr = decorator.decorator
    return isinstance(expr, cst.Call) and any(
        a.keyword is not None and a.keyword.value == "input_signature" for a in expr.args
    )


def tf_function_decorator(ctx: RuleContext, node: cst.FunctionDef) -> cst.Decorator | None:
    for decorator in node.decorators:
        expr = decorator.decorator
        target = expr.func if isinstance(expr, cst.Call) else expr
        if is_tf_function(ctx, target):
            return decorator
    return None


def carried_options(keywords: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in keywords.items() if k in CARRIED_OPTIONS}


def decorator_source(alias: str, options: dict[str, str]) -> str:
    """`tf.function` or `tf.function(jit_compile=True, reduce_retracing=True)`."""
    if not options:
        return f"{alias}.function"
    arguments = ", ".join(f"{k}={v}" for k, v in options.items())
    return f"{alias}.function({arguments})"


def make_decorator(alias: str, options: dict[str, str]) -> cst.Decorator:
    return cst.Decorator(decorator=cst.parse_expression(decorator_source(alias, options)))
