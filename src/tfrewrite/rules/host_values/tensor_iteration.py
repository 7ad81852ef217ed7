"""TFR108: Python iteration over a tensor (unpacking, `zip`, `list`) in traced code."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from tfrewrite.facts.context import FunctionScope, RuleContext
from tfrewrite.facts.tensor_iteration import (
    autograph_loops,
    some_path_tensor_loops,
    tensor_iteration_sites,
)
from tfrewrite.findings import Applicability
from tfrewrite.rewrite.fixes import Violation
from tfrewrite.rules.base import Invalid, Rule, Valid


class TensorIterationInTracedCode(Rule):
    code = "TFR108"
    name = "tensor-iteration-in-traced-code"
    summary = "Python iteration over a tensor (unpacking, `zip`, `list`) in traced code raises"
    fix_applicability = Applicability.NONE
    explanation = """
    ## What it does
    Finds traced code that iterates over one tensor in Python: an unpacking
    assignment (`batch, steps, *_ = tf.shape(x)`), or a tensor handed to
    `zip`, `enumerate`, `list`, `tuple`, `map`, `sorted` or `reversed`
    (`zip(grads, variables)` where `grads` became one stacked tensor). A
    value counts as one tensor when it is the result of a TensorFlow op that
    returns one (`tf.shape`, `tf.stack`, `tf.math.l2_normalize`, ...), an
    item or slice of one, arithmetic on one, or a name last bound to one.

    A `for` loop over a tensor is reported in code Keras traces (a layer's
    or model's `call`, a `train_step`, a loss given to `compile` or a
    `Loss.call`): the loop's iterable is an op's result, a helper's tensor
    result or a name bound to one, not a parameter (Keras hands `call` what
    its caller gave, a list of inputs as often as one tensor). Elsewhere,
    as in a `@tf.function`, AutoGraph converts such a loop into a
    `tf.while_loop`: it is reported as needing AutoGraph, as TFR101 reports
    a `while` on a tensor, and so is a `for` over Python's `range` of a
    tensor bound (`range(tf.shape(x)[0])`); a loop over `tf.range(...)`,
    AutoGraph's documented idiom for a graph loop, is left alone. In code
    Keras traces, a loop over a name that is a tensor on some paths to it
    and a Python value on others (`steps = range(n)` when the length is
    static, `tf.range(...)` when it is not) is reported too: the traces
    taking the first path raise.

    ## Why is this bad?
    Eagerly a tensor is iterable, so the code runs. Traced, Python cannot
    iterate over a symbolic tensor: the function raises
    `OperatorNotAllowedInGraphError: Iterating over a symbolic tf.Tensor is
    not allowed` on its first trace (measured on TensorFlow 2.21).
    AutoGraph converts a `for` loop over a tensor, not the iteration inside
    an unpacking or a builtin, and Keras 3 traces a layer's `call` (and a
    `train_step`, a compiled loss) without AutoGraph at all: there a `for`
    over a tensor raises in `fit` too, and in a `tf.function` of the
    project that calls the layer, since AutoGraph does not convert through
    Keras' `__call__` (measured with Keras 3.15 on TensorFlow 2.21; Keras 2
    converted `call`). Only the layer's own `@tf.function` on `call`
    converts it (which TFR308 asks to remove).

    ## How to fix it
    Index the tensor (`shape = tf.shape(x); batch, steps = shape[0],
    shape[1]`), split it into a list (`tf.unstack(t)`), or keep the Python
    list the tensor was made from.

    ## Fix safety
    There is no automatic fix: how many items the code expects is known only
    to its author (a starred target takes the rest).
    """
    examples = (
        Invalid(
            """
            import tensorflow as tf

            @tf.function
            def mask(inputs):
                batch, steps, *_ = tf.shape(inputs)
                return tf.ones((batch, steps), tf.bool)
            """
        ),
        Invalid(
            """
            import tensorflow as tf

            @tf.function
            def normalized(grads, variables):
                unit = tf.math.l2_normalize(tf.stack(grads))
                return [g * v for g, v in zip(unit, variables)]
            """,
            note="`unit` is one stacked tensor, not a list of gradients",
        ),
        Valid(
            """
            import tensorflow as tf

            @tf.function
            def mask(inputs):
                shape = tf.shape(inputs)
                return tf.ones((shape[0], shape[1]), tf.bool)
            """,
            note="indexing a tensor needs no Python iteration",
        ),
        Valid(
            """
            import tensorflow as tf

            @tf.function
            def halves(x):
                left, right = tf.split(x, 2)
                return left - right
            """,
            note="`tf.split` returns a Python list of tensors",
        ),
        Valid(
            """
            import tensorflow as tf

            def mask(inputs):
                batch, steps, *_ = tf.shape(inputs)
                return tf.ones((batch, steps), tf.bool)
            """,
            note="not traced: eagerly a tensor is iterable",
        ),
    )

    def check(self, ctx: RuleContext) -> Iterator[Violation]:
        for function in ctx.functions:
            traced = function.runs_traced
            if traced is None:
                continue
            keras = traced.keras_traces
            for loop, bound in autograph_loops(ctx, function, with_tf_range=keras):
                message = _loop_message(ctx, function, loop, bound, keras)
                yield Violation(loop.iter, message, autograph_converts=not keras)
            if keras:
                for loop in some_path_tensor_loops(ctx, function):
                    code = ctx.code(loop.iter)
                    what = f"`for` over `{code}`, a tensor on some paths to the loop,"
                    yield Violation(loop.iter, _loop_message(ctx, function, loop, None, True, what))
            for site in tensor_iteration_sites(ctx, function):
                yield Violation(
                    site.node,
                    f"iterating over the tensor `{ctx.code(site.tensor)}` in Python with "
                    f"{site.how} raises when traced: Python cannot iterate over a symbolic "
                    "`tf.Tensor`, and AutoGraph does not convert this; index it or use "
                    "`tf.unstack`",
                )


def _loop_message(
    ctx: RuleContext,
    function: FunctionScope,
    loop: cst.For,
    bound: cst.BaseExpression | None,
    keras: bool,
    what: str | None = None,
) -> str:
    """What is wrong with a `for` that needs AutoGraph: over a tensor, or
    over `range` of a tensor `bound`; in code Keras traces (`keras`), which
    Keras 3 runs without AutoGraph, or in code AutoGraph converts. `what`
    names the loop when the tensor is one only on some paths to it."""
    code = ctx.code(loop.iter)
    if keras:
        what = what or (
            f"`for` over the tensor `{code}`"
            if bound is None
            else (f"`for` over `{code}`, whose bound `{ctx.code(bound)}` is a tensor,")
        )
        return (
            f"{what} in `{function.qualname}`, which Keras traces: Keras 3 (TensorFlow "
            "2.16+) runs it without AutoGraph wherever it is traced (in `fit`, or in a "
            "`tf.function` that calls the layer), and Python cannot iterate over a symbolic "
            "`tf.Tensor` (`OperatorNotAllowedInGraphError`); loop with "
            "`tf.while_loop` or `tf.map_fn`, or over a Python list"
        )
    if bound is not None:
        return (
            f"`for` over `{code}`, whose bound `{ctx.code(bound)}` is a tensor, needs "
            "AutoGraph: traced, only AutoGraph turns it into a `tf.range` loop; without it "
            "(`autograph=False`, a Keras 3 `call`) Python's `range` cannot take a symbolic "
            "`tf.Tensor`. Loop over `tf.range(...)`"
        )
    return (
        f"`for` over `{code}`, a tensor, needs AutoGraph: traced, only AutoGraph turns it "
        "into a `tf.while_loop`; without it (`autograph=False`, a Keras 3 `call`) Python "
        "cannot iterate over a symbolic `tf.Tensor`. Loop with `tf.while_loop` or "
        "`tf.map_fn`, or compute it without a loop"
    )


RULES = (TensorIterationInTracedCode,)
