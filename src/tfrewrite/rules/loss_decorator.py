"""TFR301: `@tf.function` on a loss instead of on the train step."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from tfrewrite.analysis.index import ModuleIndex
from tfrewrite.analysis.names import dotted_name
from tfrewrite.analysis.walk import iter_nodes, iter_statement_lines
from tfrewrite.context import FunctionScope, RuleContext
from tfrewrite.findings import Applicability
from tfrewrite.rules._training import (
    StepPlan,
    decorated_step,
    is_tf_function,
    remove_statement_edits,
    tf_function_decorator,
    undecorated_train_steps,
)
from tfrewrite.rules.base import CstFix, Invalid, NodeEdit, Rule, Valid, Violation


def _loss_names(ctx: RuleContext) -> set[str]:
    """Dotted names this file uses as losses: differentiated in a tape,
    given to `compile(loss=...)`, or known project-wide as losses."""
    names = {t.callee for t in ctx.index.tape_losses}
    names.update(
        s.target for s in ctx.index.traced_sites if s.reason.startswith("given to compile(loss")
    )
    for function in ctx.functions:
        if function.traced is not None and function.traced.is_loss:
            names.add(ctx.index.qualify(function.qualname))
    return names


def _reference_names(ctx: RuleContext, expr: cst.BaseExpression) -> set[str]:
    """The dotted names pass 1 would give `expr` (imported or module-level)."""
    names = set()
    qualified = ctx.names.qualified_name(expr)
    if qualified:
        names.add(qualified)
    local = dotted_name(expr)
    if local:
        names.update({local, ctx.index.qualify(local)})
    return names


class LossDecorator(Rule):
    code = "TFR301"
    name = "tf-function-on-loss"
    summary = "`@tf.function` on a loss: the speed-up belongs on the train step"
    fix_applicability = Applicability.SAFE
    needs_traced_code = False
    explanation = """
        A loss is a function given to `compile(loss=...)`, the `call` of a
        `keras.losses.Loss` subclass, or a function called on `(labels,
        predictions)` inside a `tf.GradientTape` block whose result is
        differentiated. Decorating it with `@tf.function` (or wrapping it,
        `loss = tf.function(loss)`) compiles only the loss: the model's forward
        pass, the gradient and the optimizer update still run eagerly, op by op,
        and every step crosses one more graph boundary. A small custom loop ran
        about 10x faster with the decorator on the step instead.

        The fix removes the decorator. When an undecorated train step in the same
        file differentiates this loss, the fix moves the decorator onto the step,
        keeping `jit_compile` and `reduce_retracing` (TFR302 does the same for a
        step in another file). Losses given to `compile` need nothing: Keras
        traces them inside `fit`.
    """
    examples = (
        Invalid(
            """
            import tensorflow as tf

            @tf.function(jit_compile=True)
            def loss_fn(labels, logits):
                return tf.reduce_mean(tf.square(labels - logits))

            def train_step(model, optimizer, x, y):
                with tf.GradientTape() as tape:
                    loss = loss_fn(y, model(x, training=True))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
                return loss

            def fit(model, optimizer, batches):
                for x, y in batches:
                    train_step(model, optimizer, x, y)
            """,
            """
            import tensorflow as tf

            def loss_fn(labels, logits):
                return tf.reduce_mean(tf.square(labels - logits))

            @tf.function(jit_compile=True)
            def train_step(model, optimizer, x, y):
                with tf.GradientTape() as tape:
                    loss = loss_fn(y, model(x, training=True))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
                return loss

            def fit(model, optimizer, batches):
                for x, y in batches:
                    train_step(model, optimizer, x, y)
            """,
            note="the decorator moves to the step, with its options",
        ),
        Invalid(
            """
            import keras
            from tensorflow import function

            def dice(y_true, y_pred):
                return 1.0 - 2.0 * keras.ops.sum(y_true * y_pred) / keras.ops.sum(y_true + y_pred)

            dice = function(dice)

            model = keras.Sequential([keras.layers.Dense(1)])
            model.compile(optimizer="adam", loss=dice)
            """,
            """
            import keras

            def dice(y_true, y_pred):
                return 1.0 - 2.0 * keras.ops.sum(y_true * y_pred) / keras.ops.sum(y_true + y_pred)

            model = keras.Sequential([keras.layers.Dense(1)])
            model.compile(optimizer="adam", loss=dice)
            """,
            note="a wrapped loss given to compile: Keras traces it already",
        ),
        Invalid(
            """
            import tensorflow as tf

            class Focal(tf.keras.losses.Loss):
                @tf.function
                def call(self, y_true, y_pred):
                    return tf.reduce_mean(tf.abs(y_true - y_pred))
            """,
            """
            import tensorflow as tf

            class Focal(tf.keras.losses.Loss):
                def call(self, y_true, y_pred):
                    return tf.reduce_mean(tf.abs(y_true - y_pred))
            """,
        ),
        Valid(
            """
            import tensorflow as tf

            def loss_fn(labels, logits):
                return tf.reduce_mean(tf.square(labels - logits))

            @tf.function
            def train_step(model, optimizer, x, y):
                with tf.GradientTape() as tape:
                    loss = loss_fn(y, model(x, training=True))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
                return loss
            """,
            note="the decorator is already on the step",
        ),
        Valid(
            """
            import tensorflow as tf

            @tf.function
            def normalize(images):
                return images / 255.0
            """,
            note="not a loss",
        ),
    )

    def applies_to(self, index: ModuleIndex, traced_qualnames: set[str]) -> bool:
        return any(
            s.reason.startswith("wrapped in tf.function") for s in index.traced_sites
        ) or any(
            d.endswith(".function") for info in index.functions.values() for d in info.decorators
        )

    def check(self, ctx: RuleContext) -> Iterator[Violation]:
        steps = [p for p in undecorated_train_steps(ctx) if p.refusal is None]
        for function in ctx.functions:
            decorator = tf_function_decorator(ctx, function.node)
            if decorator is None or function.traced is None or not function.traced.is_loss:
                continue
            yield self._decorated(ctx, function, decorator, steps)
        if not any(s.reason.startswith("wrapped in tf.function") for s in ctx.index.traced_sites):
            return
        losses = _loss_names(ctx)
        for line, block in iter_statement_lines(ctx.module):
            yield from self._wrapped(ctx, line, block, losses)

    def _decorated(
        self,
        ctx: RuleContext,
        function: FunctionScope,
        decorator: cst.Decorator,
        steps: list[StepPlan],
    ) -> Violation:
        name = function.node.name.value
        keys = {name, ctx.index.qualify(function.qualname)}
        callers = [p for p in steps if keys & set(p.loss_callees)]
        edits = [NodeEdit(decorator, cst.RemovalSentinel.REMOVE)]
        imports: tuple = ()
        if callers:
            for plan in callers:
                new_step, imports = decorated_step(ctx, plan)
                edits.append(NodeEdit(plan.function.node, new_step))
            where = ", ".join(f"`{p.function.node.name.value}`" for p in callers)
            message = f"Move `@tf.function` from the loss `{name}` to the train step {where}"
        else:
            message = f"Remove `@tf.function` from the loss `{name}`"
        return Violation(
            decorator,
            f"`@tf.function` on the loss `{name}` compiles only the loss; the forward pass, "
            "gradients and update still run eagerly. Decorate the train step instead",
            CstFix(message, tuple(edits), imports),
        )

    def _wrapped(
        self,
        ctx: RuleContext,
        line: cst.SimpleStatementLine,
        block: cst.CSTNode,
        losses: set[str],
    ) -> Iterator[Violation]:
        for small in line.body:
            for node in iter_nodes(small):
                if not (
                    isinstance(node, cst.Call) and is_tf_function(ctx, node.func) and node.args
                ):
                    continue
                wrapped = node.args[0].value
                names = _reference_names(ctx, wrapped)
                rebinding = (
                    isinstance(small, cst.Assign)
                    and small.value is node
                    and len(small.targets) == 1
                    and ctx.code(small.targets[0].target) == ctx.code(wrapped)
                )
                if isinstance(small, cst.Assign) and small.value is node:
                    for target in small.targets:
                        names |= _reference_names(ctx, target.target)
                if not names & losses:
                    continue
                label = ctx.code(wrapped)
                if rebinding and len(line.body) == 1:
                    edits = remove_statement_edits(block, line)
                elif rebinding:
                    edits = (NodeEdit(small, cst.RemovalSentinel.REMOVE),)
                else:
                    edits = (NodeEdit(node, wrapped),)
                yield Violation(
                    node,
                    f"`tf.function` wraps the loss `{label}`: only the loss is compiled, and each "
                    "call crosses a graph boundary. Decorate the train step instead",
                    CstFix(f"Unwrap the loss `{label}`", edits),
                )


RULES = (LossDecorator,)
