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
from dataclasses import dataclass
from typing import ClassVar

import libcst as cst

from tfrewrite.analysis.index import ModuleIndex
from tfrewrite.analysis.tensors import is_python_number
from tfrewrite.analysis.walk import iter_with_ancestors
from tfrewrite.context import RuleContext
from tfrewrite.rules.base import CstFix, ImportRequest, NodeEdit, Rule, Violation
from tfrewrite.transforms.call_layout import KeepLayout, comment_texts, spans_lines
from tfrewrite.transforms.traced_calls import (
    Refusal,
    SampleSite,
    is_integer_literal,
    is_none,
    is_number_literal,
    iter_module_calls,
)

# -- dtypes --------------------------------------------------------------------------


FLOAT, INT, BOOL, UNKNOWN = "float", "int", "bool", "unknown"

# NumPy dtype names (attributes of `numpy`, or strings) and their TensorFlow names.
_DTYPE_NAMES: dict[str, tuple[str, str]] = {
    "float16": ("float16", FLOAT),
    "half": ("float16", FLOAT),
    "float32": ("float32", FLOAT),
    "single": ("float32", FLOAT),
    "float64": ("float64", FLOAT),
    "double": ("float64", FLOAT),
    "float_": ("float64", FLOAT),
    "int8": ("int8", INT),
    "int16": ("int16", INT),
    "int32": ("int32", INT),
    "int64": ("int64", INT),
    "uint8": ("uint8", INT),
    "uint16": ("uint16", INT),
    "uint32": ("uint32", INT),
    "uint64": ("uint64", INT),
    "bool_": ("bool", BOOL),
    "bool": ("bool", BOOL),
}
# Python builtins as NumPy reads them: `float` is float64, `int` is int64.
_BUILTIN_DTYPES = {"float": ("float64", FLOAT), "int": ("int64", INT), "bool": ("bool", BOOL)}
# `tf.random.uniform` samples integers only in these dtypes.
TF_UNIFORM_INTS = frozenset({"int32", "int64"})


@dataclass(frozen=True)
class Dtype:
    """A dtype to write (`tf.float32`, `y_pred.dtype`) and what kind it is;
    `tf_name` is the TensorFlow name when it is known statically."""

    code: str
    kind: str
    tf_name: str | None = None


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
# Attributes an array and a tensor share (`astype` is folded before this check).
_TENSOR_ATTRIBUTES = frozenset({"shape", "dtype", "ndim", "astype"})
# Builtins that need a Python value: given a symbolic tensor they fail under tracing.
_HOST_BUILTINS = frozenset(
    {
        "int",
        "float",
        "bool",
        "complex",
        "round",
        "range",
        "str",
        "list",
        "tuple",
        "sorted",
        "sum",
        "min",
        "max",
        "len",
    }
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

    def __init__(self, ctx: RuleContext, site: SampleSite, tf: str) -> None:
        self.ctx = ctx
        self.site = site
        self.tf = tf
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
        qualified = self.ctx.names.qualified_name(node)
        if qualified is not None:
            module, _, leaf = qualified.rpartition(".")
            if module == "numpy" and leaf in _DTYPE_NAMES:
                tf_name, kind = _DTYPE_NAMES[leaf]
                return Dtype(f"{self.tf}.{tf_name}", kind, tf_name)
            if module in ("tensorflow", "tensorflow.dtypes") and leaf in _DTYPE_NAMES:
                tf_name, kind = _DTYPE_NAMES[leaf]
                return Dtype(self.code(node), kind, tf_name)
        elif isinstance(node, cst.Name) and node.value in _BUILTIN_DTYPES:
            tf_name, kind = _BUILTIN_DTYPES[node.value]
            return Dtype(f"{self.tf}.{tf_name}", kind, tf_name)
        if isinstance(node, cst.SimpleString) and node.evaluated_value in _DTYPE_NAMES:
            tf_name, kind = _DTYPE_NAMES[str(node.evaluated_value)]
            return Dtype(f"{self.tf}.{tf_name}", kind, tf_name)
        if isinstance(node, cst.Attribute) and node.attr.value == "dtype":
            return Dtype(self.code(node), UNKNOWN)
        raise Refusal(f"the dtype `{self.code(node)}` has no known TensorFlow counterpart")

    def astype_dtype(self) -> Dtype | None:
        """The dtype of a trailing `.astype(dtype)`, folded into the sample."""
        astype = self.site.astype
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

    def context_dtype(self, integer: bool = False) -> Dtype | None:
        """`x.dtype` when the sample is combined arithmetically with an array or
        tensor `x` (`y_pred + noise`, `y_pred + 0.1 * noise`, `x * mask`):
        NumPy's array would have been converted to `x`'s dtype there, so
        sampling in it (or casting integers to it) keeps the result's dtype.

        `x` qualifies when it is a tensor name, or a name whose `.shape` the
        call itself uses (`size=x.shape`): it then has a `.dtype`. Python
        number operands are looked through. None when nothing is combined;
        an integer sample combined with an operand of unknown dtype is
        refused (its int64 would clash with a float tensor)."""
        child: cst.CSTNode = self.site.target
        for parent in reversed(self.site.ancestors):
            if not (
                isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, _ARITHMETIC)
            ):
                return None
            other = parent.right if parent.left is child else parent.left
            if not is_number_literal(other):
                name = self._dtype_name(other)
                if name is not None:
                    return Dtype(f"{name}.dtype", UNKNOWN)
                if integer:
                    raise Refusal(
                        f"the integer sample is combined with `{self.code(other)}`, "
                        "whose dtype is not known: NumPy's array would take that dtype; "
                        "add `.astype(dtype)`"
                    )
                return None
            child = parent
        return None

    def sample_dtype(
        self, sample_kind: str, explicit: Dtype | None
    ) -> tuple[Dtype | None, Dtype | None]:
        """(dtype to sample in, dtype to cast the sample to afterwards).

        `explicit` is the NumPy array's dtype the code asks for (`.astype`,
        `dtype=`). Combined with a tensor `x`, the array is converted to
        `x.dtype`: the sample is drawn in it directly, unless `explicit`
        changes the sample's kind (`uniform(...).astype(int)` truncates), in
        which case that conversion happens first and the cast to `x.dtype` after."""
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

    def _dtype_name(self, node: cst.BaseExpression) -> str | None:
        """A name whose dtype `node` has (`y_pred` in `y_pred * 2` or `y_pred[:, 0]`)."""
        facts = self.site.facts
        if isinstance(node, cst.Name):
            return (
                node.value if facts.is_tensor(node) or node.value in self._shape_names() else None
            )
        if isinstance(node, cst.Subscript):
            return self._dtype_name(node.value)
        if isinstance(node, cst.UnaryOperation) and not isinstance(node.operator, cst.Not):
            return self._dtype_name(node.expression)
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, _ARITHMETIC):
            if is_number_literal(node.left):
                return self._dtype_name(node.right)
            if is_number_literal(node.right):
                return self._dtype_name(node.left)
            for side in (node.left, node.right):
                if facts.is_tensor(side):
                    return self._dtype_name(side)
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

    def require_tensor_consumer(self) -> None:
        """Refuse when what consumes the sample needs a host value: a tensor
        in its place would fail (`int(...)`, `np.clip(...)`, `math.exp(...)`)
        or lacks the NumPy method called on it (`.reshape`, `.tolist()`).
        Arithmetic, unary signs, indexing and list or tuple displays around the
        sample are looked through."""
        ancestors = self.site.ancestors
        child: cst.CSTNode = self.site.target
        for depth in range(len(ancestors) - 1, -1, -1):
            parent = ancestors[depth]
            if isinstance(parent, cst.BinaryOperation) or (
                isinstance(parent, cst.UnaryOperation) and not isinstance(parent.operator, cst.Not)
            ):
                child = parent
                continue
            if isinstance(parent, cst.Subscript) and parent.value is child:
                child = parent
                continue
            if isinstance(parent, (cst.Element, cst.List, cst.Tuple)):
                child = parent  # `np.array([sample, 1.0])`: the container is consumed
                continue
            if isinstance(parent, cst.Attribute) and parent.value is child:
                if parent.attr.value not in _TENSOR_ATTRIBUTES:
                    raise Refusal(
                        f"the sample's `.{parent.attr.value}` is NumPy array API a tensor lacks"
                    )
            elif (
                isinstance(parent, cst.Arg)
                and depth > 0
                and isinstance(ancestors[depth - 1], cst.Call)
            ):
                consumer = self._host_consumer(ancestors[depth - 1])
                if consumer is not None:
                    raise Refusal(
                        f"the sample is passed to `{consumer}(...)`, which needs a Python or "
                        "NumPy value: a tensor there fails under tracing"
                    )
            return

    def _host_consumer(self, call: cst.Call) -> str | None:
        """The name of a function that needs a host value, or None."""
        qualified = self.ctx.names.qualified_name(call.func)
        if qualified is None:
            if isinstance(call.func, cst.Name) and call.func.value in _HOST_BUILTINS:
                return call.func.value
            return None
        if qualified.startswith(("numpy.random.", "random.")):
            return None  # another sample: reported (and rewritten) on its own
        if qualified.split(".")[0] in ("numpy", "math", "random", "statistics"):
            return self.code(call.func)
        return None

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
        target = self.site.target
        return expression.with_changes(lpar=target.lpar, rpar=target.rpar)


# -- the rule ------------------------------------------------------------------------

Rewrite = Callable[[SampleWriter, SampleSite], str]


class RandomSamplingRule(Rule):
    """A rule rewriting `<module_prefix>.<name>(...)` calls in traced code
    with `rewrites[name]`; `seed` is reported without a fix, other names
    with a finding saying they have no mapping."""

    module_prefix: ClassVar[str]
    rewrites: ClassVar[Mapping[str, Rewrite]]

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
        writer = SampleWriter(ctx, site, tf)
        try:
            special = self.special_case(site, writer, runs_once, imports)
            if special is not None:
                return special
            writer.require_tensor_consumer()
            rewrite = self.rewrites.get(name)
            if rewrite is None:
                raise Refusal(f"`{name}` has no faithful `tf.random` mapping; rewrite it by hand")
            replacement = writer.replace(rewrite(writer, site))
        except Refusal as refusal:
            return Violation(site.call, f"{runs_once}; not rewritten: {refusal}")
        op = ctx.code(replacement).split("(", 1)[0]
        fix = CstFix(
            f"Sample with `{op}` on every call", (NodeEdit(site.target, replacement),), imports
        )
        return Violation(site.call, runs_once, fix)

    def special_case(
        self,
        site: SampleSite,
        writer: SampleWriter,
        message: str,
        imports: tuple[ImportRequest, ...],
    ) -> Violation | None:
        """A violation for a call that is not a plain sample (None: not special)."""
        return None
