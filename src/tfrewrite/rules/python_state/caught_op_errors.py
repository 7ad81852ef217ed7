"""TFR207: `except tf.errors.*` around ops in traced code, which never catches."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from tfrewrite.facts.block_exits import always_exits, block_statements
from tfrewrite.facts.context import FunctionScope, RuleContext
from tfrewrite.facts.walk import iter_nodes
from tfrewrite.findings import Applicability
from tfrewrite.rewrite.fixes import Violation
from tfrewrite.rules.base import Invalid, Rule, Valid

# Where TensorFlow defines the errors its ops raise when they run
# (`tf.errors.InvalidArgumentError` and the other `OpError`s).
_ERROR_MODULES = ("tensorflow.errors.", "tensorflow.python.framework.errors_impl.")


class CaughtOpErrorInTracedCode(Rule):
    code = "TFR207"
    name = "caught-op-error-in-traced-code"
    summary = (
        "`except tf.errors.*` in traced code never catches: the op raises when the graph "
        "runs, after tracing"
    )
    fix_applicability = Applicability.NONE
    # The page's `## Example` is the first `Invalid` example below (and its
    # `after`, once there is a fix): the explanation holds no example.
    explanation = """
    ## What it does
    Finds a `try` in traced code with an `except` clause for an error
    TensorFlow's ops raise when they run: `tf.errors.InvalidArgumentError`,
    `OutOfRangeError`, `ResourceExhaustedError`, `OpError` and the others
    of `tf.errors` (also named through `errors_impl`, or in a tuple of
    exception types).

    A handler that raises again on every path (a clearer message for the
    same failure) is left alone: traced, the op's own error is raised
    instead, and the call fails either way.

    ## Why is this bad?
    Eagerly each op runs where it is called, so its error is raised inside
    the `try` and the handler runs: an index out of range falls back to a
    default, a failed `tf.debugging.assert_*` takes the other path. Traced,
    the `try` runs once, while the graph is built, and builds the ops
    without running them; when the graph runs, the op's error is raised
    from the call of the traced function, outside any handler, and the
    step fails. Measured on TensorFlow 2.21: `tf.gather(x, 10)` of a
    three-element `x` inside `try`/`except tf.errors.InvalidArgumentError`
    returns the fallback eagerly and raises `InvalidArgumentError` from the
    `tf.function`, with and without AutoGraph (AutoGraph does not convert
    `try`). A `next()` on a dataset iterator that runs out raises
    `OutOfRangeError` the same way.

    ## How to fix it
    Test the condition with TensorFlow ops instead of catching the error
    (`tf.where(i < tf.shape(x)[0], ...)`, `tf.clip_by_value` on the index,
    `iterator.get_next_as_optional()`), or catch the error around the call
    of the traced function, in eager code.

    ## Fix safety
    There is no automatic fix: what the handler's fallback means, and which
    condition stands for the error, only the author knows.
    """
    examples = (
        Invalid(
            """
            import tensorflow as tf

            @tf.function
            def pick(x, i):
                try:
                    return tf.gather(x, i)
                except tf.errors.InvalidArgumentError:
                    return tf.zeros_like(x[0])
            """,
        ),
        Valid(
            """
            import tensorflow as tf

            @tf.function
            def pick(x, i):
                inside = i < tf.shape(x)[0]
                return tf.where(inside, tf.gather(x, tf.minimum(i, tf.shape(x)[0] - 1)), 0.0)
            """,
            note="the condition tested with TensorFlow ops",
        ),
        Valid(
            """
            import tensorflow as tf

            def pick(x, i):
                try:
                    return tf.gather(x, i)
                except tf.errors.InvalidArgumentError:
                    return tf.zeros_like(x[0])
            """,
            note="not traced: eagerly the op raises inside the `try`",
        ),
        Valid(
            """
            import tensorflow as tf

            @tf.function
            def load(path):
                try:
                    return tf.io.read_file(path)
                except ValueError:
                    return tf.constant("")
            """,
            note="a Python error, raised (or not) while tracing: not an op's error",
        ),
    )

    def check(self, ctx: RuleContext) -> Iterator[Violation]:
        for function in ctx.functions:
            if function.runs_traced is not None:
                yield from _caught_op_errors(ctx, function)


def _caught_op_errors(ctx: RuleContext, function: FunctionScope) -> Iterator[Violation]:
    """Each `except` clause of the function's own code (not its nested
    functions') that names an error TensorFlow's ops raise."""
    for node in iter_nodes(function.node.body, into_functions=False):
        if not isinstance(node, (cst.Try, cst.TryStar)):
            continue
        for handler in node.handlers:
            caught = _op_errors(ctx, handler.type)
            if not caught or always_exits(block_statements(handler.body), (cst.Raise,)):
                continue  # one that raises again changes only which error is seen
            listed = ", ".join(caught)
            yield Violation(
                handler,
                f"`except {listed}` in traced `{function.qualname}` never catches: traced, "
                "the `try` only builds the ops, and their error is raised when the graph "
                "runs, from the call of the traced function (eagerly it is raised here); "
                "test the condition with TensorFlow ops, or catch the error around the call "
                "in eager code",
            )


def _op_errors(ctx: RuleContext, caught: cst.BaseExpression | None) -> list[str]:
    """The exception types of an `except` clause (one, or a tuple of them)
    that are errors TensorFlow's ops raise, as written."""
    if caught is None:
        return []
    types = [e.value for e in caught.elements] if isinstance(caught, cst.Tuple) else [caught]
    found = []
    for expr in types:
        qualified = ctx.names.qualified_name(expr) or ""
        if qualified.startswith(_ERROR_MODULES) and qualified.endswith("Error"):
            found.append(ctx.code(expr))
    return found


RULES = (CaughtOpErrorInTracedCode,)
