"""Writing the `tf.random` source text of one host-side sample.

`SampleWriter` maps NumPy's `size=` to a `tf.random` shape, picks the dtype a
sample is drawn in (a conversion folded into it, the tensor it meets), writes
the `tf.random` call (stateless, with `seed=[S, k]`, for a seeded draw) and
the replacement node, keeping a multi-line call's layout and comments. A
mapping that cannot be made faithfully raises `Refusal`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import libcst as cst

from tfrewrite.facts.context import RuleContext
from tfrewrite.facts.tensor_kinds import is_python_number
from tfrewrite.facts.walk import iter_with_ancestors
from tfrewrite.rewrite.dtypes import (
    BOOL,
    FLOAT,
    INT,
    TF_UNIFORM_INTS,
    UNKNOWN,
    Dtype,
    tf_dtype,
)
from tfrewrite.rewrite.traced_calls import (
    Refusal,
    SampleSite,
    is_integer_literal,
    is_none,
    is_number_literal,
)
from tfrewrite.rewrite.value_uses import (
    TF_WRAPPERS,
    Use,
    UseKind,
    Wrapper,
    wrapper_dtype,
)
from tfrewrite.rules.randomness.call_layout import KeepLayout, comment_texts, spans_lines

# -- writing samples -----------------------------------------------------------------

ARITHMETIC = (
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


# Ops whose result has the dtype of their first argument (`tf.reduce_sum(x)`).
DTYPE_PRESERVING = frozenset(
    f"{namespace}{op}"
    for namespace in ("tensorflow.", "tensorflow.math.")
    for op in (
        "abs",
        "sqrt",
        "square",
        "exp",
        "log",
        "identity",
        "stop_gradient",
        "maximum",
        "minimum",
        "clip_by_value",
        "round",
        "sign",
        "add",
        "subtract",
        "multiply",
        "reduce_sum",
        "reduce_mean",
        "reduce_max",
        "reduce_min",
        "reduce_prod",
        "reduce_std",
        "reduce_variance",
        "reduce_logsumexp",
    )
)


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
        # `[S, k]` when the draw is seeded in its function: stateless ops then.
        self.seed: str | None = None
        # The `tf.random.Generator` to draw from (`tf_rng`), for a draw of a
        # NumPy generator object: its methods then replace `tf.random` ops.
        self.generator: str | None = None
        # A comparison of the sample to cast to the dtype it meets in arithmetic.
        self.mask_cast: tuple[cst.Comparison, str] | None = None
        # Conversions of the sample or of its comparison (by `id` of the call) cast
        # to another dtype than their own: the tensor's the converted value meets
        # (`x.dtype`; masks.py, conversions.py).
        self.recast: dict[int, str] = {}
        # Conversions of a plain sample (by `id` of the call) dropped: the sample
        # is drawn in the dtype of the tensor the converted value meets.
        self.dropped: set[int] = set()
        # The kind (`FLOAT`, `INT`, ...) of the sample as drawn, before any
        # conversion of it that is not folded in; None until `sample_dtype`.
        self.drawn_kind: str | None = None
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
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, ARITHMETIC):
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
            if name is not None and (not use.names or self.readable_at_site(name)):
                return Dtype(f"{name}.dtype", UNKNOWN)
            if integer and use.kind is UseKind.DTYPE:
                raise Refusal(
                    f"the integer sample meets `{self.code(use.meets)}`, whose dtype is not "
                    "known: NumPy's array would take that dtype; add `.astype(dtype)`"
                )
        return None

    def is_number(self, node: cst.BaseExpression) -> bool:
        """A Python number, as the tensor facts know one (a literal, a local
        bound only to numbers)."""
        return is_python_number(node) or self.site.facts._is_number(node)  # noqa: SLF001

    def readable_at_site(self, name: str) -> bool:
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
        self.drawn_kind = final_kind
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

    def met_dtype_name(self, converted: Sequence[Use]) -> str | None:
        """The one nameable tensor whose dtype every converted use meets in
        arithmetic, when nothing else reads the conversion: a NumPy array
        converted there took that tensor's dtype, so a cast to
        `<name>.dtype` computes as eager did. None otherwise."""
        met = [u for u in converted if u.kind is UseKind.TENSOR and u.meets is not None]
        if not met or any(u.kind is not UseKind.TENSOR for u in converted):
            return None
        names = {self.dtype_name(u.meets) for u in met if u.meets is not None}
        if len(names) != 1:
            return None
        name = names.pop()
        if name is None or not (all(not u.names for u in met) or self.readable_at_site(name)):
            return None
        return name

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
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, ARITHMETIC):
            if is_number_literal(node.left):
                return self.dtype_name(node.right)
            if is_number_literal(node.right):
                return self.dtype_name(node.left)
            for side in (node.left, node.right):
                if facts.is_tensor(side):
                    return self.dtype_name(side)
        if isinstance(node, cst.Call) and node.args and node.args[0].keyword is None:
            if self.ctx.names.qualified_name(node.func) in DTYPE_PRESERVING:
                return self.dtype_name(node.args[0].value)
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
        """`tf.random.<op>(shape, k=v, ..., dtype=...)`, or
        `tf.random.stateless_<op>(shape, seed=[S, k], ...)` for a seeded draw."""
        args = [shape, *(f"{k}={v}" for k, v in keywords)]
        if dtype is not None:
            args.append(f"dtype={dtype.code}")
        if self.generator is not None:
            return f"{self.generator}.{op}({', '.join(args)})"
        if self.seed is not None:
            args.insert(1, f"seed={self.seed}")
            op = f"stateless_{op}"
        return f"{self.tf}.random.{op}({', '.join(args)})"

    def shuffle(self, value: str) -> str:
        """`tf.random.shuffle(value)`, stateless for a seeded draw."""
        if self.generator is not None:
            raise Refusal(
                "`tf.random.Generator` has no shuffle: a `tf.random.shuffle` would not draw "
                "from the generator's stream"
            )
        if self.seed is not None:
            return f"{self.tf}.random.experimental.stateless_shuffle({value}, seed={self.seed})"
        return f"{self.tf}.random.shuffle({value})"

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
        if self.folded is not None and self.folded.name is not None:
            text = f"{self.tf}.identity({text}, name={self.code(self.folded.name)})"
        expression = cst.parse_expression(text)
        call = self.site.call
        if spans_lines(call):
            prefix = f"{self.generator}." if self.generator else f"{self.tf}.random."
            expression = expression.visit(KeepLayout(call, prefix, self._origins, self.ctx.code))
            if comment_texts(call) - comment_texts(expression):
                raise Refusal("the call's comments would be lost; rewrite it by hand")
        target = self.target
        return expression.with_changes(lpar=target.lpar, rpar=target.rpar)

    @property
    def target(self) -> cst.BaseExpression:
        """The node the sample's text replaces: the call, its `.astype(...)`,
        or the conversion folded into it."""
        return self.folded.call if self.folded is not None else self.site.target
