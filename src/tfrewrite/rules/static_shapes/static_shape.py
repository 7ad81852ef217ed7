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
from dataclasses import dataclass
from functools import cached_property

import libcst as cst

from tfrewrite.facts.bindings import all_params, local_bindings, single_values
from tfrewrite.facts.context import FunctionScope, RuleContext
from tfrewrite.facts.import_requests import ImportRequest
from tfrewrite.facts.role_arguments import role_arguments
from tfrewrite.facts.static_shapes import (
    batch_dimension_reads,
    converted_dimension_names,
    mentions_static_shape,
    set_leading_dimension,
    shape_is_whole,
    static_batch_names,
    static_dimension_names,
    static_dimension_of,
    static_shape_names,
    static_shape_of,
)
from tfrewrite.facts.tensors import TensorFacts
from tfrewrite.facts.vocabulary import (
    COUNT_ARGUMENTS,
    HOST_SHAPE_ARGUMENTS,
    PYTHON_COUNT_ARGUMENTS,
    SHAPE_ARGUMENTS,
)
from tfrewrite.facts.walk import enclosing_statement_line, iter_nodes, iter_with_ancestors
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
    `tf.fill`, `tf.reshape`, `tf.broadcast_to`, `tf.slice`'s `size`,
    `tf.nn.conv2d_transpose`'s `output_shape`, the stateless samplers: every
    argument that TensorFlow, called with `None` for a dimension, refuses to
    convert, as `scripts/tf_vocabulary.py` measures) in code that runs
    traced, and writes the dynamic shape, `tf.shape(x)` or `tf.shape(x)[0]`,
    in its place. Other dimensions (`x.shape[-1]`, the
    features) are usually known to the trace and are left as they are.

    The batch dimension is found wherever it goes: read into a name first
    (`rows = x.shape[0]`, `rows, cols = x.shape`, or the same dimension on
    each branch of an `if`; read before the tensor is rebound, it is the
    dimension of the tensor read then), or given as a count or
    size (`tf.range(rows * n)`, `tf.repeat(..., repeats=rows)`, `tf.tile`,
    `tf.one_hot`'s `depth`, `tf.eye`, `tf.sequence_mask`'s `maxlen`), or
    handed to a project function or a method of a held object that gives it
    to one (`self.decoder.reset_state(batch_size=b)`). A Python list repeated
    by it (`[start] * b`) is reported without a fix: it needs a Python int
    (`tf.fill([tf.shape(x)[0]], start)` builds the tensor instead). So is a
    NumPy array built from it (`np.tile(a, [b, 1])`, `np.zeros((b, 2))`:
    the NumPy functions that take a shape, measured by
    `scripts/numpy_shape_arguments.py`): NumPy needs Python ints, and
    neither `None` nor the dynamic shape will do. The fix
    writes `tf.shape(x)[0]` where the name is used and leaves the name for
    its Python uses. A function that only a `Dataset.map` traces sees one
    element at a time: its dimension 0 is no batch dimension, and is left
    alone.

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
    Nor is the shape of a variable: a helper reshaping a flat vector into
    the shapes of the variables it is handed (`tf.reshape(flat[i:j],
    v.shape)` for `v` in `model.trainable_variables`, which callers pass)
    reads shapes the trace always knows, and so does a function handed to a
    Keras layer as a weight's constraint or regularizer
    (`Dense(8, kernel_constraint=symmetric)`): Keras calls it with the
    weight variable. So is a tensor a layer makes once, in `build` or
    `__init__` (`self.w = tf.random.normal([k, k, c, n])`, `add_weight`),
    read there or in a helper every call site of which hands it such a
    weight (a spectral-norm power iteration reshaping `w` to `w.shape`).

    Nor is a static shape in code every trace of which sees whole shapes
    (`facts/trace_shapes.py`): a `tf.function` called with eager values
    traces each new batch size with that size, a short last batch as a
    second trace (measured: the step `fix` decorates gives traced what it
    gives eagerly over batches of 4, 4, 3 and 2 rows). That is a plain
    `@tf.function` (no `input_signature`, no `reduce_retracing`) a Python
    loop of the project calls, that iterates no dataset inside; a step
    traced only once TFR302 decorates it, when every loop calling it feeds
    batches of one size (its decorator then takes no `reduce_retracing`);
    the `call` of a model that such steps run and that no module handing a
    model to Keras (`fit`, `predict`, `build`, `save`, `keras.Input`), nor
    one importing it, can reach; and what these call. A model or function
    nothing in the project runs (a library's) is taken to be traced as
    Keras traces it, with the batch dimension open. Such a static shape is
    no failure today; it would become one under `reduce_retracing`, an
    `input_signature` or `fit`, and it is reported once the code says so.

    ## Fix safety
    Safe when `x` is known to be a tensor and every other entry of a shape
    list (or term of a count) is an integer literal or another static
    dimension (a Python int):
    the op then gets the same shape wherever the static one was complete,
    and a shape where it was not. Otherwise unsafe (applied with
    `--unsafe-fixes`): `x` is only a *likely* tensor (a parameter of a
    traced function with no evidence either way, or what a call tfrewrite
    cannot see returns that the op itself takes as its tensor:
    `tf.reshape(h, [n, -1])` for `n, _ = h.shape`), or an entry of another
    dtype would not pack with the `int32` dimension. A name read from a
    tensor that the function later rebinds is reported without a fix:
    `tf.shape(x)` at the use would read the other tensor.
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
            def row_ids(x):
                h = tf.nn.relu(x)
                rows = h.shape[0]
                return tf.reshape(tf.range(rows * 2), (rows, 2))
            """,
            """
            import tensorflow as tf

            @tf.function
            def row_ids(x):
                h = tf.nn.relu(x)
                rows = h.shape[0]
                return tf.reshape(tf.range(tf.shape(h)[0] * 2), (tf.shape(h)[0], 2))
            """,
            findings=2,
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
        Invalid(
            """
            import numpy as np
            import tensorflow as tf

            @tf.function
            def domain_labels(features):
                h = tf.nn.relu(features)
                return tf.constant(np.tile([1.0, 0.0], [h.shape[0], 1]))
            """,
            note="a NumPy array of the batch's size: NumPy needs Python ints, no fix",
        ),
        Valid(
            """
            import tensorflow as tf

            @tf.function
            def noisy(x):
                return x + tf.random.normal([x.shape[0], 1])

            def train(batches):
                for x in batches:
                    noisy(x)
            """,
            note="a plain `tf.function` a loop calls with eager batches: traces see them whole",
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
        dimension_names: dict[int, dict[str, tuple[cst.BaseExpression, str]]] = {}

        def site_of(
            node: cst.Call | cst.BinaryOperation,
            function: FunctionScope,
            ancestors: tuple[cst.CSTNode, ...],
        ) -> _Site:
            """The site of `node`, with the static dimensions its function's
            names hold (worked out once per function)."""
            scope = ctx.innermost_scope(function, ancestors)
            dimensions = dimension_names.get(id(scope.node))
            if dimensions is None:
                dimensions = static_dimension_names(scope.node)
                dimension_names[id(scope.node)] = dimensions
            line = enclosing_statement_line(ancestors)
            return _Site(ctx, node, scope, dimensions, tf, imports, line)

        for function in ctx.traced_functions():
            traced = function.runs_traced
            if traced is not None and traced.per_element:
                continue  # one element at a time: its dimension 0 is no batch
            if traced is not None and traced.concrete_shapes:
                continue  # every trace sees whole shapes: `x.shape` is the shape
            if function.qualname in ctx.index.weight_functions:
                continue  # a weight's constraint: Keras hands it the variable, shape and all
            for node, ancestors in iter_with_ancestors(function.node.body, (function.node,)):
                repeats = _list_repeats(node)
                if repeats is not None:
                    site = site_of(node, function, ancestors)  # type: ignore[arg-type]
                    violation = self._python_count_violation(site, repeats, _FILL_ADVICE)
                    if violation is not None:
                        yield violation
                    continue
                if not isinstance(node, cst.Call):
                    continue
                shape = _shape_argument(ctx, node)
                counts = _count_arguments(ctx, node)
                python_counts = _count_arguments(ctx, node, PYTHON_COUNT_ARGUMENTS)
                host_shapes = _count_arguments(ctx, node, HOST_SHAPE_ARGUMENTS)
                handed = role_arguments(
                    ctx, ctx.index.callee_shape_params, node, function.class_name
                )
                if not (shape is not None or counts or python_counts or host_shapes or handed):
                    continue
                site = site_of(node, function, ancestors)
                if shape is not None:
                    violation = self._violation(site, shape.value)
                    if violation is not None:
                        yield violation
                for count in counts:
                    violation = self._count_violation(site, count.value)
                    if violation is not None:
                        yield violation
                for count in python_counts:
                    violation = self._python_count_violation(site, count.value)
                    if violation is not None:
                        yield violation
                for host_shape in host_shapes:
                    violation = self._python_count_violation(site, host_shape.value, _HOST_ADVICE)
                    if violation is not None:
                        yield violation
                for arg, param in handed:
                    violation = self._handed_violation(site, arg.value, param)
                    if violation is not None:
                        yield violation

    def _violation(self, site: _Site, shape: cst.BaseExpression) -> Violation | None:
        ctx = site.ctx
        static = static_shape_of(shape)
        if static is not None:
            if site.whole(static):
                return None
            return self._rewrite(site, shape, [(shape, static, None)], others_ok=True)
        if isinstance(shape, (cst.List, cst.Tuple)):
            dimensions: list[tuple[cst.BaseExpression, cst.BaseExpression, str | None]] = []
            others_ok = True
            for element in shape.elements:
                if isinstance(element, cst.StarredElement):
                    return None
                reads = site.batch_reads(element.value)
                if reads:
                    dimensions.extend((read, owner, "0") for read, owner in reads)
                    others_ok = others_ok and site.python_int_arithmetic(element.value)
                elif not site.python_int_arithmetic(element.value):
                    others_ok = False
            if dimensions:
                return self._rewrite(site, shape, dimensions, others_ok)
            return None
        if isinstance(shape, (cst.Name, cst.BinaryOperation)):
            counted = self._count_violation(site, shape)
            if counted is not None:
                return counted
        built: cst.BaseExpression | None = shape
        if isinstance(shape, cst.Name):
            built = single_values(site.scope.node).get(shape.value)
        if built is None:
            return None
        mentioned = mentions_static_shape(built)
        tensor = static_shape_of(mentioned) if mentioned is not None else None
        facts = ctx.tensors(site.scope)
        if tensor is None or site.whole(tensor) or not self._tensor_strength(facts, tensor):
            return None
        if _reads_only_inner_dimensions(built):
            return None  # `z.shape[-1]`: a feature size the trace knows
        owner = ctx.code(tensor)
        op, tf = site.op, site.tf
        return Violation(
            shape,
            f"`{ctx.code(shape)}` is built from the static shape `{owner}.shape`, which holds "
            f"`None` for a dimension the trace does not know: {op} then raises when traced. "
            f"Build it from the dynamic shape instead (`{tf}.shape({owner})`, joined with "
            f"`{tf}.concat([...], 0)`)",
        )

    def _count_violation(self, site: _Site, value: cst.BaseExpression) -> Violation | None:
        """A count or size (`tf.range(b * n)`, `repeats=b`), or a shape given
        as one number, computed from a static batch dimension."""
        if isinstance(value, (cst.List, cst.Tuple)):  # `tf.tile(x, [b, 1])`: a shape
            return self._violation(site, value)
        reads = site.batch_reads(value)
        if not reads:
            return None
        dimensions = [(read, owner, "0") for read, owner in reads]
        return self._rewrite(site, value, dimensions, site.python_int_arithmetic(value))

    def _handed_violation(
        self, site: _Site, value: cst.BaseExpression, param: str
    ) -> Violation | None:
        """A static batch dimension handed to a project function that gives
        the parameter (`param`) to a TensorFlow op as a shape or a count:
        it fails there as it would here. The fix passes the dynamic shape;
        unsafe, since the function must then take a tensor there."""
        reads = site.batch_reads(value)
        if not reads:
            return None
        dimensions = [(read, owner, "0") for read, owner in reads]
        others_ok = site.python_int_arithmetic(value)
        return self._rewrite(site, value, dimensions, others_ok, handed_as=param)

    def _python_count_violation(
        self, site: _Site, value: cst.BaseExpression, advice: str = ""
    ) -> Violation | None:
        """A count that must be a Python int (`tf.split(f, b)`, `[start] *
        b`), computed from a static batch dimension: reported, never
        rewritten."""
        # A shape (`np.zeros((b, 2))`) reads the dimensions of its entries.
        entries = (
            [e.value for e in value.elements if isinstance(e, cst.Element)]
            if isinstance(value, (cst.List, cst.Tuple))
            else [value]
        )
        reads = [read for entry in entries for read in site.batch_reads(entry)]
        facts = site.ctx.tensors(site.scope)
        if not reads or not all(
            self._tensor_strength(facts, owner, site.line) for _, owner in reads
        ):
            return None
        spelled = ", ".join(self._spelling(site.ctx, node, owner) for node, owner in reads)
        return Violation(
            site.call if isinstance(site.call, cst.BinaryOperation) else value,
            f"{spelled} is the static shape, which holds `None` for a dimension the trace does "
            f"not know (the batch dimension under `fit` or an `input_signature`): {site.op} "
            "then raises when traced (no fix: it needs the number as a Python int, which the "
            "dynamic shape is not; "
            + (advice or "iterate over the batch with `tf.map_fn`, or keep the batch size fixed")
            + ")",
        )

    @staticmethod
    def _tensor_strength(
        facts: TensorFacts, node: cst.BaseExpression, line: cst.CSTNode | None = None
    ) -> str:
        """ "proven", "likely" or "" for the owner of a `.shape`, as it is
        where `line` runs when given; scalars (always fully known) count as
        neither."""
        kind = facts.kind_at(node, line) if line is not None else facts.kind(node)
        if kind.tensor:
            return "" if kind.scalar else "proven"
        likely = facts.likely
        guess = likely.kind_at(node, line) if line is not None else likely.kind(node)
        return "likely" if guess.tensor and not guess.scalar else ""

    def _rewrite(
        self,
        site: _Site,
        shape: cst.BaseExpression,
        dimensions: list[tuple[cst.BaseExpression, cst.BaseExpression, str | None]],
        others_ok: bool,
        handed_as: str | None = None,
    ) -> Violation | None:
        """The finding on static dimensions given as a shape or a count,
        or handed to a project function as its parameter `handed_as`, with
        the fix writing the dynamic shape where each was read."""
        ctx, tf = site.ctx, site.tf
        facts = ctx.tensors(site.scope)
        # A dimension read through a name (`B, H, W, C = y.shape`) is of the
        # tensor its owner held where the name was bound, not where it is used.
        strengths = [
            self._tensor_strength(
                facts,
                owner,
                _statement_holding(site.scope.node, owner)
                if site.read_through_name(node)
                else site.line,
            )
            for node, owner, _ in dimensions
        ]
        # `tf.reshape(x, [n, h * w * c])` for `[n, h, w, c] = x.shape`: the op
        # takes `x` as its tensor, so `x` is likely one, whatever made it.
        operand = _tensor_operand(site)
        taken = [
            not strength and operand is not None and ctx.code(owner) == operand
            for strength, (_, owner, _) in zip(strengths, dimensions, strict=True)
        ]
        if not all(strength or by_op for strength, by_op in zip(strengths, taken, strict=True)):
            return None
        edits = []
        for node, owner, index in dimensions:
            dynamic = f"{tf}.shape({ctx.code(owner)})"
            if index is not None:
                dynamic += f"[{index}]"
            edits.append(NodeEdit(node, cst.parse_expression(dynamic)))
        spelled = ", ".join(self._spelling(ctx, node, owner) for node, owner, _ in dimensions)
        where = site.op
        if handed_as is not None:
            where = (
                f"{site.op} gives it to a TensorFlow op as a shape or a count "
                f"(its `{handed_as}`), which"
            )
        message = (
            f"{spelled} is the static shape, which holds `None` for a dimension the trace does "
            f"not know (the batch dimension under `fit` or an `input_signature`): {where} then "
            f"raises when traced; use the dynamic shape, `{tf}.shape(...)`"
        )
        moved = [
            ctx.code(owner)
            for node, owner, _ in dimensions
            if site.read_through_name(node) and not _stays_bound(site.scope.node, owner)
        ]
        if moved:
            return Violation(
                shape,
                message
                + f" (not rewritten: `{moved[0]}` is not one value throughout the function, so "
                f"`{tf}.shape({moved[0]})` here could read another tensor)",
            )
        converted = converted_dimension_names(site.scope.node)
        through = [
            ctx.code(node)
            for node, _, _ in dimensions
            if isinstance(node, cst.Name) and node.value in converted
        ]
        if through:
            return Violation(
                shape,
                message + f" (not rewritten: `{through[0]}` is bound by `int()` of the static "
                "dimension, which raises first when it is unknown; bind it from "
                f"`{tf}.shape(...)` there)",
            )
        unsafe = []
        if "likely" in strengths:
            unsafe.append(facts.assumption_note(shape))
        if any(taken):
            unsafe.append(f"it assumes `{operand}` is a tensor, as {site.op} takes it")
        if handed_as is not None:
            unsafe.append(f"{site.op} must then take a tensor for `{handed_as}`")
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
                site.imports,
                Applicability.UNSAFE,
            )
        else:
            fix = CstFix(fix_message, tuple(edits), site.imports)
        return Violation(shape, message, fix)

    @staticmethod
    def _spelling(ctx: RuleContext, node: cst.BaseExpression, owner: cst.BaseExpression) -> str:
        """`x.shape[0]`, or for a name holding it or the shape, "`b`
        (`x.shape[0]`)", "`dims[0]` (`x.shape[0]`)"."""
        if static_shape_of(node.value if isinstance(node, cst.Subscript) else node) is None:
            return f"`{ctx.code(node)}` (`{ctx.code(owner)}.shape[0]`)"
        return f"`{ctx.code(node)}`"


def _tensor_operand(site: _Site) -> str | None:
    """The code of the tensor a shape-taking TensorFlow op is given before
    its shape (`x` in `tf.reshape(x, shape)`), or None."""
    call = site.call
    if not isinstance(call, cst.Call) or not call.args:
        return None
    place = SHAPE_ARGUMENTS.get(site.ctx.names.qualified_name(call.func) or "")
    first = call.args[0]
    if place is None or place[0] == 0 or first.keyword is not None or first.star:
        return None
    return site.ctx.code(first.value)


@dataclass(frozen=True)
class _Site:
    """A call in traced code and what checking its arguments needs."""

    ctx: RuleContext
    call: cst.Call | cst.BinaryOperation
    scope: FunctionScope
    dimensions: dict[str, tuple[cst.BaseExpression, str]]  # static dimensions held by names
    tf: str
    imports: tuple[ImportRequest, ...]
    # The statement line holding the call: the bindings that reach it say
    # what a name is there (a parameter rebound only further down).
    line: cst.SimpleStatementLine | None = None

    @property
    def op(self) -> str:
        if isinstance(self.call, cst.BinaryOperation):  # `[start] * b`
            return "repeating a Python list by it"
        return f"`{self.ctx.code(self.call.func)}`"

    @cached_property
    def batch_names(self) -> dict[str, cst.BaseExpression]:
        return static_batch_names(self.dimensions)

    @cached_property
    def shape_names(self) -> dict[str, cst.BaseExpression]:
        return static_shape_names(self.dimensions)

    def read_through_name(self, node: cst.BaseExpression) -> bool:
        """A dimension read through a name that holds it or its shape (`b`,
        `dims[0]`): taken earlier, from the tensor the name was bound from."""
        if isinstance(node, cst.Subscript):
            return isinstance(node.value, cst.Name) and node.value.value in self.shape_names
        return isinstance(node, cst.Name)

    def batch_reads(
        self, value: cst.BaseExpression
    ) -> list[tuple[cst.BaseExpression, cst.BaseExpression]]:
        """The static batch dimensions `value` computes with
        (`batch_dimension_reads`), but for those of a tensor the function
        just made to a shape whose first entry is a Python value (`points =
        tf.reshape(points, (n_points, 3))`): the trace knows them."""
        reads = batch_dimension_reads(value, self.batch_names, self.shape_names)
        return [
            (read, owner)
            for read, owner in reads
            if not self._set_by_shape(owner) and not self.whole(owner)
        ]

    def whole(self, owner: cst.BaseExpression) -> bool:
        """Every trace knows `owner`'s whole static shape (a variable, a
        layer's set-up weight): reading it is no hazard."""
        return shape_is_whole(self.ctx, self.scope, owner)

    def _set_by_shape(self, owner: cst.BaseExpression) -> bool:
        if not isinstance(owner, cst.Name):
            return False
        entry = set_leading_dimension(self.ctx, self.scope.node, owner.value, self.line)
        if isinstance(entry, cst.Integer):
            return True
        if isinstance(entry, cst.Name):
            if entry.value in self.dimensions:
                return False  # itself a static dimension (`b, h, w = x.shape`)
            return not self.ctx.tensors(self.scope).kind(entry).tensor
        return False

    def python_int_arithmetic(self, node: cst.BaseExpression) -> bool:
        """Integer literals and static dimensions (Python ints, or `None`
        where TFR107 reports them; read directly or through a name) joined by
        arithmetic: what packs with an int32 dimension whatever else the
        function holds."""
        if _is_integer_literal(node) or static_dimension_of(node, self.shape_names) is not None:
            return True
        if isinstance(node, cst.Name):
            return node.value in self.dimensions and node.value not in self.shape_names
        if isinstance(node, cst.BinaryOperation):
            return self.python_int_arithmetic(node.left) and self.python_int_arithmetic(node.right)
        return False


_FILL_ADVICE = "build the tensor with `tf.fill([tf.shape(x)[0]], value)` instead"
# A NumPy array built on the host from a static shape (`np.tile(a, [n, 1])`).
_HOST_ADVICE = (
    "NumPy builds arrays on the host; build it with TensorFlow from the dynamic shape "
    "instead (`tf.tile`, `tf.zeros`)"
)


def _list_repeats(node: cst.CSTNode) -> cst.BaseExpression | None:
    """The count of `[start] * b` (or `b * [start]`): a list display
    repeated, which needs a Python int."""
    if not (isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Multiply)):
        return None
    if isinstance(node.left, (cst.List, cst.Tuple)):
        return node.right
    if isinstance(node.right, (cst.List, cst.Tuple)):
        return node.left
    return None


def _count_arguments(
    ctx: RuleContext, call: cst.Call, table: dict[str, tuple[tuple[int, str], ...]] | None = None
) -> list[cst.Arg]:
    """The arguments of `call` that give a count or size (`COUNT_ARGUMENTS`,
    or the ops of `table`)."""
    where = (table or COUNT_ARGUMENTS).get(ctx.names.qualified_name(call.func) or "")
    if where is None:
        return []
    positional = [arg for arg in call.args if arg.keyword is None and not arg.star]
    if any(arg.star for arg in call.args):
        return []
    found = []
    for position, keyword in where:
        named = next((a for a in call.args if a.keyword and a.keyword.value == keyword), None)
        if named is not None:
            found.append(named)
        elif len(positional) > position:
            found.append(positional[position])
    return found


def _reads_only_inner_dimensions(node: cst.CSTNode) -> bool:
    """Every static shape `node` reads is one dimension other than the
    batch's (`z.shape[-1]`, `x.shape[2]`), the dimensions after it
    (`x.shape[1:-1]`), or the rank (`len(x.shape)`):
    sizes a trace knows, as TFR107 holds only the batch dimension unknown."""
    reads = [
        inner
        for inner in iter_nodes(node)
        if isinstance(inner, (cst.Attribute, cst.Call)) and static_shape_of(inner) is not None
    ]
    dimensions = [
        inner
        for inner in iter_nodes(node)
        if isinstance(inner, cst.Subscript) and static_dimension_of(inner) is not None
    ]
    ranks = {
        id(inner.args[0].value)
        for inner in iter_nodes(node)
        if isinstance(inner, cst.Call)
        and isinstance(inner.func, cst.Name)
        and inner.func.value == "len"
        and len(inner.args) == 1
    }
    # `x.shape[1:-1]`, `x.shape[1:]`: the dimensions after the batch's.
    inner_slices = {
        id(inner.value)
        for inner in iter_nodes(node)
        if isinstance(inner, cst.Subscript) and _slices_past_the_batch(inner)
    }
    indexed = {id(d.value) for d in dimensions} | ranks | inner_slices
    return (
        bool(reads)
        and all(id(r) in indexed for r in reads)
        and all(static_dimension_of(d)[1] != "0" for d in dimensions)  # type: ignore[index]
    )


def _slices_past_the_batch(node: cst.Subscript) -> bool:
    """`[1:]`, `[1:-1]`, `[2:4]`: a slice starting at a positive literal."""
    if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Slice):
        return False
    lower = node.slice[0].slice.lower
    return isinstance(lower, cst.Integer) and int(lower.value) > 0


def _statement_holding(function: cst.FunctionDef, node: cst.CSTNode) -> cst.CSTNode | None:
    """The statement line of `function` that holds `node`."""
    for found, ancestors in iter_with_ancestors(function.body, (function,)):
        if found is node:
            return enclosing_statement_line(ancestors)
    return None


def _stays_bound(function: cst.FunctionDef, owner: cst.BaseExpression) -> bool:
    """`owner` is a name that holds one value all through `function` (a
    parameter never rebound, or a local bound once), so the tensor whose
    static dimension a name read earlier is the one `tf.shape(owner)` reads."""
    if not isinstance(owner, cst.Name):
        return False
    bound = len(local_bindings(function).get(owner.value, ()))
    params = {p.name.value for p in all_params(function.params)}
    return bound == (0 if owner.value in params else 1)


RULES = (StaticShapeInTracedCode,)
