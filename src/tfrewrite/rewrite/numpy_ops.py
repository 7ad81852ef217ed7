"""The NumPy → TensorFlow op table for NumPy math on tensors.

Each `Mapping` says which TensorFlow op computes the same values as a NumPy
function, how NumPy's parameters map onto the op's, which NumPy arguments may
be dropped because their value changes nothing, and how the result's dtype
relates to the operands' in each library (`category`), which decides when the
rewrite must cast, is unsafe, or is refused.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# How the result's dtype relates to the operands', in NumPy and in TensorFlow.
# Each class has its own rule for integer, boolean and unknown operands.
MEAN = "mean"  # NumPy: float64 for integers and booleans; TF: the input dtype
ACCUMULATE = "accumulate"  # NumPy: int64 for integers and booleans; TF: the input dtype
FLOAT_ONLY = "float-only"  # NumPy: a float dtype for integers; TF: floating inputs only
ROUNDING = "rounding"  # NumPy: integers unchanged; TF: floating inputs only
PRESERVE = "preserve"  # the input dtype in both (NumPy promotes with a Python float)
SELECT = "select"  # `where`: the values' dtype in both
JOIN = "join"  # `concatenate` / `stack`: the elements' dtype in both
INDEX = "index"  # `argmax` / `argmin`: int64 in both; TF: no booleans
UNMAPPED = "unmapped"  # no faithful TensorFlow op without facts tfrewrite lacks


# Why a NumPy parameter that TensorFlow lacks cannot be dropped.
PARAMETER_REASONS = {
    "dtype": "`dtype=` changes the dtype NumPy computes in; cast the tensor with `tf.cast` first",
    "out": "`out=` writes into an existing array, and tensors are immutable",
    "where": "`where=` masks elements, and the TensorFlow op has no mask",
    "initial": "`initial=` seeds the reduction, and the TensorFlow op has no such argument",
    "ddof": "only `ddof=0` (divide by N) matches TensorFlow's `reduce_std`/`reduce_variance`",
    "decimals": "`tf.round` rounds to integers only",
    "keepdims": "`tf.argmax` has no `keepdims`; wrap the result in `tf.expand_dims`",
    "ord": "only the default 2-norm maps onto `tf.norm` without knowing the rank",
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
    # Not symmetric: a Python number base stays first (`Writer._power`).
    "power": Mapping(
        "pow",
        ("x1", "x2"),
        PRESERVE,
        ("x1", "x2"),
        {"x1": "x", "x2": "y"},
        tf_positional=("x", "y"),
    ),
    # TensorFlow has no `log2`: `tf.math.log(x) / math.log(2.0)` (`Writer._log2`).
    "log2": _unary("math.log", FLOAT_ONLY),
    # Only the vector 2-norm over all elements or along one axis (`Writer._norm`).
    "linalg.norm": Mapping(
        "norm",
        ("x", "ord", "axis", "keepdims"),
        FLOAT_ONLY,
        ("x",),
        {"x": "tensor", "axis": "axis", "keepdims": "keepdims"},
        {"ord": "None"},
        tf_positional=("tensor",),
    ),
    # NumPy flattens without `axis`, `tf.argmax` reduces axis 0 (`Writer._arg_extremum`).
    "argmax": Mapping(
        "argmax",
        ("a", "axis", "out", "keepdims"),
        INDEX,
        renamed={"a": "input", "axis": "axis"},
        droppable={"out": "None", "keepdims": "False"},
        tf_positional=("input", "axis"),
    ),
    "argmin": Mapping(
        "argmin",
        ("a", "axis", "out", "keepdims"),
        INDEX,
        renamed={"a": "input", "axis": "axis"},
        droppable={"out": "None", "keepdims": "False"},
        tf_positional=("input", "axis"),
    ),
    # Found, so that they are reported, but never rewritten (see `UNMAPPED_REASONS`).
    "matmul": Mapping("", ("x1", "x2"), UNMAPPED, ("x1", "x2")),
    "dot": Mapping("", ("a", "b"), UNMAPPED, ("a", "b")),
}

UNMAPPED_REASONS = {
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
