"""TFR104: NumPy math on tensors in traced code, rewritten into TensorFlow ops.

NumPy converts its arguments to arrays on the host. An eager tensor converts
(it holds a value), so `np.mean(np.square(y_true - y_pred))` works when run
eagerly; a symbolic tensor, which is what a traced function sees, has no value
yet and the call raises `NotImplementedError: Cannot convert a symbolic
tf.Tensor to a numpy array`. The TensorFlow op with the same semantics runs in
the graph instead.

A call is looked at only when one of its array operands is a tensor by the
shared analysis, or a NumPy call this rule rewrites that takes a tensor (so
`np.mean(np.square(y_true - y_pred))` is two findings, fixed from the inside
out). NumPy on Python values is fine under tracing and is left alone.

The rewrite edits the call in place: the callee changes, NumPy's parameters are
renamed to TensorFlow's, defaults that change nothing are dropped, and the
arguments keep their text, layout and comments.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import libcst as cst

from tfrewrite.analysis.index import ModuleIndex
from tfrewrite.analysis.tensors import (
    FLOATING,
    NOT_TENSOR,
    TENSOR,
    TensorFacts,
    TensorKind,
    is_python_number,
)
from tfrewrite.analysis.walk import comments_in, iter_nodes
from tfrewrite.context import RuleContext
from tfrewrite.findings import Applicability
from tfrewrite.rules.base import CstFix, ImportRequest, Invalid, NodeEdit, Rule, Valid, Violation
from tfrewrite.rules.random_mapping import Refusal, SampleSite, is_none, iter_module_calls

# How the result's dtype relates to the operands', in NumPy and in TensorFlow.
# Each class has its own rule for integer, boolean and unknown operands.
MEAN = "mean"  # NumPy: float64 for integers and booleans; TF: the input dtype
ACCUMULATE = "accumulate"  # NumPy: int64 for integers and booleans; TF: the input dtype
FLOAT_ONLY = "float-only"  # NumPy: a float dtype for integers; TF: floating inputs only
ROUNDING = "rounding"  # NumPy: integers unchanged; TF: floating inputs only
PRESERVE = "preserve"  # the input dtype in both (NumPy promotes with a Python float)
SELECT = "select"  # `where`: the values' dtype in both
JOIN = "join"  # `concatenate` / `stack`: the elements' dtype in both
UNMAPPED = "unmapped"  # no faithful TensorFlow op without facts tfrewrite lacks


# Why a NumPy parameter that TensorFlow lacks cannot be dropped.
_PARAMETER_REASONS = {
    "dtype": "`dtype=` changes the dtype NumPy computes in; cast the tensor with `tf.cast` first",
    "out": "`out=` writes into an existing array, and tensors are immutable",
    "where": "`where=` masks elements, and the TensorFlow op has no mask",
    "initial": "`initial=` seeds the reduction, and the TensorFlow op has no such argument",
    "ddof": "only `ddof=0` (divide by N) matches TensorFlow's `reduce_std`/`reduce_variance`",
    "decimals": "`tf.round` rounds to integers only",
}


@dataclass(frozen=True)
class Mapping:
    """How one NumPy function becomes one TensorFlow op.

    `params` are NumPy's parameters in positional order; `data` those holding
    arrays; `renamed` maps NumPy parameters to the TensorFlow parameter they
    become; `droppable` gives, for parameters TensorFlow lacks, the source text
    of the value that changes nothing (`dtype=None`, `ddof=0`); any other value
    of a parameter outside `data` and `renamed` is refused.
    `tf_positional` are TensorFlow's leading positional parameters: an
    argument stays positional only where it lands at its TensorFlow position.
    """

    tf_op: str
    params: tuple[str, ...]
    category: str
    data: tuple[str, ...] = ("a",)
    renamed: dict[str, str] = field(default_factory=dict)
    droppable: dict[str, str] = field(default_factory=dict)
    tf_positional: tuple[str, ...] = ()


def _reduction(tf_op: str, category: str, params: tuple[str, ...]) -> Mapping:
    droppable = {"dtype": "None", "out": "None", "initial": "None", "where": "True", "ddof": "0"}
    return Mapping(
        tf_op,
        params,
        category,
        renamed={"a": "input_tensor", "axis": "axis", "keepdims": "keepdims"},
        droppable={p: v for p, v in droppable.items() if p in params},
        tf_positional=("input_tensor", "axis", "keepdims"),
    )


def _unary(tf_op: str, category: str) -> Mapping:
    return Mapping(tf_op, ("x",), category, ("x",), {"x": "x"}, tf_positional=("x",))


def _binary(tf_op: str) -> Mapping:
    return Mapping(
        tf_op,
        ("x1", "x2"),
        PRESERVE,
        ("x1", "x2"),
        {"x1": "x", "x2": "y"},
        tf_positional=("x", "y"),
    )


_SUM_PARAMS = ("a", "axis", "dtype", "out", "keepdims", "initial", "where")
_MAX_PARAMS = ("a", "axis", "out", "keepdims", "initial", "where")
_MEAN_PARAMS = ("a", "axis", "dtype", "out", "keepdims", "where")
_STD_PARAMS = ("a", "axis", "dtype", "out", "ddof", "keepdims", "where")

_ROUND = Mapping(
    "round",
    ("a", "decimals", "out"),
    ROUNDING,
    renamed={"a": "x"},
    droppable={"decimals": "0", "out": "None"},
    tf_positional=("x",),
)

MAPPINGS: dict[str, Mapping] = {
    "mean": _reduction("reduce_mean", MEAN, _MEAN_PARAMS),
    "std": _reduction("math.reduce_std", MEAN, _STD_PARAMS),
    "var": _reduction("math.reduce_variance", MEAN, _STD_PARAMS),
    "sum": _reduction("reduce_sum", ACCUMULATE, _SUM_PARAMS),
    "prod": _reduction("reduce_prod", ACCUMULATE, _SUM_PARAMS),
    "max": _reduction("reduce_max", PRESERVE, _MAX_PARAMS),
    "amax": _reduction("reduce_max", PRESERVE, _MAX_PARAMS),
    "min": _reduction("reduce_min", PRESERVE, _MAX_PARAMS),
    "amin": _reduction("reduce_min", PRESERVE, _MAX_PARAMS),
    "square": _unary("square", PRESERVE),
    "abs": _unary("abs", PRESERVE),
    "absolute": _unary("abs", PRESERVE),
    "sign": _unary("sign", PRESERVE),
    "sqrt": _unary("sqrt", FLOAT_ONLY),
    "exp": _unary("exp", FLOAT_ONLY),
    "log": _unary("math.log", FLOAT_ONLY),
    "log1p": _unary("math.log1p", FLOAT_ONLY),
    "tanh": _unary("tanh", FLOAT_ONLY),
    "floor": _unary("floor", ROUNDING),
    "ceil": _unary("math.ceil", ROUNDING),
    # Both round half to even (`2.5` -> `2.0`), measured on NumPy 2 and TensorFlow 2.21.
    "round": _ROUND,
    "around": _ROUND,
    "maximum": _binary("maximum"),
    "minimum": _binary("minimum"),
    # NumPy 2.1 also spells the bounds `min=` / `max=`.
    "clip": Mapping(
        "clip_by_value",
        ("a", "a_min", "a_max", "out", "min", "max"),
        PRESERVE,
        renamed={
            "a": "t",
            "a_min": "clip_value_min",
            "a_max": "clip_value_max",
            "min": "clip_value_min",
            "max": "clip_value_max",
        },
        droppable={"out": "None"},
        tf_positional=("t", "clip_value_min", "clip_value_max"),
    ),
    "where": Mapping(
        "where",
        ("condition", "x", "y"),
        SELECT,
        ("condition", "x", "y"),
        {"condition": "condition", "x": "x", "y": "y"},
        tf_positional=("condition", "x", "y"),
    ),
    "concatenate": Mapping(
        "concat",
        ("arrays", "axis", "out", "dtype", "casting"),
        JOIN,
        ("arrays",),
        {"arrays": "values", "axis": "axis"},
        {"out": "None", "dtype": "None"},
        tf_positional=("values", "axis"),
    ),
    "stack": Mapping(
        "stack",
        ("arrays", "axis", "out", "dtype", "casting"),
        JOIN,
        ("arrays",),
        {"arrays": "values", "axis": "axis"},
        {"out": "None", "dtype": "None"},
        tf_positional=("values", "axis"),
    ),
    # Found, so that they are reported, but never rewritten (see `_UNMAPPED_REASONS`).
    "matmul": Mapping("", ("x1", "x2"), UNMAPPED, ("x1", "x2")),
    "dot": Mapping("", ("a", "b"), UNMAPPED, ("a", "b")),
}

_UNMAPPED_REASONS = {
    "matmul": (
        "the operands' ranks are not known: NumPy treats a 1-D operand as a vector, "
        "`tf.linalg.matmul` needs rank 2 or more; use `tf.linalg.matmul` (or `@`) when both "
        "are matrices"
    ),
    "dot": (
        "the operands' ranks are not known: `np.dot` is an inner product on vectors, a matrix "
        "product on matrices and a sum over the last axis otherwise; use `tf.linalg.matmul` "
        "or `tf.tensordot` as the ranks require"
    ),
}


# -- tensors, including the results of NumPy calls this rule rewrites ----------------


def _numpy_function(node: cst.CSTNode, ctx: RuleContext) -> str | None:
    """`mean` for a call to `numpy.mean` (any import spelling), else None."""
    if not isinstance(node, cst.Call):
        return None
    qualified = ctx.names.qualified_name(node.func)
    if qualified is None or not qualified.startswith("numpy."):
        return None
    name = qualified[len("numpy.") :]
    return name if name in MAPPINGS else None


def _is_python_float(node: cst.BaseExpression) -> bool:
    """A Python number literal expression whose value is a float."""
    if not is_python_number(node):
        return False
    if isinstance(node, cst.Float):
        return True
    if isinstance(node, cst.UnaryOperation):
        return _is_python_float(node.expression)
    if isinstance(node, cst.BinaryOperation):
        return (
            isinstance(node.operator, cst.Divide)
            or _is_python_float(node.left)
            or _is_python_float(node.right)
        )
    return False


class Operands:
    """Tensor facts for one traced function, extended to the results of NumPy
    calls this rule rewrites: `np.square(y_true - y_pred)` is a floating-point
    tensor once rewritten, so `np.mean` around it is a finding too."""

    def __init__(self, ctx: RuleContext, facts: TensorFacts) -> None:
        self.ctx = ctx
        self.facts = facts
        self._bindings: dict[str, list[cst.BaseExpression | None]] | None = None
        self._visiting: set[str] = set()

    def kind(self, node: cst.BaseExpression) -> TensorKind:
        known = self.facts.kind(node)
        if known.tensor and not (known.boolean or known.integer or known.floating):
            logical = self._logical_kind(node)
            if logical is not None:
                return logical
        if known.tensor:
            return known
        if isinstance(node, cst.Name):
            return self._name_kind(node.value)
        name = _numpy_function(node, self.ctx)
        if name is not None:
            assert isinstance(node, cst.Call)
            return self._numpy_result(name, node)
        if isinstance(node, cst.BinaryOperation):
            left, right = self.kind(node.left), self.kind(node.right)
            if not (left.tensor or right.tensor):
                return NOT_TENSOR
            floating = (
                left.floating
                or right.floating
                or _is_python_float(node.left)
                or _is_python_float(node.right)
                or isinstance(node.operator, cst.Divide)
            )
            return FLOATING if floating else TENSOR
        if isinstance(node, cst.UnaryOperation) and not isinstance(node.operator, cst.Not):
            inner = self.kind(node.expression)
            return TensorKind(inner.tensor, floating=inner.floating, integer=inner.integer)
        if isinstance(node, cst.Subscript):
            base = self.kind(node.value)
            return TensorKind(base.tensor, floating=base.floating, integer=base.integer)
        return NOT_TENSOR

    def _logical_kind(self, node: cst.BaseExpression) -> TensorKind | None:
        """`~m`, `m & n`, `m | n`, `m ^ n` of boolean tensors are boolean
        (`np.mean(~mask)` averages booleans: NumPy in float64)."""
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.BitInvert):
            inner = self.kind(node.expression)
            return inner if inner.boolean else None
        if isinstance(node, cst.BinaryOperation) and isinstance(
            node.operator, (cst.BitAnd, cst.BitOr, cst.BitXor)
        ):
            left, right = self.kind(node.left), self.kind(node.right)
            if left.boolean and right.boolean:
                return TensorKind(True, boolean=True)
        return None

    def _name_kind(self, name: str) -> TensorKind:
        """A local name every binding of which is a plain assignment of a
        tensor, counting the NumPy calls this rule rewrites (`err =
        np.square(y_true - y_pred)`): the shared analysis will know it for a
        tensor once those are rewritten, so it is reported in the same run."""
        if self._bindings is None:
            self._bindings = _local_bindings(self.facts.function)
        values = self._bindings.get(name)
        if not values or name in self.facts.params or name in self._visiting:
            return NOT_TENSOR
        self._visiting.add(name)
        try:
            kinds = [self.kind(value) if value is not None else NOT_TENSOR for value in values]
        finally:
            self._visiting.discard(name)
        if not all(k.tensor for k in kinds):
            return NOT_TENSOR
        return TensorKind(
            True,
            floating=all(k.floating for k in kinds),
            integer=all(k.integer for k in kinds),
            boolean=all(k.boolean for k in kinds),
        )

    def _numpy_result(self, name: str, call: cst.Call) -> TensorKind:
        mapping = MAPPINGS[name]
        if mapping.category == UNMAPPED:
            return NOT_TENSOR  # stays NumPy: reported on its own, never a tensor
        data = self.data_operands(mapping, call)
        if mapping.category == SELECT:
            data = data[1:]  # the condition does not give the result its dtype
        kinds = [self.kind(node) for node in data]
        tensors = [k for k in kinds if k.tensor]
        if not tensors:
            return NOT_TENSOR
        if mapping.category == MEAN or all(k.floating for k in tensors):
            return FLOATING
        if mapping.category in (PRESERVE, SELECT, JOIN) and all(k.integer for k in tensors):
            return TensorKind(True, integer=True)
        return TENSOR

    def data_operands(self, mapping: Mapping, call: cst.Call) -> list[cst.BaseExpression]:
        """The array operands of a call, found leniently (before binding): the
        positional and keyword arguments of the data parameters; the elements
        of a list or tuple display for `concatenate`/`stack`."""
        found: list[cst.BaseExpression] = []
        for position, arg in enumerate(call.args):
            if arg.star:
                continue
            param = (
                arg.keyword.value
                if arg.keyword is not None
                else (mapping.params[position] if position < len(mapping.params) else None)
            )
            if param in mapping.data:
                found.append(arg.value)
        if mapping.category == JOIN:
            return [
                element.value
                for sequence in found
                if isinstance(sequence, (cst.List, cst.Tuple))
                for element in sequence.elements
                if not isinstance(element, cst.StarredElement)
            ]
        return found


def _local_bindings(function: cst.FunctionDef) -> dict[str, list[cst.BaseExpression | None]]:
    """Every binding of each local name of `function` (nested functions and
    classes excluded): the assigned value for `name = value`, None for any
    other way of binding it (augmented assignment, tuple target, loop
    variable, `with ... as`, walrus, import, nested `def`, ...)."""
    bindings: dict[str, list[cst.BaseExpression | None]] = {}

    def unknown(target: cst.CSTNode | None) -> None:
        for node in iter_nodes(target) if target is not None else ():
            if isinstance(node, cst.Name):
                bindings.setdefault(node.value, []).append(None)

    for node in iter_nodes(function.body, into_functions=False):
        if isinstance(node, cst.Assign):
            for target in node.targets:
                if isinstance(target.target, cst.Name):
                    bindings.setdefault(target.target.value, []).append(node.value)
                elif isinstance(target.target, (cst.Tuple, cst.List, cst.StarredElement)):
                    unknown(target.target)
        elif isinstance(node, cst.AnnAssign) and isinstance(node.target, cst.Name):
            bindings.setdefault(node.target.value, []).append(node.value)
        elif isinstance(node, (cst.AugAssign, cst.For, cst.CompFor, cst.NamedExpr)):
            unknown(node.target)
        elif isinstance(node, cst.WithItem) and node.asname is not None:
            unknown(node.asname.name)
        elif isinstance(node, cst.ExceptHandler) and node.name is not None:
            unknown(node.name.name)
        elif isinstance(node, (cst.Import, cst.ImportFrom)) and not isinstance(
            node.names, cst.ImportStar
        ):
            for alias in node.names:
                unknown(alias.asname.name if alias.asname else alias.name)
        elif isinstance(node, (cst.Global, cst.Nonlocal)):
            for item in node.names:
                unknown(item.name)
        elif isinstance(node, (cst.FunctionDef, cst.ClassDef)) and node is not function:
            unknown(node.name)
        elif isinstance(node, (cst.MatchAs, cst.MatchStar)) and node.name is not None:
            unknown(node.name)
    return bindings


# -- binding and writing -------------------------------------------------------------


@dataclass
class Bound:
    """A call's arguments by NumPy parameter name, with the `cst.Arg` each came from."""

    args: dict[str, cst.Arg]

    def value(self, param: str) -> cst.BaseExpression | None:
        arg = self.args.get(param)
        return arg.value if arg is not None else None


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def bind(call: cst.Call, mapping: Mapping) -> Bound:
    """Arguments by NumPy parameter; refuses `*`/`**` unpacking and
    parameters the mapping has no place for."""
    args: dict[str, cst.Arg] = {}
    for position, arg in enumerate(call.args):
        if arg.star:
            raise Refusal(
                f"the unpacked argument `{arg.star}{_code(arg.value)}` hides which "
                "parameters are passed"
            )
        if arg.keyword is None:
            if position >= len(mapping.params):
                raise Refusal(f"it takes at most {len(mapping.params)} positional arguments here")
            param = mapping.params[position]
        else:
            param = arg.keyword.value
            if param not in mapping.params:
                raise Refusal(f"the argument `{param}=` has no TensorFlow counterpart")
        args[param] = arg
    for param, arg in args.items():
        if param in mapping.data or param in mapping.renamed:
            continue
        if _code(arg.value).strip() == mapping.droppable.get(param):
            continue
        raise Refusal(
            f"`{param}={_code(arg.value)}`: "
            + _PARAMETER_REASONS.get(param, "it has no TensorFlow counterpart")
        )
    return Bound(args)


@dataclass(frozen=True)
class OutArg:
    """One argument of the TensorFlow call: its TensorFlow parameter, its
    value, and the NumPy argument it comes from (whose layout it keeps)."""

    param: str
    value: cst.BaseExpression
    origin: cst.Arg | None


def _build_call(
    call: cst.Call, func: str, out: list[OutArg], tf_positional: tuple[str, ...]
) -> cst.Call:
    """`call` with a new callee and arguments, keeping each kept argument's
    whitespace, comma and comments, and the call's closing layout."""
    args: list[cst.Arg] = []
    positional = True
    for index, item in enumerate(out):
        positional = (
            positional
            and index < len(tf_positional)
            and tf_positional[index] == item.param
            and item.origin is not None
            and item.origin.keyword is None
        )
        base = item.origin if item.origin is not None else cst.Arg(item.value)
        base = base.with_changes(value=item.value)
        if positional:
            arg = base.with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT)
        elif base.keyword is not None:
            arg = base.with_changes(keyword=cst.Name(item.param))
        else:
            arg = base.with_changes(
                keyword=cst.Name(item.param),
                equal=cst.AssignEqual(
                    whitespace_before=cst.SimpleWhitespace(""),
                    whitespace_after=cst.SimpleWhitespace(""),
                ),
            )
        args.append(arg)
    last_original = call.args[-1] if call.args else None
    for index, arg in enumerate(args):
        if index < len(args) - 1:
            if not isinstance(arg.comma, cst.Comma):
                args[index] = arg.with_changes(
                    comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
                )
        elif last_original is not None:
            args[index] = arg.with_changes(
                comma=_closing_comma(arg.comma, last_original.comma),
                whitespace_after_arg=last_original.whitespace_after_arg,
            )
    return call.with_changes(func=cst.parse_expression(func), args=args)


def _closing_comma(
    own: cst.Comma | cst.MaybeSentinel, closing: cst.Comma | cst.MaybeSentinel
) -> cst.Comma | cst.MaybeSentinel:
    """The comma of an argument that becomes the last one: the original last
    argument's (trailing comma or none, and the line the `)` sits on), with
    the comment that ended this argument's own line."""
    if not isinstance(closing, cst.Comma):
        return closing
    if isinstance(own, cst.Comma):
        mine, theirs = own.whitespace_after, closing.whitespace_after
        if isinstance(mine, cst.ParenthesizedWhitespace) and isinstance(
            theirs, cst.ParenthesizedWhitespace
        ):
            return closing.with_changes(
                whitespace_after=theirs.with_changes(
                    first_line=mine.first_line, empty_lines=mine.empty_lines
                )
            )
    return closing


def _comments(node: cst.CSTNode) -> list[str]:
    return sorted(comment.value for comment in comments_in(node))


# -- deciding a rewrite --------------------------------------------------------------


@dataclass
class Plan:
    """The TensorFlow call for a site, and why the fix is unsafe (if it is)."""

    func: str
    out: list[OutArg]
    unsafe: list[str] = field(default_factory=list)


class Writer:
    """Decides and writes the TensorFlow call for one NumPy call on tensors."""

    def __init__(self, ctx: RuleContext, operands: Operands, tf: str) -> None:
        self.ctx = ctx
        self.operands = operands
        self.tf = tf

    def code(self, node: cst.CSTNode) -> str:
        return self.ctx.code(node)

    def plan(self, name: str, call: cst.Call) -> Plan:
        mapping = MAPPINGS[name]
        if mapping.category == UNMAPPED:
            raise Refusal(_UNMAPPED_REASONS[name])
        bound = bind(call, mapping)
        special: dict[str, Callable[[Mapping, Bound], Plan]] = {
            "clip": self._clip,
            "where": self._where,
            "concatenate": self._join,
            "stack": self._join,
        }
        handler = special.get(name)
        plan = handler(mapping, bound) if handler else self._plain(mapping, bound)
        return plan

    def _func(self, tf_op: str) -> str:
        return f"{self.tf}.{tf_op}"

    def _out(self, mapping: Mapping, bound: Bound) -> list[OutArg]:
        """Arguments that carry over, renamed, in the call's order."""
        return [
            OutArg(mapping.renamed[param], arg.value, arg)
            for param, arg in bound.args.items()
            if param in mapping.renamed
        ]

    def _plain(self, mapping: Mapping, bound: Bound) -> Plan:
        data = [bound.value(p) for p in mapping.data]
        operands = [node for node in data if node is not None]
        if len(operands) != len(mapping.data):
            raise Refusal("an array argument is missing")
        plan = Plan(self._func(mapping.tf_op), self._out(mapping, bound))
        self._check_dtypes(mapping, operands, plan)
        if mapping.category == PRESERVE and len(operands) == 2:
            first, second = operands
            if not self.operands.kind(first).tensor and self.operands.kind(second).tensor:
                # TensorFlow converts a leading Python number to its default
                # dtype (float32, int32) and then rejects a tensor of another
                # dtype: `tf.maximum(0, x)` raises for a float `x`. Both ops
                # are symmetric, so the tensor goes first: `tf.maximum(x, 0)`.
                plan.out = _swapped(plan.out, "x", "y")
        return plan

    def _check_dtypes(
        self, mapping: Mapping, operands: list[cst.BaseExpression], plan: Plan
    ) -> None:
        """Refuse, or mark unsafe, where NumPy's result dtype (or whether
        TensorFlow accepts the input at all) depends on facts not known."""
        kinds = [self.operands.kind(node) for node in operands]
        tensors = [(node, k) for node, k in zip(operands, kinds, strict=True) if k.tensor]
        floats = [node for node in operands if _is_python_float(node)]
        for node, kind in zip(operands, kinds, strict=True):
            if not kind.tensor and not is_python_number(node):
                plan.unsafe.append(
                    f"`{self.code(node)}` is not known to be a tensor or a Python number "
                    "(a NumPy array there would change the result's dtype)"
                )
        category = mapping.category
        kinds_seen = {
            ("floating" if k.floating else "integer" if k.integer else "boolean"): node
            for node, k in tensors
            if k.floating or k.integer or k.boolean
        }
        if len(kinds_seen) > 1:
            (first_kind, first), (second_kind, second) = list(kinds_seen.items())[:2]
            raise Refusal(
                f"`{self.code(first)}` is {first_kind} and `{self.code(second)}` {second_kind}: "
                "NumPy promotes them to a common dtype, TensorFlow refuses to mix them"
            )
        for node, kind in tensors:
            text = self.code(node)
            if kind.floating:
                continue
            if kind.boolean and category not in (SELECT, JOIN):
                if category == MEAN:
                    self._cast_float64(plan, node)
                    continue
                raise Refusal(
                    f"`{text}` is boolean: NumPy computes on booleans as integers, "
                    "the TensorFlow op does not accept them; cast it first"
                )
            if kind.integer or kind.boolean:
                if category == MEAN:
                    self._cast_float64(plan, node)
                elif category == ACCUMULATE:
                    raise Refusal(
                        f"`{text}` is an integer tensor: NumPy accumulates integers in int64 "
                        "(uint64 if unsigned), TensorFlow in their own dtype; cast it first"
                    )
                elif category == FLOAT_ONLY:
                    raise Refusal(
                        f"`{text}` is an integer tensor: NumPy computes this in a float dtype "
                        "that depends on the integer width, the TensorFlow op takes floats only; "
                        "cast it to a float dtype first"
                    )
                elif category == ROUNDING:
                    raise Refusal(
                        f"`{text}` is an integer tensor: NumPy returns integers unchanged here "
                        "and the TensorFlow op takes floats only; drop the call"
                    )
                elif floats:
                    raise Refusal(
                        f"`{text}` is an integer tensor and `{self.code(floats[0])}` a Python "
                        "float: NumPy promotes the result to float64, TensorFlow refuses to "
                        "mix them"
                    )
                continue
            # The dtype of the tensor is not known.
            if category == MEAN:
                plan.unsafe.append(
                    f"the dtype of `{text}` is not known: NumPy averages integers in float64, "
                    "TensorFlow in their own dtype"
                )
            elif category == ACCUMULATE:
                plan.unsafe.append(
                    f"the dtype of `{text}` is not known: NumPy accumulates integers in int64, "
                    "TensorFlow in their own dtype"
                )
            elif category in (FLOAT_ONLY, ROUNDING):
                plan.unsafe.append(
                    f"the dtype of `{text}` is not known: on integers NumPy returns "
                    "a result where the TensorFlow op raises"
                )
            elif floats:
                plan.unsafe.append(
                    f"the dtype of `{text}` is not known: with the Python float "
                    f"`{self.code(floats[0])}` NumPy promotes integers to float64"
                )

    def _cast_float64(self, plan: Plan, node: cst.BaseExpression) -> None:
        """NumPy averages integers and booleans in float64: so does the rewrite."""
        cast = cst.parse_expression(f"{self.tf}.cast({self.code(node)}, {self.tf}.float64)")
        plan.out = [
            OutArg(item.param, cast, item.origin) if item.value is node else item
            for item in plan.out
        ]

    def _clip(self, mapping: Mapping, bound: Bound) -> Plan:
        """`clip(a, lo, hi)`: NumPy computes `minimum(maximum(a, lo), hi)`,
        `tf.clip_by_value` `maximum(minimum(a, hi), lo)`; they agree when
        `lo <= hi`. A `None` bound leaves one side open."""
        for new, old in (("min", "a_min"), ("max", "a_max")):
            if new in bound.args and old in bound.args:
                raise Refusal(f"both `{old}=` and `{new}=` are given")
        if ("a_min" in bound.args) != ("a_max" in bound.args):
            given, missing = ("a_min", "a_max") if "a_min" in bound.args else ("a_max", "a_min")
            raise Refusal(
                f"`{given}` is given without `{missing}`, and NumPy raises `TypeError` "
                f"(pass `{missing}=None` for an open side)"
            )
        a = bound.value("a")
        if a is None:
            raise Refusal("the array argument is missing")
        low = bound.args.get("a_min") or bound.args.get("min")
        high = bound.args.get("a_max") or bound.args.get("max")
        low_value = None if low is None or is_none(low.value) else low.value
        high_value = None if high is None or is_none(high.value) else high.value
        if low_value is None and high_value is None:
            raise Refusal("both bounds are `None` (NumPy raises)")
        a_arg = bound.args["a"]
        if low_value is None or high_value is None:
            op, value, origin = (
                ("minimum", high_value, high) if low_value is None else ("maximum", low_value, low)
            )
            assert origin is not None
            # Written positionally: `tf.maximum(x, lo)`, whatever NumPy's keyword was.
            bound_arg = origin.with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT)
            plan = Plan(self._func(op), [OutArg("x", a, a_arg), OutArg("y", value, bound_arg)])
            self._check_dtypes(mapping, [a, value], plan)
            return plan
        plan = Plan(self._func(mapping.tf_op), self._out(mapping, bound))
        self._check_dtypes(mapping, [a, low_value, high_value], plan)
        ordered = _literal_value(low_value), _literal_value(high_value)
        if ordered[0] is None or ordered[1] is None:
            plan.unsafe.append(
                f"the bounds `{self.code(low_value)}` and `{self.code(high_value)}` are not "
                "number literals: where the lower bound exceeds the upper, NumPy returns the "
                "upper and `tf.clip_by_value` the lower"
            )
        elif ordered[0] > ordered[1]:
            raise Refusal(
                "the lower bound exceeds the upper: NumPy returns the upper bound, "
                "`tf.clip_by_value` the lower"
            )
        return plan

    def _where(self, mapping: Mapping, bound: Bound) -> Plan:
        condition, x, y = (bound.value(p) for p in ("condition", "x", "y"))
        if condition is None:
            raise Refusal("the condition is missing")
        if x is None or y is None:
            raise Refusal(
                "`where(condition)` with one argument returns index arrays; "
                f"use `{self.tf}.where(condition)` (one index tensor) by hand"
            )
        if not (self.operands.kind(x).tensor or self.operands.kind(y).tensor):
            raise Refusal(
                "neither value is a tensor: NumPy picks from Python numbers in float64 or int64, "
                f"`{self.tf}.where` in float32 or int32"
            )
        plan = Plan(self._func(mapping.tf_op), self._out(mapping, bound))
        condition_kind = self.operands.kind(condition)
        if condition_kind.floating or condition_kind.integer:
            raise Refusal(
                f"`{self.code(condition)}` is a numeric tensor: NumPy takes nonzero as true, "
                f"`{self.tf}.where` only booleans; compare it first (`{self.code(condition)} != 0`)"
            )
        if not condition_kind.boolean:
            plan.unsafe.append(
                f"`{self.code(condition)}` is not known to be boolean: NumPy takes any "
                f"truthy value, `{self.tf}.where` only booleans"
            )
        self._check_dtypes(mapping, [x, y], plan)
        if not self.operands.kind(x).tensor and self.operands.kind(y).tensor:
            # `tf.where(c, 0, y)` converts the leading Python number to its
            # default dtype (int32, float32) and raises on a float `y`; with
            # the condition negated the tensor goes first and sets the dtype.
            negated = cst.parse_expression(
                f"{self.tf}.logical_not({self.code(condition.with_changes(lpar=(), rpar=()))})"
            )
            plan.out = [
                OutArg(item.param, negated, item.origin) if item.value is condition else item
                for item in _swapped(plan.out, "x", "y")
            ]
        return plan

    def _join(self, mapping: Mapping, bound: Bound) -> Plan:
        arrays = bound.value("arrays")
        if not isinstance(arrays, (cst.List, cst.Tuple)):
            raise Refusal("the arrays are not a list or tuple display")
        if any(isinstance(e, cst.StarredElement) for e in arrays.elements):
            raise Refusal("a starred element hides how many arrays there are")
        plan = Plan(self._func(mapping.tf_op), self._out(mapping, bound))
        axis = bound.args.get("axis")
        if axis is not None and is_none(axis.value):
            raise Refusal(
                "`axis=None` flattens the arrays first; write "
                f"`{self.tf}.concat([{self.tf}.reshape(a, [-1]), ...], 0)` by hand"
            )
        if mapping.tf_op == "concat" and axis is None:
            plan.out.append(OutArg("axis", cst.Integer("0"), None))
        self._check_dtypes(mapping, [e.value for e in arrays.elements], plan)
        return plan


def _swapped(out: list[OutArg], first: str, second: str) -> list[OutArg]:
    """`out` with the values of two parameters exchanged; each argument keeps
    its place, keyword and layout."""
    values = {item.param: item.value for item in out}
    exchange = {first: values[second], second: values[first]}
    return [OutArg(item.param, exchange.get(item.param, item.value), item.origin) for item in out]


def _literal_value(node: cst.BaseExpression) -> float | None:
    """The value of number-literal arithmetic (`-1.0`, `1.0 - 1e-7`, `1 / 255`), else None."""
    if isinstance(node, (cst.Integer, cst.Float)):
        return float(node.evaluated_value)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
        inner = _literal_value(node.expression)
        if inner is None:
            return None
        return -inner if isinstance(node.operator, cst.Minus) else inner
    if isinstance(node, cst.BinaryOperation):
        left, right = _literal_value(node.left), _literal_value(node.right)
        if left is None or right is None:
            return None
        if isinstance(node.operator, cst.Add):
            return left + right
        if isinstance(node.operator, cst.Subtract):
            return left - right
        if isinstance(node.operator, cst.Multiply):
            return left * right
        if isinstance(node.operator, cst.Divide) and right != 0:
            return left / right
    return None


# -- the rule ------------------------------------------------------------------------


# Attributes a tensor shares with a NumPy array.
_TENSOR_ATTRIBUTES = frozenset({"shape", "dtype", "ndim"})


def _require_tensor_api(site: SampleSite) -> None:
    """Refuse when the result is used through NumPy array API a tensor lacks
    (`np.mean(x).astype(np.float32)`, `.tolist()`, `.reshape(...)`)."""
    if site.astype is not None:
        raise Refusal("the result's `.astype(...)` is NumPy array API; a tensor needs `tf.cast`")
    parent = site.ancestors[-1] if site.ancestors else None
    if (
        isinstance(parent, cst.Attribute)
        and parent.value is site.call
        and parent.attr.value not in _TENSOR_ATTRIBUTES
    ):
        raise Refusal(f"the result's `.{parent.attr.value}` is NumPy array API a tensor lacks")


def _spelling(ctx: RuleContext, call: cst.Call) -> str:
    return f"`{ctx.code(call.func)}(...)`"


class NumpyMathOnTensors(Rule):
    code = "TFR104"
    name = "numpy-math-on-tensors"
    summary = "NumPy math on tensors in traced code fails on symbolic tensors"
    fix_applicability = Applicability.SAFE
    explanation = """
    ## What it does
    Finds NumPy calls (`np.mean`, `np.square`, `np.clip`, ...) on tensors in
    code that runs traced (a `@tf.function`, a loss given to `compile`, a
    Keras `Loss.call`, ...) and rewrites them into the TensorFlow op with the
    same semantics, in any import spelling: `np.mean`, `numpy.mean`,
    `from numpy import mean`.

    ## Why is this bad?
    NumPy converts its arguments to arrays on the host. Run eagerly, a tensor
    holds a value and converts; traced, it is symbolic and the call raises
    `NotImplementedError: Cannot convert a symbolic tf.Tensor to a numpy
    array`. So `np.mean(np.square(y_true - y_pred))` works in a quick eager
    test and fails as soon as Keras compiles the loss.

    ## The mapping
    | NumPy | TensorFlow |
    |---|---|
    | `mean`, `sum`, `prod` | `tf.reduce_mean`, `tf.reduce_sum`, `tf.reduce_prod` |
    | `max`/`amax`, `min`/`amin` | `tf.reduce_max`, `tf.reduce_min` |
    | `std`, `var` (divide by N: `ddof=0`) | `tf.math.reduce_std`, `tf.math.reduce_variance` |
    | `square`, `sqrt`, `abs`/`absolute` | `tf.square`, `tf.sqrt`, `tf.abs` |
    | `exp`, `tanh`, `sign`, `floor` | `tf.exp`, `tf.tanh`, `tf.sign`, `tf.floor` |
    | `log`, `log1p`, `ceil` | `tf.math.log`, `tf.math.log1p`, `tf.math.ceil` |
    | `round`/`around` | `tf.round` (both round half to even: `2.5` → `2.0`) |
    | `maximum`, `minimum` | `tf.maximum`, `tf.minimum` (both propagate NaN) |
    | `clip(x, lo, hi)` | `tf.clip_by_value(x, lo, hi)` |
    | `clip(x, lo, None)`, `clip(x, None, hi)` | `tf.maximum(x, lo)`, `tf.minimum(x, hi)` |
    | `where(c, x, y)` | `tf.where(c, x, y)` |
    | `concatenate([a, b], axis)` | `tf.concat([a, b], axis)` (`axis=0` written out) |
    | `stack([a, b], axis)` | `tf.stack([a, b], axis)` |

    A Python number before the tensor moves after it: `np.maximum(0, x)`
    becomes `tf.maximum(x, 0)` and `np.where(c, 0, x)` becomes
    `tf.where(tf.logical_not(c), x, 0)`. Traced, TensorFlow gives a leading
    Python number its default dtype (int32, float32) and then rejects a
    tensor of another dtype; NumPy 2 gives the number the tensor's dtype.
    (On a tie both return the second operand, so an element `-0.0` gives
    `-0.0` in `np.maximum(0.0, x)` and `0.0` in `tf.maximum(x, 0.0)`: equal
    values, they differ only in the sign of zero.)

    A local name bound only to such calls (`err = np.square(y_true - y_pred)`)
    counts as a tensor too, so `np.mean(err)` is reported in the same run.

    `axis` and `keepdims` carry over (`axis=None` reduces over everything in
    both); parameters that change nothing are dropped (`dtype=None`,
    `out=None`, `ddof=0`, `decimals=0`). Nested calls are separate findings,
    fixed from the inside out.

    ## Dtypes
    NumPy 2 keeps a float32 array float32 when combined with a Python number,
    and TensorFlow converts the number to the tensor's dtype: for
    floating-point tensors (a loss's `y_true`/`y_pred`, results of float ops)
    the rewrite keeps the dtype, and the fix is safe. Where NumPy's dtype
    depends on the input's:
    - `mean`/`std`/`var` of integers or booleans are float64 in NumPy: the
      rewrite casts, `tf.reduce_mean(tf.cast(x, tf.float64))`;
    - `sum`/`prod` of integers accumulate in int64 in NumPy: refused;
    - `sqrt`/`exp`/`log`/`log1p`/`tanh` of integers are floats in NumPy,
      errors in TensorFlow: refused; `floor`/`ceil`/`round` of integers are
      no-ops in NumPy: refused (drop the call);
    - an integer tensor with a Python float (`np.maximum(i, 0.5)`) is float64
      in NumPy: refused; so are tensors of different kinds in one call
      (`np.concatenate([ints, floats])`: NumPy promotes, TensorFlow raises).
    When the tensor's dtype is not known, or an operand is neither a tensor
    nor a Python number (it might be a float64 NumPy array, which promotes),
    the fix is offered as unsafe, with the reason.

    The result is a tensor where NumPy gave an array: the same values,
    shape and dtype, and a value TensorFlow ops and gradients flow through.
    Reductions of float16 may differ in the last bits: NumPy accumulates
    them in float32.

    ## When it is not rewritten
    The call stays, with a finding saying why: `dtype=`, `out=`, `where=`,
    `initial=`, `ddof` other than 0, `decimals` other than 0, `*args`,
    `np.clip` with `a_min` but no `a_max` or the reverse (NumPy raises),
    `np.clip` with literal bounds in the wrong order (NumPy returns the upper
    bound, `tf.clip_by_value` the lower; with non-literal bounds the fix is
    unsafe), one-argument `np.where`, `np.where` choosing between two Python
    numbers, `concatenate`/`stack` of something other than a list or tuple
    display or with `axis=None`, a result used through NumPy array API a
    tensor lacks (`.astype(...)`, `.reshape(...)`), a multi-line call whose
    dropped argument carries a comment, and `np.matmul`/`np.dot`, whose
    meaning depends on the operands' ranks, which tfrewrite does not know.
    A list or tuple holding a tensor given as one array
    (`np.mean([loss_a, loss_b])`) is reported without a fix: NumPy stacks it
    on the host, in a dtype that depends on every element (a Python float
    makes it float64); stack it with `tf.stack` first.
    NumPy calls on values not known to be tensors are left alone: NumPy on
    Python values is fine under tracing.
    """
    examples = (
        Invalid(
            """
            import numpy as np
            from tensorflow import keras

            def mse(y_true, y_pred):
                return np.mean(np.square(y_true - y_pred))

            model = keras.Sequential([keras.layers.Dense(1)])
            model.compile(loss=mse)
            """,
            """
            from tensorflow import keras
            import tensorflow as tf

            def mse(y_true, y_pred):
                return tf.reduce_mean(tf.square(y_true - y_pred))

            model = keras.Sequential([keras.layers.Dense(1)])
            model.compile(loss=mse)
            """,
            findings=2,
            note="nested calls are fixed from the inside out; TensorFlow imported once",
        ),
        Invalid(
            """
            import numpy as np
            import tensorflow as tf

            def bce(y_true, y_pred):
                p = np.clip(y_pred, 1e-7, 1.0 - 1e-7)
                loss = -(y_true * np.log(p) + (1.0 - y_true) * np.log(1.0 - p))
                return np.mean(loss, axis=-1)

            tf.keras.Sequential().compile(loss=bce)
            """,
            """
            import tensorflow as tf

            def bce(y_true, y_pred):
                p = tf.clip_by_value(y_pred, 1e-7, 1.0 - 1e-7)
                loss = -(y_true * tf.math.log(p) + (1.0 - y_true) * tf.math.log(1.0 - p))
                return tf.reduce_mean(loss, axis=-1)

            tf.keras.Sequential().compile(loss=bce)
            """,
            findings=4,
            note="`p` is bound only to a call this rule rewrites: `np.log(p)` is reported too",
        ),
        Invalid(
            """
            from numpy import std
            import tensorflow as tf

            @tf.function
            def spread(x):
                return std(tf.cast(x, tf.float32), axis=0, ddof=1)
            """,
            None,
            note="`ddof=1` has no TensorFlow counterpart",
        ),
        Valid(
            """
            import numpy as np
            import tensorflow as tf

            @tf.function
            def scaled(x, sizes):
                return x * np.sqrt(np.mean(sizes))
            """,
            note="`sizes` is not known to be a tensor: NumPy on Python values is fine",
        ),
        Valid(
            """
            import numpy as np

            def mse(y_true, y_pred):
                return np.mean(np.square(y_true - y_pred))
            """,
            note="not traced",
        ),
    )

    def applies_to(self, index: ModuleIndex, traced_qualnames: set[str]) -> bool:
        return bool(traced_qualnames) and any(
            target == "numpy" or target.startswith("numpy.") for target in index.imports.values()
        )

    def check(self, ctx: RuleContext) -> Iterator[Violation]:
        tf, imports = ctx.tensorflow()
        operands: dict[int, Operands] = {}
        for site in iter_module_calls(ctx, "numpy"):
            name = _numpy_function(site.call, ctx)
            if name is None:
                continue
            facts = operands.setdefault(id(site.facts), Operands(ctx, site.facts))
            data = facts.data_operands(MAPPINGS[name], site.call)
            if not any(facts.kind(node).tensor for node in data):
                listed = _listed_tensor(facts, MAPPINGS[name], data)
                if listed is not None:
                    yield Violation(
                        site.call,
                        f"{_spelling(ctx, site.call)} on a list holding the tensor "
                        f"`{ctx.code(listed)}` in traced code: NumPy cannot convert a symbolic "
                        "tensor, so this raises when traced; not rewritten: NumPy stacks the "
                        "list into one array, promoting mixed elements (a Python float makes "
                        f"it float64); stack it with `{tf}.stack([...])` (or `{tf}.concat`) "
                        "and pass that",
                    )
                continue  # NumPy on Python values: fine under tracing
            yield self._violation(ctx, site, name, Writer(ctx, facts, tf), imports)

    def _violation(
        self,
        ctx: RuleContext,
        site: SampleSite,
        name: str,
        writer: Writer,
        imports: tuple[ImportRequest, ...],
    ) -> Violation:
        call = site.call
        message = (
            f"{_spelling(ctx, call)} on a tensor in traced code: NumPy cannot convert a "
            "symbolic tensor, so this raises when traced"
        )
        try:
            _require_tensor_api(site)
            plan = writer.plan(name, call)
            replacement = _build_call(call, plan.func, plan.out, _tf_positional(name, plan))
            if _comments(call) != _comments(replacement):
                raise Refusal("the call's comments would be lost; rewrite it by hand")
        except Refusal as refusal:
            return Violation(call, f"{message}; not rewritten: {refusal}")
        if plan.unsafe:
            fix = CstFix(
                f"Use `{plan.func}` (unsafe: {'; '.join(plan.unsafe)})",
                (NodeEdit(call, replacement),),
                imports,
                Applicability.UNSAFE,
            )
        else:
            fix = CstFix(f"Use `{plan.func}`", (NodeEdit(call, replacement),), imports)
        return Violation(call, message, fix)


def _listed_tensor(
    operands: Operands, mapping: Mapping, data: list[cst.BaseExpression]
) -> cst.BaseExpression | None:
    """A tensor inside a list or tuple display passed as an array operand
    (`np.mean([loss_a, loss_b])`), for calls that take one array there."""
    if mapping.category in (JOIN, UNMAPPED):
        return None
    for node in data:
        if isinstance(node, (cst.List, cst.Tuple)):
            for element in node.elements:
                if (
                    not isinstance(element, cst.StarredElement)
                    and operands.kind(element.value).tensor
                ):
                    return element.value
    return None


def _tf_positional(name: str, plan: Plan) -> tuple[str, ...]:
    if plan.func.endswith((".maximum", ".minimum")) and name == "clip":
        return ("x", "y")
    return MAPPINGS[name].tf_positional


RULES = (NumpyMathOnTensors,)
