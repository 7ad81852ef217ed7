"""TFR203: a `tf.function` called with a Python number that changes every iteration."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from tfrewrite.analysis.index import TF_FUNCTION_NAMES, ModuleIndex
from tfrewrite.analysis.walk import iter_nodes
from tfrewrite.context import RuleContext
from tfrewrite.findings import Applicability
from tfrewrite.rules.base import Invalid, Rule, Valid, Violation


def _python_int_loop_variable(loop: cst.For, ctx: RuleContext) -> str | None:
    """The loop variable of `for v in range(...)` / `for v, x in enumerate(...)`."""
    if not isinstance(loop.iter, cst.Call) or not isinstance(loop.iter.func, cst.Name):
        return None
    builtin = loop.iter.func.value
    if builtin in ctx.index.imports or builtin in ctx.index.functions:
        return None  # shadowed
    if builtin == "range" and isinstance(loop.target, cst.Name):
        return loop.target.value
    if builtin == "enumerate" and isinstance(loop.target, (cst.Tuple, cst.List)):
        first = loop.target.elements[0].value if loop.target.elements else None
        if isinstance(first, cst.Name):
            return first.value
    return None


def _uses_only(expr: cst.BaseExpression, name: str) -> bool:
    """`expr` is `name`, or arithmetic on `name` and integer literals."""
    if isinstance(expr, cst.Name):
        return expr.value == name
    if isinstance(expr, cst.BinaryOperation):
        return (
            (_uses_only(expr.left, name) or isinstance(expr.left, cst.Integer))
            and (_uses_only(expr.right, name) or isinstance(expr.right, cst.Integer))
            and not (isinstance(expr.left, cst.Integer) and isinstance(expr.right, cst.Integer))
        )
    return False


class PythonScalarRetraces(Rule):
    code = "TFR203"
    name = "python-scalar-argument-retraces"
    summary = "A `tf.function` called with a changing Python number retraces on every call"
    fix_applicability = Applicability.NONE
    explanation = """
    ## What it does
    Finds calls to a `@tf.function` inside `for step in range(...)` (or
    `enumerate(...)`) loops that pass the Python loop counter as an argument.

    ## Why is this bad under tracing?
    A `tf.function` keys its traces on the values of Python arguments: every
    new integer traces and compiles a new graph. A loop of 10,000 steps traces
    10,000 graphs: slower than running eagerly, and memory grows until
    TensorFlow warns about excessive retracing.

    ## How to fix it
    Pass a tensor (`train_step(x, tf.constant(step))`) or give the function an
    `input_signature`. There is no automatic fix: inside the function the
    argument becomes a tensor, so Python code that branches on it must change
    too (see TFR101).
    """
    examples = (
        Invalid(
            """
            import tensorflow as tf

            @tf.function
            def train_step(x, step):
                return x * step

            for step in range(100):
                train_step(tf.ones(3), step)
            """
        ),
        Valid(
            """
            import tensorflow as tf

            @tf.function
            def train_step(x, step):
                return x * step

            for step in range(100):
                train_step(tf.ones(3), tf.constant(step))
            """
        ),
        Valid(
            """
            import tensorflow as tf

            @tf.function(input_signature=[tf.TensorSpec([3]), tf.TensorSpec([], tf.int32)])
            def train_step(x, step):
                return x * tf.cast(step, x.dtype)

            for step in range(100):
                train_step(tf.ones(3), step)
            """,
            note="an input signature converts the int to a tensor",
        ),
    )

    def applies_to(self, index: ModuleIndex, traced_qualnames: set[str]) -> bool:
        return any(
            any(d in TF_FUNCTION_NAMES for d in info.decorators)
            for info in index.functions.values()
        )

    def check(self, ctx: RuleContext) -> Iterator[Violation]:
        decorated = {
            qualname
            for qualname, info in ctx.index.functions.items()
            if "." not in qualname
            and any(d in TF_FUNCTION_NAMES for d in info.decorators)
            and not any(
                "input_signature" in info.decorator_keywords.get(d, {}) for d in TF_FUNCTION_NAMES
            )
        }
        if not decorated:
            return
        for node in iter_nodes(ctx.module):
            if not isinstance(node, cst.For):
                continue
            variable = _python_int_loop_variable(node, ctx)
            if variable is None:
                continue
            for inner in iter_nodes(node.body, into_functions=False):
                if not (isinstance(inner, cst.Call) and isinstance(inner.func, cst.Name)):
                    continue
                callee = inner.func.value
                if callee not in decorated:
                    continue
                if any(_uses_only(arg.value, variable) for arg in inner.args):
                    yield Violation(
                        inner,
                        f"`{callee}` is called with the Python int `{variable}` that changes "
                        "every iteration: each new value traces a new graph; pass "
                        f"`tf.constant({variable})` or give `{callee}` an `input_signature`",
                    )


RULES = (PythonScalarRetraces,)
