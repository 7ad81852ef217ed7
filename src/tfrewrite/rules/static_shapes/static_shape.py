"""TFR107: a tensor's static shape (`x.shape`) given as a shape in traced code.

`x.shape` is the shape the trace knows, a `TensorShape` that holds `None` for
each dimension the trace does not know: the batch dimension under Keras `fit`
or an `input_signature`, every dimension `reduce_retracing` relaxed. Eagerly it
is always complete. TensorFlow converts it to a shape tensor only when it is
complete, so `tf.random.normal(x.shape)` works in an eager test and in the
first trace, and raises `ValueError: Cannot convert a partially known
TensorShape (None, 3) to a Tensor` once a dimension is unknown (`[x.shape[0],
2]`: `TypeError: Expected int32, but got None`). `tf.shape(x)` is the dynamic
shape, a tensor that always holds the run's values; where the dimensions are
known TensorFlow still infers the static shape of the result from it.
"""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from tfrewrite.facts.bindings import single_values
from tfrewrite.facts.context import FunctionScope, RuleContext
from tfrewrite.facts.import_requests import ImportRequest
from tfrewrite.facts.static_shapes import (
    mentions_static_shape,
    static_dimension_of,
    static_shape_of,
)
from tfrewrite.facts.tensors import TensorFacts
from tfrewrite.facts.vocabulary import SHAPE_ARGUMENTS
from tfrewrite.facts.walk import iter_with_ancestors
from tfrewrite.findings import Applicability
from tfrewrite.rewrite.fixes import CstFix, NodeEdit, Violation
from tfrewrite.rules.base import Invalid, Rule, Valid


def _shape_argument(ctx: RuleContext, call: cst.Call) -> cst.Arg | None:
    """The argument of `call` that gives a shape, if `call` is an op of
    `SHAPE_ARGUMENTS`."""
    where = SHAPE_ARGUMENTS.get(ctx.names.qualified_name(call.func) or "")
    if where is None:
        return None
    position, keyword = where
    positional = [arg for arg in call.args if arg.keyword is None and not arg.star]
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == keyword:
            return arg
    if len(positional) > position and not any(a.star for a in call.args[: position + 1]):
        return positional[position]
    return None


def _is_integer_literal(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        node = node.expression
    return isinstance(node, cst.Integer)


class StaticShapeInTracedCode(Rule):
    code = "TFR107"
    name = "static-shape-in-traced-code"
    summary = (
        "A tensor's static shape (`x.shape`) given as a shape in traced code fails on "
        "unknown dimensions"
    )
    fix_applicability = Applicability.SAFE
    # A step TFR302 decorates reads static shapes under a decorator that
    # keeps them known (no `reduce_retracing`): nothing to fix first.
    blocks_decoration = False
    explanation = """
    ## What it does
    Finds a tensor's static shape, `x.shape` (or `x.get_shape()`) or its batch dimension
    `x.shape[0]`, passed as the shape of a TensorFlow op (`tf.random.normal`, `tf.zeros`, `tf.ones`,
    `tf.fill`, `tf.reshape`, `tf.broadcast_to`, the stateless samplers) in
    code that runs traced, and writes the dynamic shape, `tf.shape(x)` or
    `tf.shape(x)[0]`, in its place. Other dimensions (`x.shape[-1]`, the
    features) are usually known to the trace and are left as they are.

    ## Why is this bad?
    `x.shape` is what the trace knows of the shape: `None` for a dimension
    it does not know, such as the batch dimension under Keras `fit`, an
    `input_signature` with `None`, or a dimension `reduce_retracing` relaxed.
    Eagerly it is always complete, and so it is in a first trace with
    concrete inputs; once a dimension is unknown the op raises
    `ValueError: Cannot convert a partially known TensorShape (None, 3) to a
    Tensor` (for `[x.shape[0], 2]`: `TypeError: Expected int32, but got
    None`). Measured with TensorFlow 2.21 under `input_signature=[(None,
    3)]`.

    ## The fix
    `tf.shape(x)` holds the run's shape whatever the trace knew; where the
    dimensions are known, TensorFlow still infers the result's static shape
    from it (`tf.random.normal(tf.shape(x))` of a `(4, 3)` input has static
    shape `(4, 3)`). A shape built from a slice or a list
    (`list(x.shape[:-1]) + [n]`) is reported without a fix: write
    `tf.concat([tf.shape(x)[:-1], [n]], 0)`.

    ## When it is not reported
    A static shape used as a Python value (`Dense(x.shape[-1])`, `if
    x.shape.rank == 4:`) is not reported: there the static shape is meant.

    ## Fix safety
    Safe when `x` is known to be a tensor and every other entry of a shape
    list is an integer literal or another static dimension (a Python int):
    the op then gets the same shape wherever the static one was complete,
    and a shape where it was not. Otherwise unsafe (applied with
    `--unsafe-fixes`): `x` is only a *likely* tensor (a parameter of a
    traced function with no evidence either way), or an entry of another
    dtype would not pack with the `int32` dimension.
    """
    examples = (
        Invalid(
            """
            import tensorflow as tf

            @tf.function
            def reparameterize(mean, log_var):
                std = tf.exp(log_var * 0.5)
                return mean + std * tf.random.normal(std.shape)
            """,
            """
            import tensorflow as tf

            @tf.function
            def reparameterize(mean, log_var):
                std = tf.exp(log_var * 0.5)
                return mean + std * tf.random.normal(tf.shape(std))
            """,
        ),
        Invalid(
            """
            import tensorflow as tf

            @tf.function
            def pad_rows(x):
                h = tf.nn.relu(x)
                return tf.concat([h, tf.zeros([h.shape[0], 2])], axis=1)
            """,
            """
            import tensorflow as tf

            @tf.function
            def pad_rows(x):
                h = tf.nn.relu(x)
                return tf.concat([h, tf.zeros([tf.shape(h)[0], 2])], axis=1)
            """,
        ),
        Invalid(
            """
            import tensorflow as tf

            @tf.function
            def split_heads(x):
                h = tf.nn.relu(x)
                return tf.reshape(h, list(h.shape[:-1]) + [4, 16])
            """,
            note="built from a slice: reported without a fix",
        ),
        Valid(
            """
            import tensorflow as tf

            def sample(x):
                h = tf.nn.relu(x)
                return tf.random.normal(h.shape)
            """,
            note="not traced: eagerly the static shape is the shape",
        ),
        Valid(
            """
            import tensorflow as tf

            @tf.function
            def project(x):
                h = tf.nn.relu(x)
                units = h.shape[-1]
                return tf.reshape(h, [-1, units])
            """,
            note="the static shape read into a name is a deliberate static use",
        ),
    )

    def check(self, ctx: RuleContext) -> Iterator[Violation]:
        tf, imports = ctx.tensorflow()
        for function in ctx.traced_functions():
            for node, ancestors in iter_with_ancestors(function.node.body, (function.node,)):
                if not isinstance(node, cst.Call):
                    continue
                argument = _shape_argument(ctx, node)
                if argument is None:
                    continue
                scope = ctx.innermost_scope(function, ancestors)
                violation = self._violation(ctx, node, argument.value, scope, tf, imports)
                if violation is not None:
                    yield violation

    def _violation(
        self,
        ctx: RuleContext,
        call: cst.Call,
        shape: cst.BaseExpression,
        scope: FunctionScope,
        tf: str,
        imports: tuple[ImportRequest, ...],
    ) -> Violation | None:
        facts = ctx.tensors(scope)
        op = f"`{ctx.code(call.func)}`"
        static = static_shape_of(shape)
        if static is not None:
            return self._rewrite(
                ctx, facts, shape, [(shape, static, None)], op, tf, imports, others_ok=True
            )
        if isinstance(shape, (cst.List, cst.Tuple)):
            dimensions = []
            others_ok = True
            for element in shape.elements:
                if isinstance(element, cst.StarredElement):
                    return None
                found = static_dimension_of(element.value)
                if found is not None and found[1] == "0":
                    dimensions.append((element.value, found[0], found[1]))
                elif found is None and not _is_integer_literal(element.value):
                    others_ok = False  # (another static dimension is a Python int)
            if dimensions:
                return self._rewrite(ctx, facts, shape, dimensions, op, tf, imports, others_ok)
            return None
        built = single_values(scope.node).get(shape.value) if isinstance(shape, cst.Name) else shape
        if built is None:
            return None
        mentioned = mentions_static_shape(built)
        if mentioned is None or not self._tensor_strength(facts, mentioned.value):
            return None
        owner = ctx.code(mentioned.value)
        return Violation(
            shape,
            f"`{ctx.code(shape)}` is built from the static shape `{owner}.shape`, which holds "
            f"`None` for a dimension the trace does not know: {op} then raises when traced. "
            f"Build it from the dynamic shape instead (`{tf}.shape({owner})`, joined with "
            f"`{tf}.concat([...], 0)`)",
        )

    @staticmethod
    def _tensor_strength(facts: TensorFacts, node: cst.BaseExpression) -> str:
        """ "proven", "likely" or "" for the owner of a `.shape`; scalars
        (always fully known) count as neither."""
        kind = facts.kind(node)
        if kind.tensor:
            return "" if kind.scalar else "proven"
        likely = facts.likely.kind(node)
        return "likely" if likely.tensor and not likely.scalar else ""

    def _rewrite(
        self,
        ctx: RuleContext,
        facts: TensorFacts,
        shape: cst.BaseExpression,
        dimensions: list[tuple[cst.BaseExpression, cst.BaseExpression, str | None]],
        op: str,
        tf: str,
        imports: tuple[ImportRequest, ...],
        others_ok: bool,
    ) -> Violation | None:
        strengths = [self._tensor_strength(facts, owner) for _, owner, _ in dimensions]
        if not all(strengths):
            return None
        edits = []
        for node, owner, index in dimensions:
            dynamic = f"{tf}.shape({ctx.code(owner)})"
            if index is not None:
                dynamic += f"[{index}]"
            edits.append(NodeEdit(node, cst.parse_expression(dynamic)))
        spelled = ", ".join(f"`{ctx.code(node)}`" for node, _, _ in dimensions)
        message = (
            f"{spelled} is the static shape, which holds `None` for a dimension the trace does "
            f"not know (the batch dimension under `fit` or an `input_signature`): {op} then "
            f"raises when traced; use the dynamic shape, `{tf}.shape(...)`"
        )
        unsafe = []
        if "likely" in strengths:
            unsafe.append(facts.assumption_note(shape))
        if not others_ok:
            unsafe.append(
                "the other entries of the shape must be Python ints or int32 tensors to pack "
                "with the int32 dimension"
            )
        fix_message = f"Use the dynamic shape `{tf}.shape(...)`"
        if unsafe:
            fix = CstFix(
                f"{fix_message} (unsafe: {'; '.join(unsafe)})",
                tuple(edits),
                imports,
                Applicability.UNSAFE,
            )
        else:
            fix = CstFix(fix_message, tuple(edits), imports)
        return Violation(shape, message, fix)


RULES = (StaticShapeInTracedCode,)
