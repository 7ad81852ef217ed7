"""What TensorFlow's API says of values: the kinds tensor facts speak of.

`TensorKind` is one expression's fact (tensor or not, scalar, boolean,
floating-point or integer dtype; or a `tf.Variable`, a `tf.data.Dataset`, a
Keras loss object, which make tensors), with `meet` for a name bound more
than once. The tables below are the evidence: which functions return
tensors, which reduce, which keep a scalar a scalar, which results are
boolean, integer or floating-point. `tensors.TensorFacts` applies them to
the expressions of a function.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import libcst as cst

    from tfrewrite.facts.names import NameResolver

# Namespaces whose functions return tensors.
TENSOR_NAMESPACES = (
    "tensorflow.",
    "keras.ops.",
    "tensorflow.keras.ops.",
    "keras.backend.",
    "tensorflow.keras.backend.",
)
# Things under those namespaces that do not return tensors.
NON_TENSOR_PREFIXES = (
    "tensorflow.keras.",  # layers, models, losses objects...
    "tensorflow.config.",
    "tensorflow.data.",
    "tensorflow.distribute.",
    "tensorflow.summary.",
    "tensorflow.debugging.",
    "tensorflow.io.",
    "tensorflow.saved_model.",
    "tensorflow.train.",
    "tensorflow.dtypes.",
    "tensorflow.compat.",
    "tensorflow.experimental.",
    "tensorflow.autograph.",
    "tensorflow.estimator.",
    "tensorflow.lite.",
    "tensorflow.errors.",
    "tensorflow.types.",
    "keras.backend.floatx",
    "keras.backend.epsilon",
    "keras.backend.image_data_format",
    "keras.backend.backend",
)
NON_TENSOR_FUNCTIONS = frozenset(
    {
        "tensorflow.executing_eagerly",
        "tensorflow.inside_function",
        "tensorflow.is_tensor",
        "tensorflow.is_symbolic_tensor",
        "tensorflow.get_static_value",
        "tensorflow.function",
        "tensorflow.print",
        "tensorflow.py_function",
        "tensorflow.numpy_function",
        "tensorflow.TensorShape",
        "tensorflow.TensorSpec",
        "tensorflow.as_dtype",
        "tensorflow.GradientTape",
        "tensorflow.Module",
        "tensorflow.name_scope",
        "tensorflow.device",
        "tensorflow.control_dependencies",
        "tensorflow.init_scope",
        "tensorflow.get_logger",
        "tensorflow.Variable",  # a variable: tensor-like, but assignable state
        "tensorflow.nest.flatten",
        "tensorflow.nest.map_structure",
        "tensorflow.nest.pack_sequence_as",
        "tensorflow.cond",  # may return structures
        "tensorflow.case",
        "tensorflow.switch_case",
        "tensorflow.while_loop",
        "tensorflow.map_fn",
        "tensorflow.vectorized_map",
        "tensorflow.split",
        "tensorflow.unstack",
        "tensorflow.meshgrid",
        "tensorflow.unique",
        "tensorflow.unique_with_counts",
        "tensorflow.math.top_k",
        "tensorflow.nn.top_k",
        "tensorflow.linalg.qr",
        "tensorflow.linalg.svd",
        "tensorflow.linalg.eigh",
        "tensorflow.nn.moments",
        "tensorflow.random.set_seed",
        "tensorflow.random.get_global_generator",
        "tensorflow.random.Generator",
        "tensorflow.gradients",
        "tensorflow.shape_n",
    }
)
# Functions that return several tensors: tuple targets assigned from them are tensors.
MULTI_TENSOR_FUNCTIONS = frozenset(
    {
        "tensorflow.split",
        "tensorflow.unstack",
        "tensorflow.meshgrid",
        "tensorflow.unique",
        "tensorflow.math.top_k",
        "tensorflow.nn.top_k",
        "tensorflow.linalg.qr",
        "tensorflow.linalg.eigh",
        "tensorflow.nn.moments",
    }
)
# Ops whose first argument is the result's shape: scalar for `[]` / `()`
# (`tf.random.uniform([]) < p` is a scalar condition).
SHAPE_FIRST_CONSTRUCTORS = frozenset(
    {
        "tensorflow.random.normal",
        "tensorflow.random.uniform",
        "tensorflow.random.truncated_normal",
        "tensorflow.zeros",
        "tensorflow.ones",
        "tensorflow.fill",
    }
)
# Reductions: scalar when called without an axis.
REDUCTIONS = (
    frozenset(
        f"{ns}{op}"
        for ns in ("tensorflow.", "tensorflow.math.")
        for op in (
            "reduce_sum",
            "reduce_mean",
            "reduce_max",
            "reduce_min",
            "reduce_prod",
            "reduce_any",
            "reduce_all",
            "reduce_logsumexp",
            "reduce_std",
            "reduce_variance",
            "reduce_euclidean_norm",
            "count_nonzero",
        )
    )
    | frozenset(
        f"{ns}{op}"
        for ns in ("keras.ops.", "tensorflow.keras.ops.")
        for op in ("sum", "mean", "max", "min", "prod", "any", "all", "std", "var", "logsumexp")
    )
    | {"tensorflow.norm", "tensorflow.linalg.norm"}
)
ALWAYS_SCALAR = frozenset({"tensorflow.size", "tensorflow.rank", "tensorflow.math.count_nonzero"})
# Element-wise ops: scalar in, scalar out; `x` is the first positional argument.
SCALAR_PRESERVING_PREFIXES = ("tensorflow.math.", "keras.ops.", "tensorflow.keras.ops.")
SCALAR_PRESERVING = frozenset(
    {
        "tensorflow.abs",
        "tensorflow.sqrt",
        "tensorflow.square",
        "tensorflow.exp",
        "tensorflow.cast",
        "tensorflow.identity",
        "tensorflow.stop_gradient",
        "tensorflow.maximum",
        "tensorflow.minimum",
        "tensorflow.clip_by_value",
        "tensorflow.round",
        "tensorflow.sign",
        "tensorflow.equal",
        "tensorflow.not_equal",
        "tensorflow.greater",
        "tensorflow.greater_equal",
        "tensorflow.less",
        "tensorflow.less_equal",
        "tensorflow.logical_and",
        "tensorflow.logical_or",
        "tensorflow.logical_not",
        "tensorflow.add",
        "tensorflow.subtract",
        "tensorflow.multiply",
        "tensorflow.divide",
        "tensorflow.pow",
    }
)
BOOL_RESULTS = frozenset(
    {
        "tensorflow.equal",
        "tensorflow.not_equal",
        "tensorflow.greater",
        "tensorflow.greater_equal",
        "tensorflow.less",
        "tensorflow.less_equal",
        "tensorflow.logical_and",
        "tensorflow.logical_or",
        "tensorflow.logical_not",
        "tensorflow.logical_xor",
        "tensorflow.reduce_any",
        "tensorflow.reduce_all",
        "tensorflow.math.equal",
        "tensorflow.math.not_equal",
        "tensorflow.math.greater",
        "tensorflow.math.greater_equal",
        "tensorflow.math.less",
        "tensorflow.math.less_equal",
        "tensorflow.math.logical_and",
        "tensorflow.math.logical_or",
        "tensorflow.math.logical_not",
        "tensorflow.math.reduce_any",
        "tensorflow.math.reduce_all",
        "tensorflow.math.is_nan",
        "tensorflow.math.is_inf",
        "tensorflow.math.is_finite",
        "tensorflow.is_nan",
    }
)
# Static Python values under tensor namespaces: Keras 3 `ops.ndim(x)` and
# `ops.shape(x)` are Python ints and tuples, not tensors.
STATIC_SHAPE_FUNCTIONS = frozenset(
    {
        f"{ns}{op}"
        for ns in (
            "keras.ops.",
            "tensorflow.keras.ops.",
            "keras.backend.",
            "tensorflow.keras.backend.",
        )
        for op in ("ndim", "shape", "int_shape", "standardize_dtype", "dtype", "is_tensor")
    }
)
# Keras backend functions that return Python values or objects, not tensors.
BACKEND_PYTHON_RESULTS = frozenset(
    {
        "floatx",
        "epsilon",
        "image_data_format",
        "backend",
        "set_floatx",
        "set_epsilon",
        "set_image_data_format",
        "clear_session",
        "learning_phase",
        "set_learning_phase",
        "int_shape",
        "ndim",
        "is_tensor",
        "is_keras_tensor",
        "is_sparse",
        "dtype",
        "count_params",
        "get_value",
        "batch_get_value",
        "set_value",
        "batch_set_value",
        "name_scope",
        "get_uid",
        "variable",
        "placeholder",
        "function",
        "print_tensor",
        "standardize_dtype",
        "result_type",
        "Variable",
    }
)
# Calls that make a `tf.Variable` (state: its reads are tensors).
VARIABLE_CONSTRUCTORS = frozenset(
    {
        "tensorflow.Variable",
        "keras.Variable",
        "keras.backend.Variable",
        "keras.backend.variable",
        "tensorflow.keras.backend.variable",
    }
)
VARIABLE_READS = frozenset({"read_value", "value"})
# Calls and methods that make or transform a `tf.data.Dataset`.
DATASET_NAMESPACES = (
    "tensorflow.data.Dataset",
    "tensorflow.data.TFRecordDataset",
    "tensorflow.data.TextLineDataset",
    "tensorflow_datasets.load",
)
DATASET_METHODS = frozenset(
    {
        "batch",
        "padded_batch",
        "unbatch",
        "map",
        "filter",
        "shuffle",
        "prefetch",
        "repeat",
        "take",
        "skip",
        "cache",
        "interleave",
        "flat_map",
        "apply",
        "with_options",
        "rebatch",
        "shard",
    }
)
# Ops whose result is known to be rank 1: an integer index makes a scalar.
RANK_ONE_RESULTS = frozenset(
    {"tensorflow.shape", "tensorflow.range", "tensorflow.keras.backend.shape"}
)
NON_TENSOR_ATTRIBUTES = frozenset(
    {"shape", "dtype", "ndim", "name", "device", "rank", "graph", "op"}
)
TENSOR_ANNOTATIONS = frozenset(
    {"tensorflow.Tensor", "tensorflow.Variable", "tensorflow.types.experimental.TensorLike"}
)


@dataclass(frozen=True)
class TensorKind:
    """What is known of an expression: tensor or not, scalar rank, and the
    kind of its dtype (boolean, floating-point, integer; all False: unknown).

    Three facts describe values that are not tensors themselves but make
    tensors: `variable` (a `tf.Variable`: its reads, arithmetic and
    comparisons are tensors, but the object is assignable state), `dataset`
    (a `tf.data.Dataset`: iterating it yields tensors) and `vector` (a tensor
    known to be rank 1, such as `tf.shape(x)`, whose integer index is a
    scalar)."""

    tensor: bool
    scalar: bool = False
    boolean: bool = False
    floating: bool = False
    integer: bool = False
    variable: bool = False
    dataset: bool = False
    vector: bool = False
    # A Keras loss object (`keras.losses.SparseCategoricalCrossentropy()`):
    # calling it returns a floating-point tensor, a scalar unless it was
    # built with a `reduction` (which may be "none").
    loss_object: bool = False
    reduces: bool = False

    @property
    def numeric(self) -> bool:
        """Known to be a number (so `x != 0` means Python truthiness)."""
        return self.floating or self.integer


NOT_TENSOR = TensorKind(False)
TENSOR = TensorKind(True)
SCALAR = TensorKind(True, scalar=True)
BOOL_SCALAR = TensorKind(True, scalar=True, boolean=True)
FLOATING = TensorKind(True, floating=True)
VARIABLE = TensorKind(False, variable=True)
DATASET = TensorKind(False, dataset=True)
# The optimistic start for a name's own bindings (greatest fixed point).
TOP = TensorKind(True, True, True, True, True, True, True, True, True, True)


def meet(a: TensorKind, b: TensorKind) -> TensorKind:
    """What holds for both: used when a name has several definitions."""
    return TensorKind(
        a.tensor and b.tensor,
        a.scalar and b.scalar,
        a.boolean and b.boolean,
        a.floating and b.floating,
        a.integer and b.integer,
        a.variable and b.variable,
        a.dataset and b.dataset,
        a.vector and b.vector,
        a.loss_object and b.loss_object,
        a.reduces and b.reduces,
    )


def settled(kind: TensorKind) -> TensorKind:
    """A solved fact: what is not a tensor keeps only its variable/dataset facts."""
    if kind.tensor:
        return kind
    if kind.variable:
        return TensorKind(
            False, kind.scalar, kind.boolean, kind.floating, kind.integer, variable=True
        )
    if kind.dataset:
        return DATASET
    if kind.loss_object:
        return TensorKind(False, loss_object=True, reduces=kind.reduces)
    return NOT_TENSOR


def kind_of_dtype(qualified: str | None) -> TensorKind | None:
    """`tf.float32` -> floating, `tf.int64` -> integer, `tf.bool` -> boolean."""
    if not qualified or not qualified.startswith("tensorflow."):
        return None
    leaf = qualified.rsplit(".", 1)[-1]
    if leaf in ("float16", "float32", "float64", "bfloat16", "half", "double"):
        return FLOATING
    if leaf in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"):
        return TensorKind(True, integer=True)
    if leaf == "bool":
        return TensorKind(True, boolean=True)
    return None


def is_python_float(node: cst.BaseExpression) -> bool:
    import libcst as cst  # not at import time: pass 1 never needs LibCST

    return _is_signed_literal(node, cst.Float)


def is_python_bool(node: cst.BaseExpression) -> bool:
    import libcst as cst  # not at import time: pass 1 never needs LibCST

    return isinstance(node, cst.Name) and node.value in ("True", "False")


def is_python_int(node: cst.BaseExpression) -> bool:
    import libcst as cst  # not at import time: pass 1 never needs LibCST

    return _is_signed_literal(node, cst.Integer)


def _is_signed_literal(node: cst.BaseExpression, literal: type) -> bool:
    """A literal of type `literal`, negated any number of times (`-1`)."""
    import libcst as cst  # not at import time: pass 1 never needs LibCST

    while isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        node = node.expression
    return isinstance(node, literal)


def is_python_number(node: cst.BaseExpression) -> bool:
    """A Python number, or arithmetic on Python numbers only (`-2.0 + 1.0`)."""
    import libcst as cst  # not at import time: pass 1 never needs LibCST

    if isinstance(node, (cst.Integer, cst.Float)):
        return True
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
        return is_python_number(node.expression)
    if isinstance(node, cst.BinaryOperation):
        return is_python_number(node.left) and is_python_number(node.right)
    return False


def is_tensor_op(qualified: str | None) -> bool:
    if not qualified or qualified in NON_TENSOR_FUNCTIONS or qualified in STATIC_SHAPE_FUNCTIONS:
        return False
    if not qualified.startswith(TENSOR_NAMESPACES):
        return False
    if qualified.startswith("tensorflow.keras.ops."):
        return True
    if qualified.startswith(("keras.backend.", "tensorflow.keras.backend.")):
        return qualified.rsplit(".", 1)[-1] not in BACKEND_PYTHON_RESULTS
    if qualified.startswith(NON_TENSOR_PREFIXES):
        return False
    leaf = qualified.rsplit(".", 1)[-1]
    # Classes (`tf.TensorShape`, `tf.Module`) and dtypes (`tf.float32` is not a call anyway).
    return leaf[:1].islower()


# Ops defined on floating-point inputs only: their result is floating-point.
FLOAT_ONLY_LEAVES = frozenset(
    {
        "sqrt",
        "rsqrt",
        "exp",
        "log",
        "log1p",
        "sigmoid",
        "tanh",
        "softplus",
        "softmax",
        "log_softmax",
        "sin",
        "cos",
        "erf",
        "reduce_logsumexp",
        "reduce_std",
        "reduce_variance",
        "reduce_euclidean_norm",
        "norm",
        "l2_normalize",
    }
)
# Constructors whose default dtype is float32.
FLOAT_DEFAULT_CONSTRUCTORS = frozenset(
    {
        "tensorflow.zeros",
        "tensorflow.ones",
        "tensorflow.eye",
        "tensorflow.random.normal",
        "tensorflow.random.uniform",
        "tensorflow.random.truncated_normal",
    }
)
INTEGER_RESULTS = frozenset(
    {
        "tensorflow.size",
        "tensorflow.rank",
        "tensorflow.shape",
        "tensorflow.argmax",
        "tensorflow.argmin",
        "tensorflow.math.argmax",
        "tensorflow.math.argmin",
        "tensorflow.math.count_nonzero",
        "tensorflow.math.reduce_count_nonzero",
        "tensorflow.count_nonzero",
    }
)

ELEMENTWISE_LEAVES = frozenset(
    {
        "abs",
        "sqrt",
        "square",
        "exp",
        "log",
        "log1p",
        "sigmoid",
        "tanh",
        "cast",
        "maximum",
        "minimum",
        "equal",
        "not_equal",
        "greater",
        "greater_equal",
        "less",
        "less_equal",
        "logical_and",
        "logical_or",
        "logical_not",
        "add",
        "subtract",
        "multiply",
        "divide",
        "pow",
        "round",
        "sign",
        "floor",
        "ceil",
        "is_nan",
        "is_inf",
        "is_finite",
    }
)


def dtype_kind(
    node: cst.Call,
    qualified: str,
    positional: list[cst.BaseExpression],
    resolver: NameResolver,
    operand_kind: Callable[[cst.BaseExpression], TensorKind],
) -> TensorKind:
    """The dtype kind of a TensorFlow op's result, from evidence only: an
    explicit dtype, a float-only op, a default float32 constructor, or an
    operand whose kind the op preserves."""
    import libcst as cst  # not at import time: pass 1 never needs LibCST

    if qualified in BOOL_RESULTS:
        return TensorKind(True, boolean=True)
    for arg in node.args:
        if arg.keyword is not None and arg.keyword.value == "dtype":
            return kind_of_dtype(resolver.qualified_name(arg.value)) or TENSOR
    leaf = qualified.rsplit(".", 1)[-1]
    if leaf == "cast" and len(positional) > 1:
        return kind_of_dtype(resolver.qualified_name(positional[1])) or TENSOR
    if qualified in INTEGER_RESULTS:
        return TensorKind(True, integer=True)
    if (
        qualified in FLOAT_DEFAULT_CONSTRUCTORS
        or qualified.startswith("tensorflow.nn.")
        or (leaf in FLOAT_ONLY_LEAVES)
    ):
        return FLOATING
    if qualified in ("tensorflow.constant", "tensorflow.convert_to_tensor") and positional:
        value = positional[0]
        if is_python_float(value):
            return FLOATING
        if is_python_int(value):
            return TensorKind(True, integer=True)
        if isinstance(value, cst.Name) and value.value in ("True", "False"):
            return TensorKind(True, boolean=True)
    if positional:
        first = operand_kind(positional[0])
        if first.tensor and (
            qualified in REDUCTIONS
            or qualified in SCALAR_PRESERVING
            or (leaf in ELEMENTWISE_LEAVES or leaf in ("identity", "stop_gradient", "reshape"))
        ):
            return TensorKind(True, floating=first.floating, integer=first.integer)
    return TENSOR


def op_result_kind(
    node: cst.Call,
    qualified: str,
    positional: list[cst.BaseExpression],
    dtype: TensorKind,
    is_scalar: Callable[[cst.BaseExpression], bool],
) -> TensorKind:
    """The result of a call `node` of TensorFlow op `qualified` (one
    `is_tensor_op` accepts), whose dtype kind is `dtype`: rank one, a scalar
    (a reduction without an axis, an element-wise op of scalars as
    `is_scalar` tells, a constructor of shape `[]`), or a tensor."""
    import libcst as cst  # not at import time: pass 1 never needs LibCST

    keywords = {a.keyword.value for a in node.args if a.keyword is not None}
    if qualified in RANK_ONE_RESULTS:
        return TensorKind(True, False, False, dtype.floating, dtype.integer, vector=True)
    boolean = qualified in BOOL_RESULTS or dtype.boolean
    if qualified in ALWAYS_SCALAR:
        return TensorKind(True, True, boolean, integer=not boolean)
    if qualified in REDUCTIONS:
        has_axis = len(positional) > 1 or "axis" in keywords or "keepdims" in keywords
        return TensorKind(True, not has_axis, boolean, dtype.floating, dtype.integer)
    if qualified in SCALAR_PRESERVING or (
        qualified.startswith(SCALAR_PRESERVING_PREFIXES)
        and qualified not in REDUCTIONS
        and qualified.rsplit(".", 1)[-1] in ELEMENTWISE_LEAVES
    ):
        operands = [
            a.value
            for a in node.args
            if a.star == "" and (a.keyword is None or a.keyword.value in ("x", "y", "a", "b", "t"))
        ]
        if qualified.rsplit(".", 1)[-1] in ("cast", "saturate_cast"):
            operands = operands[:1]  # the second argument is the dtype
        scalar = bool(operands) and all(is_scalar(v) for v in operands)
        return TensorKind(True, scalar, boolean, dtype.floating, dtype.integer)
    if qualified in SHAPE_FIRST_CONSTRUCTORS:
        shape = (
            positional[0]
            if positional
            else next(
                (
                    a.value
                    for a in node.args
                    if a.keyword is not None and a.keyword.value in ("shape", "dims")
                ),
                None,
            )
        )
        empty = isinstance(shape, (cst.List, cst.Tuple)) and not shape.elements
        return TensorKind(True, empty, boolean, dtype.floating, dtype.integer)
    if qualified in ("tensorflow.constant", "tensorflow.convert_to_tensor") and positional:
        value = positional[0]
        scalar = is_python_number(value) or is_python_bool(value)
        return TensorKind(True, scalar, dtype.boolean, dtype.floating, dtype.integer)
    return TensorKind(True, False, boolean, dtype.floating, dtype.integer)
