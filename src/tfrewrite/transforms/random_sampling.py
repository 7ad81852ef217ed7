"""Rewriting host-side random sampling into `tf.random`.

NumPy's `np.random.*` and Python's `random.*` draw on the host. Inside traced
code they run once, while the function is traced, and the graph keeps the
drawn value as a constant: every later call reuses the same "random" sample.
TFR102 (NumPy) and TFR106 (Python `random`) find those calls and, when the
arguments map faithfully, rewrite them into `tf.random` ops, which draw afresh
on every call.

This module holds what both rules share:

- `RandomSamplingRule`: the check both rules run (seeds, refusals, fixes);
- `SampleWriter`: shape (`size=`) and dtype mapping, the dtype the surrounding
  computation needs, what consumes the sample, and the `tf.random` source text
  of a sample.

A mapping that cannot be made faithfully raises `Refusal`, whose reason ends up
in the finding's message.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import ClassVar

import libcst as cst

from tfrewrite.analysis.index import ModuleIndex
from tfrewrite.analysis.tensors import is_python_number
from tfrewrite.analysis.walk import iter_with_ancestors
from tfrewrite.context import FunctionScope, RuleContext
from tfrewrite.findings import Applicability
from tfrewrite.rules.base import CstFix, ImportRequest, NodeEdit, Rule, Violation
from tfrewrite.transforms.call_layout import KeepLayout, comment_texts, spans_lines
from tfrewrite.transforms.dtypes import (
    BOOL,
    FLOAT,
    INT,
    TF_UNIFORM_INTS,
    UNKNOWN,
    Dtype,
    tf_dtype,
)
from tfrewrite.transforms.traced_calls import (
    Refusal,
    SampleSite,
    is_integer_literal,
    is_none,
    is_number_literal,
    iter_module_calls,
)
from tfrewrite.transforms.value_uses import (
    TF_WRAPPERS,
    Use,
    UseKind,
    ValueUses,
    Wrapper,
    first_of,
    wrapper_dtype,
    wrapper_replacement,
)

# -- writing samples -----------------------------------------------------------------

_ARITHMETIC = (
    cst.Add,
    cst.Subtract,
    cst.Multiply,
    cst.Divide,
    cst.FloorDivide,
    cst.Modulo,
    cst.Power,
    cst.MatrixMultiply,
)
# Expressions that need parentheses as an operand of `+` or `<`.
_LOOSE = (cst.Comparison, cst.BooleanOperation, cst.IfExp, cst.Lambda, cst.NamedExpr)
_BITWISE = (cst.BitAnd, cst.BitOr, cst.BitXor, cst.LeftShift, cst.RightShift)


def _dimension_read(node: cst.BaseExpression) -> tuple[cst.Attribute, cst.Index] | None:
    """`(x.shape, i)` for `x.shape[i]` (one plain index into a `.shape`
    attribute): a Python integer, whatever `x` holds."""
    if (
        isinstance(node, cst.Subscript)
        and len(node.slice) == 1
        and isinstance(node.slice[0].slice, cst.Index)
        and isinstance(node.value, cst.Attribute)
        and node.value.attr.value == "shape"
    ):
        return node.value, node.slice[0].slice
    return None


class SampleWriter:
    """Builds the `tf.random` text for one sample site, using the file's
    TensorFlow alias."""

    def __init__(
        self, ctx: RuleContext, site: SampleSite, tf: str, natural: Mapping[str, str]
    ) -> None:
        self.ctx = ctx
        self.site = site
        self.tf = tf
        # Dtypes TensorFlow gives the host value by kind (`tf.constant` of it).
        self.natural = natural
        # What consumes the sample, and the conversion around it folded into it.
        self.uses: list[Use] = []
        self.folded: Wrapper | None = None
        # Text written for an argument of the original call -> that argument,
        # so the argument's comments and line breaks can follow it.
        self._arguments = {id(arg.value): arg for arg in site.call.args}
        self._origins: dict[str, list[cst.Arg]] = {}

    def _written(self, text: str, node: cst.CSTNode | None) -> str:
        arg = self._arguments.get(id(node)) if node is not None else None
        if arg is not None:
            self._origins.setdefault(text, []).append(arg)
        return text

    def code(self, node: cst.CSTNode) -> str:
        return self._written(self.ctx.code(node), node)

    # -- shapes ----------------------------------------------------------------------
    def shape(self, size: cst.BaseExpression | None) -> str:
        return self._written(self._shape(size), size)

    def _shape(self, size: cst.BaseExpression | None) -> str:
        """NumPy's `size=` as a `tf.random` shape: absent or `None` is a scalar
        (`[]`), an integer `n` is `[n]`, a tuple or list keeps its elements,
        `x.shape` is `tf.shape(x)` (the dynamic shape, known even when a
        traced dimension is `None`)."""
        if is_none(size):
            return "[]"
        assert size is not None
        shape_of = self._shape_of(size)
        if shape_of is not None:
            return shape_of
        if isinstance(size, (cst.Tuple, cst.List)):
            return "[" + ", ".join(self.dimension(e) for e in size.elements) + "]"
        if self.is_integer(size):
            return f"[{self.dimension_expression(size)}]"
        raise Refusal(
            f"`size={self.code(size)}` is not a tuple, an integer or `x.shape`: "
            "the shape it stands for is not known"
        )

    def _shape_of(self, node: cst.BaseExpression) -> str | None:
        """`tf.shape(x)` for `x.shape`, `tf.shape(x)[1:]` for `x.shape[1:]`."""
        if isinstance(node, cst.Attribute) and node.attr.value == "shape" and not node.lpar:
            return f"{self.tf}.shape({self.code(node.value)})"
        if (
            isinstance(node, cst.Subscript)
            and len(node.slice) == 1
            and isinstance(node.slice[0].slice, cst.Slice)
        ):
            base = self._shape_of(node.value)
            if base is not None:
                return f"{base}[{self.code(node.slice[0].slice)}]"
        return None

    def is_integer(self, node: cst.BaseExpression) -> bool:
        """Expressions that are Python integers whatever the names hold:
        integer literals, `len(...)`, `x.shape[i]`, `x.ndim` and integer
        arithmetic on those."""
        if is_integer_literal(node):
            return True
        if (
            isinstance(node, cst.Call)
            and isinstance(node.func, cst.Name)
            and node.func.value == "len"
        ):
            return True
        if isinstance(node, cst.Attribute) and node.attr.value == "ndim":
            return True
        if _dimension_read(node) is not None:
            return True
        if isinstance(node, cst.BinaryOperation) and isinstance(
            node.operator, (cst.Add, cst.Subtract, cst.Multiply, cst.FloorDivide)
        ):
            return self.is_integer(node.left) and self.is_integer(node.right)
        return False

    def dimension(self, element: cst.BaseElement) -> str:
        if isinstance(element, cst.StarredElement):
            raise Refusal(f"the starred size element `{self.code(element)}` has no fixed rank")
        return self.dimension_expression(element.value)

    def dimension_expression(self, node: cst.BaseExpression) -> str:
        """One dimension: `x.shape[i]` becomes `tf.shape(x)[i]` (a traced
        dimension may be `None` statically), anything else is kept."""
        read = _dimension_read(node)
        if read is not None and not read[0].lpar:
            shape, index = read
            return f"{self.tf}.shape({self.code(shape.value)})[{self.code(index)}]"
        return self.code(node)

    def integer_shape_of_dims(self, dims: Sequence[cst.Arg]) -> str:
        """`rand(d0, d1, ...)` dimensions as a shape; `rand(*x.shape)` is `tf.shape(x)`."""
        if len(dims) == 1 and dims[0].star == "*":
            shape_of = self._shape_of(dims[0].value)
            if shape_of is not None:
                return shape_of
        for dim in dims:
            if dim.star:
                raise Refusal(
                    f"the unpacked dimensions `{dim.star}{self.code(dim.value)}` have no fixed rank"
                )
            if dim.keyword is not None:
                raise Refusal(f"the argument `{dim.keyword.value}=` has no `tf.random` counterpart")
        return "[" + ", ".join(self.dimension_expression(d.value) for d in dims) + "]"

    def require_scalar_parameters(
        self, size: cst.BaseExpression | None, **params: cst.BaseExpression | None
    ) -> None:
        """Without `size`, NumPy draws one value per element of array-valued
        parameters, while `tf.random` with shape `[]` would draw a single value
        and broadcast it (`np.random.normal(x, 0.1)` adds independent noise to
        each element; `tf.random.normal([], mean=x, stddev=0.1)` shifts them
        all by one draw): refuse parameters not known to be scalars. Known
        scalars are Python number arithmetic, `float(...)` / `int(...)` and
        scalar tensors; a parameter such as `x` may hold an array."""
        if not is_none(size):
            return
        for name, node in params.items():
            if node is not None and not self._known_scalar(node):
                raise Refusal(
                    f"`{name}={self.code(node)}` may hold several values and no `size` is given: "
                    "NumPy draws one sample per element; pass `size=`"
                )

    def _known_scalar(self, node: cst.BaseExpression) -> bool:
        """Python number arithmetic, `float(...)` / `int(...)` / `len(...)`, a
        dimension `x.shape[i]`, arithmetic and conditionals on known scalars,
        or a scalar tensor."""
        if is_python_number(node) or _dimension_read(node) is not None:
            return True
        if isinstance(node, cst.IfExp):
            return self._known_scalar(node.body) and self._known_scalar(node.orelse)
        if isinstance(node, cst.UnaryOperation) and isinstance(
            node.operator, (cst.Minus, cst.Plus)
        ):
            return self._known_scalar(node.expression)
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, _ARITHMETIC):
            return self._known_scalar(node.left) and self._known_scalar(node.right)
        if (
            isinstance(node, cst.Call)
            and isinstance(node.func, cst.Name)
            and node.func.value in ("float", "int", "len")
            and self.ctx.names.qualified_name(node.func) is None
        ):
            return True
        kind = self.site.facts.kind(node)
        return kind.tensor and kind.scalar

    # -- dtypes ----------------------------------------------------------------------
    def dtype(self, node: cst.BaseExpression) -> Dtype:
        """A dtype given to `.astype(...)` or `dtype=`, in TensorFlow terms."""
        return tf_dtype(node, self.ctx, self.tf)

    def astype_dtype(self) -> Dtype | None:
        """The dtype the code converts the sample to, folded into the sample:
        a trailing `.astype(dtype)`, or the `dtype` of the conversion around
        it (`tf.constant(<sample>, dtype=tf.float32)`, `np.float32(<sample>)`)."""
        folded = self.folded.dtype if self.folded is not None else None
        astype = self.site.astype
        if astype is not None and folded is not None:
            raise Refusal("the sample is converted twice; convert it once")
        if folded is not None:
            assert self.folded is not None
            return wrapper_dtype(self.folded, self.ctx, self.tf)
        if astype is None:
            return None
        args = astype.args
        if (
            len(args) != 1
            or args[0].star
            or (args[0].keyword is not None and args[0].keyword.value != "dtype")
        ):
            raise Refusal(
                "only `.astype(dtype)` with a single dtype argument can be folded into `dtype=`"
            )
        return self.dtype(args[0].value)

    def natural_dtype(self, sample_kind: str) -> Dtype | None:
        """The dtype `tf.constant(<sample>)` gives the host value (NumPy's
        float64, a Python float's float32), when that conversion is folded."""
        if self.folded is None or self.folded.dtype is not None:
            return None
        qualified = self.ctx.names.qualified_name(self.folded.call.func)
        if qualified not in TF_WRAPPERS or sample_kind not in self.natural:
            return None
        name = self.natural[sample_kind]
        return Dtype(f"{self.tf}.{name}", sample_kind, name)

    def context_dtype(self, integer: bool = False) -> Dtype | None:
        """`x.dtype` when the sample meets an array or tensor `x` in arithmetic
        or a comparison (`y_pred + noise`, `y_pred + 0.1 * noise`, `x * mask`,
        also through a local name: `noise = ...; y_pred + noise`): NumPy's
        array would have been converted to `x`'s dtype there, so sampling in
        it (or casting integers to it) keeps the result's dtype.

        `x` qualifies when it is a tensor name, or a name whose `.shape` the
        call itself uses (`size=x.shape`): it then has a `.dtype`; and when
        it can be read where the sample is drawn (a parameter, a name of the
        call itself, or an operand in the sample's own expression). None when
        nothing qualifies; an integer sample meeting an operand of unknown
        dtype is refused (its int64 would clash with a float tensor)."""
        for use in self.uses:
            if use.meets is None or use.boolean:
                continue
            name = self.dtype_name(use.meets)
            if name is not None and (not use.names or self._readable_at_site(name)):
                return Dtype(f"{name}.dtype", UNKNOWN)
            if integer and use.kind is UseKind.DTYPE:
                raise Refusal(
                    f"the integer sample meets `{self.code(use.meets)}`, whose dtype is not "
                    "known: NumPy's array would take that dtype; add `.astype(dtype)`"
                )
        return None

    def _readable_at_site(self, name: str) -> bool:
        function = self.site.function
        params = (
            {p.name.value for p in function.node.params.params} if function is not None else set()
        )
        return name in params or name in self._shape_names()

    def sample_dtype(
        self, sample_kind: str, explicit: Dtype | None
    ) -> tuple[Dtype | None, Dtype | None]:
        """(dtype to sample in, dtype to cast the sample to afterwards).

        `explicit` is the NumPy array's dtype the code asks for (`.astype`,
        `dtype=`). Combined with a tensor `x`, the array is converted to
        `x.dtype`: the sample is drawn in it directly, unless `explicit`
        changes the sample's kind (`uniform(...).astype(int)` truncates), in
        which case that conversion happens first and the cast to `x.dtype` after."""
        if explicit is None:
            explicit = self.natural_dtype(sample_kind)
        final_kind = explicit.kind if explicit is not None else sample_kind
        context = self.context_dtype(integer=final_kind in (INT, BOOL))
        if context is None:
            return explicit, None
        if explicit is None or explicit.kind in (sample_kind, UNKNOWN):
            return context, None
        return explicit, context

    def cast(self, text: str, dtype: Dtype | None) -> str:
        return text if dtype is None else f"{self.tf}.cast({text}, {dtype.code})"

    def _shape_names(self) -> set[str]:
        """Names `x` whose `x.shape` appears in the call's own arguments."""
        return {
            node.value.value
            for node, _ in iter_with_ancestors(self.site.call)
            if isinstance(node, cst.Attribute)
            and node.attr.value == "shape"
            and isinstance(node.value, cst.Name)
        }

    def dtype_name(self, node: cst.BaseExpression) -> str | None:
        """A name whose dtype `node` has (`y_pred` in `y_pred * 2` or `y_pred[:, 0]`)."""
        facts = self.site.facts
        if isinstance(node, cst.Name):
            return (
                node.value if facts.is_tensor(node) or node.value in self._shape_names() else None
            )
        if isinstance(node, cst.Subscript):
            return self.dtype_name(node.value)
        if isinstance(node, cst.UnaryOperation) and not isinstance(node.operator, cst.Not):
            return self.dtype_name(node.expression)
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, _ARITHMETIC):
            if is_number_literal(node.left):
                return self.dtype_name(node.right)
            if is_number_literal(node.right):
                return self.dtype_name(node.left)
            for side in (node.left, node.right):
                if facts.is_tensor(side):
                    return self.dtype_name(side)
        return None

    # -- operands --------------------------------------------------------------------
    def operand(self, node: cst.BaseExpression) -> str:
        """Source of `node` safe as an operand of `+` or `<`."""
        text = self.code(node)
        loose = (
            isinstance(node, _LOOSE)
            or (isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not))
            or (isinstance(node, cst.BinaryOperation) and isinstance(node.operator, _BITWISE))
        )
        return f"({text})" if loose and not node.lpar else text

    def plus_one(self, node: cst.BaseExpression) -> str:
        """`b + 1` (an exclusive bound for an inclusive `b`); literals are folded."""
        return self._written(self._plus_one(node), node)

    def _plus_one(self, node: cst.BaseExpression) -> str:
        if (
            isinstance(node, cst.BinaryOperation)
            and isinstance(node.operator, cst.Subtract)
            and not node.lpar
            and isinstance(node.right, cst.Integer)
            and not node.right.lpar
        ):
            # `randint(0, n - 1)`: the exclusive bound is `n`.
            k = int(node.right.evaluated_value)
            left = self.code(node.left)
            return left if k == 1 else f"{left} - {k - 1}"
        if is_integer_literal(node):
            value = int(node.evaluated_value) if isinstance(node, cst.Integer) else None
            if value is not None:
                return str(value + 1)
            assert isinstance(node, cst.UnaryOperation) and isinstance(node.expression, cst.Integer)
            return str(-int(node.expression.evaluated_value) + 1)
        return f"{self.operand(node)} + 1"

    # -- samples ---------------------------------------------------------------------
    def continuous(
        self, op: str, shape: str, keywords: Sequence[tuple[str, str]], dtype: Dtype | None
    ) -> str:
        """`tf.random.normal/uniform` for a float sample. A float (or unknown,
        assumed float) dtype goes into `dtype=`; an integer or boolean target
        (`.astype(np.int32)`) casts a float64 sample, as NumPy's `astype`
        truncates its float64 sample toward zero, as `tf.cast` does."""
        if dtype is not None and dtype.kind in (INT, BOOL):
            inner = self.continuous(
                op, shape, keywords, Dtype(f"{self.tf}.float64", FLOAT, "float64")
            )
            return f"{self.tf}.cast({inner}, {dtype.code})"
        return self.random_call(op, shape, keywords, dtype)

    def random_call(
        self, op: str, shape: str, keywords: Sequence[tuple[str, str]], dtype: Dtype | None
    ) -> str:
        """`tf.random.<op>(shape, k=v, ..., dtype=...)`."""
        args = [shape, *(f"{k}={v}" for k, v in keywords)]
        if dtype is not None:
            args.append(f"dtype={dtype.code}")
        return f"{self.tf}.random.{op}({', '.join(args)})"

    def integers(
        self, shape: str, minval: str | None, maxval: str, dtype: Dtype | None, default: str
    ) -> str:
        """`tf.random.uniform` over the integers `[minval, maxval)`, sampled in
        `dtype` when `tf.random.uniform` supports it, else in `default` and cast."""
        keywords = [*([("minval", minval)] if minval is not None else []), ("maxval", maxval)]
        if dtype is not None and dtype.tf_name in TF_UNIFORM_INTS:
            return self.random_call("uniform", shape, keywords, dtype)
        sample = self.random_call(
            "uniform", shape, keywords, Dtype(f"{self.tf}.{default}", INT, default)
        )
        return sample if dtype is None else f"{self.tf}.cast({sample}, {dtype.code})"

    def replace(self, text: str) -> cst.BaseExpression:
        """The replacement node for the site, keeping the parentheses around it
        and, for a call written over several lines, its layout and comments."""
        expression = cst.parse_expression(text)
        call = self.site.call
        if spans_lines(call):
            expression = expression.visit(
                KeepLayout(call, f"{self.tf}.random.", self._origins, self.ctx.code)
            )
            if comment_texts(call) - comment_texts(expression):
                raise Refusal("the call's comments would be lost; rewrite it by hand")
        target = self.target
        return expression.with_changes(lpar=target.lpar, rpar=target.rpar)

    @property
    def target(self) -> cst.BaseExpression:
        """The node the sample's text replaces: the call, its `.astype(...)`,
        or the conversion folded into it."""
        return self.folded.call if self.folded is not None else self.site.target


# -- the rule ------------------------------------------------------------------------

Rewrite = Callable[[SampleWriter, SampleSite], str]


class RandomSamplingRule(Rule):
    """A rule rewriting `<module_prefix>.<name>(...)` calls in traced code
    with `rewrites[name]`; `seed` is reported without a fix, other names
    with a finding saying they have no mapping.

    Before a sample becomes a tensor, every use of it is followed
    (`ValueUses`): a use that needs a host value refuses the rewrite, a
    conversion around it is folded (`tf.constant(<sample>, dtype=d)`) or
    rewritten (`noise.astype(d)` -> `tf.cast(noise, d)`), and the fix is
    safe only when every use is known to accept the tensor in the dtype it
    is drawn in."""

    module_prefix: ClassVar[str]
    rewrites: ClassVar[Mapping[str, Rewrite]]
    # The dtype TensorFlow gives the host value of each kind (`tf.constant(v)`).
    natural_dtypes: ClassVar[Mapping[str, str]]

    def applies_to(self, index: ModuleIndex, traced_qualnames: set[str]) -> bool:
        root = self.module_prefix.split(".")[0]
        return bool(traced_qualnames) and any(
            target == root or target.startswith(root + ".") for target in index.imports.values()
        )

    def check(self, ctx: RuleContext) -> Iterator[Violation]:
        tf, imports = ctx.tensorflow()
        for site in iter_module_calls(ctx, self.module_prefix):
            yield self.violation(ctx, site, tf, imports)

    def violation(
        self, ctx: RuleContext, site: SampleSite, tf: str, imports: tuple[ImportRequest, ...]
    ) -> Violation:
        spelling = f"`{ctx.code(site.call.func)}(...)`"
        name = site.function_name
        if name == "seed":
            return Violation(
                site.call,
                f"{spelling} in traced code runs once, at trace time, and does not seed "
                f"`tf.random`: call `{tf}.random.set_seed(...)` before tracing instead",
            )
        runs_once = (
            f"{spelling} in traced code runs once, at trace time: every call reuses the same sample"
        )
        writer = SampleWriter(ctx, site, tf, self.natural_dtypes)
        try:
            special = self.special_case(site, writer, runs_once, imports)
            if special is not None:
                return special
            self.follow_uses(ctx, site, writer)
            rewrite = self.rewrites.get(name)
            if rewrite is None:
                raise Refusal(f"`{name}` has no faithful `tf.random` mapping; rewrite it by hand")
            replacement = writer.replace(rewrite(writer, site))
            unsafe = self.unsafe_reason(ctx, site, writer)
            edits = self.edits(ctx, writer, replacement)
        except Refusal as refusal:
            return Violation(site.call, f"{runs_once}; not rewritten: {refusal}")
        message = f"Sample with `{_random_op(ctx, replacement, tf)}` on every call"
        if unsafe is not None:
            fix = CstFix(f"{message} (unsafe: {unsafe})", edits, imports, Applicability.UNSAFE)
        else:
            fix = CstFix(message, edits, imports)
        return Violation(site.call, runs_once, fix)

    def follow_uses(self, ctx: RuleContext, site: SampleSite, writer: SampleWriter) -> None:
        """Find what consumes the sample; fold a conversion right around it;
        refuse when a use needs a host value."""
        if site.function is None:
            raise Refusal("the function around the sample is not known")
        uses = ValueUses(ctx, site.function, site.facts).of_expression(site.target, site.ancestors)
        if uses and uses[0].kind is UseKind.WRAPPER:
            wrapper = uses[0].wrapper
            if wrapper is not None and wrapper.value is site.target:
                writer.folded = wrapper
                uses = uses[1:]
        writer.uses = uses
        blocker = first_of(uses, UseKind.BLOCKER)
        if blocker is not None:
            raise Refusal(f"{blocker.subject('the sample')} {blocker.reason}")
        for use in uses:
            if use.boolean and use.meets is not None and _is_arithmetic(use.node):
                raise Refusal(
                    f"{use.subject('the comparison of the sample')} {use.reason} in arithmetic: "
                    "a NumPy boolean array converts to that dtype, a boolean tensor does not; "
                    "wrap the comparison in `tf.cast`"
                )
        condition = first_of(uses, UseKind.AUTOGRAPH)
        if condition is not None:
            off = autograph_off(ctx, site.function)
            if off is not None:
                raise Refusal(
                    f"{condition.subject('the sample')} {condition.reason}: a tensor there "
                    f"needs AutoGraph, and {off}"
                )

    def unsafe_reason(self, ctx: RuleContext, site: SampleSite, writer: SampleWriter) -> str | None:
        """Why the rewrite is not proven to keep the code working (None: proven)."""
        uses = writer.uses
        unknown = first_of(uses, UseKind.UNKNOWN)
        if unknown is not None:
            return f"{unknown.subject('the sample')} {unknown.reason}"
        condition = first_of(uses, UseKind.AUTOGRAPH)
        if condition is not None:
            return (
                f"{condition.subject('the sample')} {condition.reason}: a tensor there needs "
                "AutoGraph, or TFR101's `tf.cond`"
            )
        meets = [use for use in uses if use.meets is not None and not use.boolean]
        for use in meets:
            if use.kind is UseKind.DTYPE:
                return (
                    f"{use.subject('the sample')} {use.reason}: it is drawn in "
                    f"`{ctx.code(use.meets)}`'s dtype, which is right only if that is a tensor"
                    if writer.context_dtype() is not None
                    else f"{use.subject('the sample')} {use.reason}"
                )
        names = sorted({f"`{ctx.code(use.meets)}`" for use in meets if use.meets is not None})
        if len(names) > 1:
            return f"the sample meets {', '.join(names)}, whose dtypes may differ"
        context = writer.context_dtype()
        for use in meets:
            assert use.meets is not None
            name = writer.dtype_name(use.meets)
            if context is None or name is None or context.code != f"{name}.dtype":
                return (
                    f"{use.subject('the sample')} {use.reason}, whose dtype cannot be named "
                    "where the sample is drawn"
                )
        dtype_use = first_of(uses, UseKind.DTYPE)
        if dtype_use is not None and not self.dtype_fixed(writer):
            return (
                f"{dtype_use.subject('the sample')} {dtype_use.reason}, and its dtype "
                "there was the host value's own: `.astype(dtype)` would name it"
            )
        return None

    def dtype_fixed(self, writer: SampleWriter) -> bool:
        """Whether the sample is drawn in exactly the dtype its host value had
        (a folded conversion or `.astype` names it), with no tensor met."""
        if writer.context_dtype() is not None:
            return False
        return writer.astype_dtype() is not None or any(
            writer.natural_dtype(kind) is not None for kind in writer.natural
        )

    def edits(
        self, ctx: RuleContext, writer: SampleWriter, replacement: cst.BaseExpression
    ) -> tuple[NodeEdit, ...]:
        """The sample's replacement, and each conversion it then goes through
        rewritten (`tf.constant(noise)` -> `noise`, `noise.astype(d)` ->
        `tf.cast(noise, d)`). Uses are found inside out, so a conversion
        that contains the sample or an earlier conversion
        (`tf.constant(noise.astype(d))`) carries their replacements."""
        replaced: dict[int, tuple[cst.CSTNode, cst.BaseExpression]] = {
            id(writer.target): (writer.target, replacement)
        }
        for use in writer.uses:
            wrapper = use.wrapper
            if use.kind is not UseKind.WRAPPER or wrapper is None:
                continue
            value: cst.CSTNode = wrapper.value
            for key, (node, new) in list(replaced.items()):
                if _contains(value, node):
                    value = value.deep_replace(node, new)
                    del replaced[key]
            text = ctx.code(value)
            replaced[id(wrapper.call)] = (
                wrapper.call,
                wrapper_replacement(wrapper, ctx, writer.tf, text),
            )
        return tuple(NodeEdit(node, new) for node, new in replaced.values())

    def special_case(
        self,
        site: SampleSite,
        writer: SampleWriter,
        message: str,
        imports: tuple[ImportRequest, ...],
    ) -> Violation | None:
        """A violation for a call that is not a plain sample (None: not special)."""
        return None


def _random_op(ctx: RuleContext, replacement: cst.CSTNode, tf: str) -> str:
    """`tf.random.normal`: the `tf.random` function a replacement calls."""
    for node, _ in iter_with_ancestors(replacement):
        if isinstance(node, cst.Call):
            func = ctx.code(node.func)
            if func.startswith(f"{tf}.random."):
                return func
    return f"{tf}.random"


def _is_arithmetic(node: cst.CSTNode) -> bool:
    if isinstance(node, cst.BinaryOperation):
        return isinstance(node.operator, _ARITHMETIC)
    return isinstance(node, cst.AugAssign)


def _contains(root: cst.CSTNode, node: cst.CSTNode) -> bool:
    return any(found is node for found, _ in iter_with_ancestors(root))


def autograph_off(ctx: RuleContext, function: FunctionScope) -> str | None:
    """Why the traced code around `function` runs without AutoGraph, or None
    when AutoGraph may apply: `@tf.function(autograph=False)`, or a loss given
    to Keras `compile` (Keras 3 traces its train step without AutoGraph)."""
    outer: FunctionScope | None = function
    while outer is not None:
        traced = outer.traced
        if traced is not None and not traced.reason.startswith(("called from", "nested in")):
            info = ctx.index.functions.get(outer.qualname)
            if info is not None:
                for keywords in info.decorator_keywords.values():
                    if keywords.get("autograph", "").strip() == "False":
                        return f"`{outer.node.name.value}` is traced with `autograph=False`"
            if traced.reason.startswith("given to compile"):
                return (
                    f"Keras traces `{outer.node.name.value}`, a loss given to `compile`, "
                    "without AutoGraph"
                )
            return None
        outer = outer.parent
    return None
