"""Where traced code runs: inside Keras, under a gradient tape, in a loss.

Rewrites ask three questions of the code around a node. Is it run by Keras
(a `Loss`/`Layer`/`Model` method, or a loss given to `compile`), where
`fit` may compile it with XLA? Does its trace see unknown dimensions (an
`input_signature`, `reduce_retracing=True`)? Is what it computes differentiated (inside a
`tf.GradientTape` block, in a loss, in a Keras layer's or model's forward
pass), so that a host round trip (`x.numpy()`) that cut the gradient must
become `tf.stop_gradient`?
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from tfrewrite.facts.bindings import positional_param_names
from tfrewrite.facts.context import FunctionScope, RuleContext
from tfrewrite.facts.index import TF_FUNCTION_NAMES

# Parameter pairs that make a function a loss by its signature.
LOSS_SIGNATURES = (("y_true", "y_pred"), ("labels", "logits"), ("labels", "predictions"))


def is_keras_class(ctx: RuleContext, qualname: str) -> bool:
    """Whether a class of this file derives from a Keras class (through classes
    of this file; bases from other files are not followed)."""
    return ctx.index.derives_from_keras(qualname)


def in_gradient_tape(ctx: RuleContext, ancestors: Sequence[cst.CSTNode]) -> bool:
    """Whether a node with these ancestors sits in a `with tf.GradientTape()` block."""
    for node in ancestors:
        if isinstance(node, cst.With):
            for item in node.items:
                call = item.item
                if (
                    isinstance(call, cst.Call)
                    and ctx.names.qualified_name(call.func) == "tensorflow.GradientTape"
                ):
                    return True
    return False


def differentiated(
    ctx: RuleContext, scope: FunctionScope, ancestors: Sequence[cst.CSTNode]
) -> str | None:
    """Why what a node computes is differentiated (a phrase), or None when
    nothing shows it is: a gradient tape around it, a loss, or the forward
    pass of a Keras layer or model, which `fit` runs under its tape."""
    if in_gradient_tape(ctx, ancestors):
        return "inside a `tf.GradientTape` block"
    current: FunctionScope | None = scope
    while current is not None:
        if current.traced is not None and current.traced.is_loss:
            return f"in `{current.node.name.value}`, a loss"
        params = positional_param_names(current.node)
        for pair in LOSS_SIGNATURES:
            if all(p in params for p in pair):
                return f"in `{current.node.name.value}`, a loss by its signature"
        if (
            current.class_name is not None
            and current.node.name.value in ("call", "train_step", "__call__")
            and is_keras_class(ctx, current.class_name)
        ):
            return f"in `{current.node.name.value}`, which Keras runs under its gradient tape"
        current = current.parent
    return None


def print_applicability(ctx: RuleContext, scope: FunctionScope) -> tuple[str | None, str | None]:
    """(reason not to fix, reason the fix is unsafe) for a `tf.print` in this
    code, from how it is traced: `tf.print` has no XLA kernel, so under
    `jit_compile=True` it cannot run, and where Keras may compile with XLA
    (`jit_compile="auto"` on a GPU) the rewrite is unsafe."""
    plain_tf_function = False
    current: FunctionScope | None = scope
    compiled_by_keras = False
    while current is not None:
        info = ctx.index.functions.get(current.qualname)
        if info is not None:
            for decorator in info.decorators:
                if decorator not in TF_FUNCTION_NAMES:
                    continue
                jit = info.decorator_keywords.get(decorator, {}).get("jit_compile")
                if jit not in (None, "False", "None"):
                    return (
                        "`tf.print` has no XLA kernel and this function is compiled with "
                        f"`jit_compile={jit}` (remove the print, or trace without XLA)",
                        None,
                    )
                plain_tf_function = True
        traced = current.traced
        if traced is not None and traced.jit_compile not in (None, "False", "None"):
            # Its own decorator is gone: the step it moved to compiles it.
            return (
                "`tf.print` has no XLA kernel and this function runs in a step compiled with "
                f"`jit_compile={traced.jit_compile}` (remove the print, or trace without XLA)",
                None,
            )
        if traced is not None and traced.keras_traces:
            compiled_by_keras = True
        if current.class_name is not None and is_keras_class(ctx, current.class_name):
            compiled_by_keras = True  # a Keras method, even decorated, runs inside `fit`
        current = current.parent
    if plain_tf_function and not compiled_by_keras:
        return None, None
    return None, (
        'Keras may compile this code with XLA (`jit_compile="auto"` on a GPU), '
        "where `tf.print` has no kernel"
    )


def dynamic_shapes(scope: FunctionScope) -> bool:
    """Whether a function around the print is traced by a `tf.function`
    with an `input_signature` or `reduce_retracing=True`
    (`TracedFunction.relaxed_shapes`), so a static dimension may be `None`."""
    current: FunctionScope | None = scope
    while current is not None:
        traced = current.runs_traced
        if traced is not None and traced.relaxed_shapes:
            return True
        current = current.parent
    return False
