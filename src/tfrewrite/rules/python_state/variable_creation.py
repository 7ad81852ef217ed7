"""TFR204: a `tf.Variable`, metric or optimizer created in traced code."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import libcst as cst

from tfrewrite.facts.context import FunctionScope, RuleContext
from tfrewrite.facts.vocabulary import SETUP_METHODS, creates_variables
from tfrewrite.facts.walk import iter_with_ancestors
from tfrewrite.findings import Applicability
from tfrewrite.rewrite.fixes import Violation
from tfrewrite.rules.base import Invalid, Rule, Valid


def _guarded(ancestors: Sequence[cst.CSTNode], ctx: RuleContext) -> bool:
    """Inside `if self.v is None:` / `if not self.built:` (created once, the
    documented singleton pattern) or `with tf.init_scope():`."""
    for ancestor in ancestors:
        if isinstance(ancestor, cst.If):
            for node, _ in iter_with_ancestors(ancestor.test):
                if isinstance(node, cst.ComparisonTarget) and isinstance(
                    node.operator, (cst.Is, cst.IsNot)
                ):
                    return True
                if isinstance(node, cst.Name) and "built" in node.value:
                    return True
                if isinstance(node, cst.Attribute) and "built" in node.attr.value:
                    return True
        if isinstance(ancestor, cst.With):
            for item in ancestor.items:
                expr = item.item.func if isinstance(item.item, cst.Call) else item.item
                if (ctx.names.qualified_name(expr) or "").endswith("init_scope"):
                    return True
    return False


class VariableCreatedInTracedCode(Rule):
    code = "TFR204"
    name = "variable-created-in-traced-code"
    summary = "A `tf.Variable`, metric or optimizer created in traced code raises on the next trace"
    fix_applicability = Applicability.NONE
    explanation = """
    ## What it does
    Finds traced code that creates a `tf.Variable`, a Keras metric object or
    a Keras optimizer on every call: `tf.Variable(0.0)` in a
    `@tf.function`, `tf.keras.metrics.Mean()` in a train step, a fresh
    optimizer per fold inside the step.

    ## Why is this bad?
    Eagerly, each call gets a fresh object and the code works. A
    `tf.function` lifts variables out of the graph and allows them only on
    the first trace: creating them again raises `ValueError: tf.function
    only supports singleton tf.Variables created on the first call`
    (measured on TensorFlow 2.21). A metric or optimizer creates variables
    when it is built, so the same error appears, or its state silently
    restarts on every call.

    Creation guarded so that it runs once (`if self.v is None:`, `if not
    self.built:`, `with tf.init_scope():`) and creation in `__init__` or
    `build` are not reported. An undecorated train step that TFR302 will
    decorate is checked too: the error would appear once it is decorated.

    ## How to fix it
    Create the object once, outside the traced function (in `__init__`,
    `build`, or where the model is built) and update it inside with
    `assign`, `update_state` or `apply_gradients`.

    ## Fix safety
    There is no automatic fix: where the object belongs depends on its
    lifetime.
    """
    examples = (
        Invalid(
            """
            import tensorflow as tf

            @tf.function
            def count(x):
                total = tf.Variable(0.0)
                total.assign_add(tf.reduce_sum(x))
                return total.read_value()
            """
        ),
        Invalid(
            """
            import tensorflow as tf

            @tf.function
            def evaluate(model, x, y):
                accuracy = tf.keras.metrics.SparseCategoricalAccuracy()
                accuracy.update_state(y, model(x))
                return accuracy.result()
            """
        ),
        Valid(
            """
            import tensorflow as tf

            class Counter(tf.Module):
                def __init__(self):
                    self.total = None

                @tf.function
                def __call__(self, x):
                    if self.total is None:
                        self.total = tf.Variable(0.0)
                    self.total.assign_add(tf.reduce_sum(x))
                    return self.total.read_value()
            """,
            note="created once: the documented singleton pattern",
        ),
        Valid(
            """
            import tensorflow as tf

            class Scale(tf.keras.layers.Layer):
                def build(self, input_shape):
                    self.scale = self.add_weight(shape=(), initializer="ones")

                def call(self, inputs):
                    return inputs * self.scale
            """,
            note="weights belong in `build`",
        ),
        Valid(
            """
            import tensorflow as tf

            accuracy = tf.keras.metrics.SparseCategoricalAccuracy()

            @tf.function
            def evaluate(model, x, y):
                accuracy.update_state(y, model(x))
                return accuracy.result()
            """,
            note="the metric is created once, outside",
        ),
    )

    def check(self, ctx: RuleContext) -> Iterator[Violation]:
        for function in ctx.traced_functions():
            yield from self._check(ctx, function)

    def _check(self, ctx: RuleContext, root: FunctionScope) -> Iterator[Violation]:
        for node, ancestors in iter_with_ancestors(root.node.body):
            if not isinstance(node, cst.Call):
                continue
            what = creates_variables(ctx.names.qualified_name(node.func))
            if what is None:
                continue
            scope = ctx.innermost_scope(root, ancestors)
            if scope.node.name.value in SETUP_METHODS or _guarded(ancestors, ctx):
                continue
            if any(isinstance(a, cst.Lambda) for a in ancestors):
                continue
            traced = scope.runs_traced or root.runs_traced
            when = (
                "once it is decorated (TFR302), " if traced is not None and traced.pending else ""
            )
            yield Violation(
                node,
                f"{what} is created on every call of traced `{scope.qualname}`: {when}tracing "
                'allows variables only on the first call and raises "tf.function only supports '
                'singleton tf.Variables created on the first call"; create it once outside '
                "(in `__init__`, `build`, or next to the model) and update it inside",
            )


RULES = (VariableCreatedInTracedCode,)
