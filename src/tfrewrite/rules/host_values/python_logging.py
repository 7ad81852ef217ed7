"""TFR205: Python `logging` of tensors in traced code."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from tfrewrite.facts.context import FunctionScope, RuleContext
from tfrewrite.facts.logging_calls import is_logging_call_node, logger_names
from tfrewrite.facts.walk import iter_with_ancestors
from tfrewrite.findings import Applicability
from tfrewrite.rewrite.fixes import Violation
from tfrewrite.rules.base import Invalid, Rule, Valid


class PythonLoggingInTracedCode(Rule):
    code = "TFR205"
    name = "python-logging-in-traced-code"
    summary = "Python `logging` of a tensor in traced code logs once, a symbolic tensor"
    fix_applicability = Applicability.NONE
    explanation = """
    ## What it does
    Finds calls to Python logging (`logging.info`, `absl.logging`, a logger
    from `logging.getLogger` or `tf.get_logger()`) in traced code whose
    arguments hold a tensor.

    ## Why is this bad?
    Python code in a `tf.function` runs while tracing: the message is logged
    once, on the first call, and shows `Tensor("...", shape=..., dtype=...)`
    instead of the value. Eagerly the same line logs every step with values,
    so the difference shows only in a real training run. A message with no
    tensor in it (a static note such as "tracing the step", or one of a
    tensor's static shape or dtype) is not reported.

    ## How to fix it
    Log outside the traced function, from the values it returns, or use
    `tf.print` (which runs on every call and prints values; its
    `output_stream` can be a file such as `sys.stderr`).

    ## Fix safety
    There is no automatic fix: `tf.print` does not go through the logging
    configuration (level, handlers, format), so a rewrite would change where
    and whether the message appears.
    """
    examples = (
        Valid(
            """
            import logging

            import tensorflow as tf

            class Block(tf.keras.layers.Layer):
                def call(self, net, training=None):
                    logging.info("block on inputs of shape {}".format(net.shape))
                    return net * 2.0
            """,
            note="a tensor's static shape is a Python value: the note is the same in every trace",
        ),
        Invalid(
            """
            import logging

            import tensorflow as tf

            @tf.function
            def train_step(x):
                loss = tf.reduce_mean(x)
                logging.info("loss %s", loss)
                return loss
            """
        ),
        Invalid(
            """
            import tensorflow as tf

            logger = tf.get_logger()

            @tf.function
            def train_step(x):
                loss = tf.reduce_mean(x)
                logger.info(f"loss {loss}")
                return loss
            """
        ),
        Valid(
            """
            import logging

            import tensorflow as tf

            @tf.function
            def train_step(x):
                logging.info("tracing train_step")
                return tf.reduce_mean(x)
            """,
            note="no tensor in the message: a deliberate trace-time note",
        ),
        Valid(
            """
            import logging

            import tensorflow as tf

            def report(loss):
                logging.info("loss %s", loss)
            """,
            note="not traced",
        ),
    )

    def check(self, ctx: RuleContext) -> Iterator[Violation]:
        loggers = logger_names(ctx)
        for function in ctx.traced_functions():
            yield from self._check(ctx, function, loggers)

    def _check(
        self, ctx: RuleContext, root: FunctionScope, loggers: set[str]
    ) -> Iterator[Violation]:
        for node, ancestors in iter_with_ancestors(root.node.body):
            if not isinstance(node, cst.Call) or not is_logging_call_node(ctx, node, loggers):
                continue
            scope = ctx.innermost_scope(root, ancestors)
            facts = ctx.tensors(scope).likely
            if not any(facts.involves_tensor(arg.value) for arg in node.args):
                continue
            yield Violation(
                node,
                f"`{ctx.code(node.func)}(...)` in traced `{scope.qualname}` runs once, while "
                "tracing, and logs a symbolic tensor, not its value; log outside the traced "
                "function or use `tf.print`",
            )


RULES = (PythonLoggingInTracedCode,)
