"""TFR108: Python iteration over a tensor (unpacking, `zip`, `list`) in traced code."""

from __future__ import annotations

from collections.abc import Iterator

from tfrewrite.facts.context import RuleContext
from tfrewrite.facts.tensor_iteration import tensor_iteration_sites
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

    ## Why is this bad?
    Eagerly a tensor is iterable, so the code runs. Traced, Python cannot
    iterate over a symbolic tensor: the function raises
    `OperatorNotAllowedInGraphError: Iterating over a symbolic tf.Tensor is
    not allowed` on its first trace (measured on TensorFlow 2.21).
    AutoGraph converts a `for` loop over a tensor, not the iteration inside
    an unpacking or a builtin, and Keras 3 traces a layer's `call` without
    AutoGraph at all.

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
            if function.runs_traced is None:
                continue
            for site in tensor_iteration_sites(ctx, function):
                yield Violation(
                    site.node,
                    f"iterating over the tensor `{ctx.code(site.tensor)}` in Python with "
                    f"{site.how} raises when traced: Python cannot iterate over a symbolic "
                    "`tf.Tensor`, and AutoGraph does not convert this; index it or use "
                    "`tf.unstack`",
                )


RULES = (TensorIterationInTracedCode,)
