"""Which expressions are tensors, conservatively.

Unknown means "not a tensor": a rule that converts Python control flow or
Python calls into TensorFlow does so only on evidence, because a wrong
conversion silently changes a training run while a missed one is just a
finding for a human.

Evidence that an expression is a tensor:
- the result of a TensorFlow op (`tf.*`, `tf.math.*`, `keras.ops.*`, ...);
- a parameter known to carry tensors (a loss's `y_true`/`y_pred`, an argument
  annotated `tf.Tensor`, a `tf.function(input_signature=...)` argument);
- arithmetic, comparison, unary minus or indexing with a tensor operand;
- a local name every assignment of which is a tensor.

Not tensors: `x.shape`, `x.dtype`, `len(x)`, `x.shape.rank`, `is`/`is not`,
`isinstance(...)`, `not x`, `and`/`or`, attributes (including on `self`),
Python literals, calls to unknown functions.

Each expression also gets a rank fact (scalar or unknown) and a dtype-kind
fact (boolean, floating-point, integer or unknown), which `tf.cond`
conversions need: a branch output that is a Python `0` may become `0.0` only
when the other branch is known to be floating-point. A loss's tensor
arguments count as floating-point: Keras converts `y_true`/`y_pred` to the
loss's float dtype before calling it.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field

import libcst as cst

from tfrewrite.analysis.names import NameResolver
from tfrewrite.analysis.walk import child_nodes

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
_LOSS_NAMESPACES = ("keras.losses.", "tensorflow.keras.losses.", "tf_keras.losses.")
# The optimistic start for a name's own bindings (greatest fixed point).
_TOP = TensorKind(True, True, True, True, True, True, True, True, True, True)


def _meet(a: TensorKind, b: TensorKind) -> TensorKind:
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


def _settled(kind: TensorKind) -> TensorKind:
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


def _kind_of_dtype(qualified: str | None) -> TensorKind | None:
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


def _is_python_float(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.Float):
        return True
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        return _is_python_float(node.expression)
    return False


def _is_python_bool(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value in ("True", "False")


def _is_single_index(node: cst.Subscript) -> bool:
    """`x[0]`, `x[-1]`, `x[i]`: one index, not a slice or a tuple of indices."""
    if len(node.slice) != 1:
        return False
    index = node.slice[0].slice
    return isinstance(index, cst.Index) and not isinstance(index.value, (cst.Tuple, cst.Ellipsis))


def _is_python_int(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.Integer):
        return True
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        return _is_python_int(node.expression)
    return False


def is_python_number(node: cst.BaseExpression) -> bool:
    """A Python number, or arithmetic on Python numbers only (`-2.0 + 1.0`)."""
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


def _iter_assignments(
    body: cst.CSTNode,
) -> Iterator[tuple[cst.BaseAssignTargetExpression, cst.BaseExpression | None, bool]]:
    """(target, value, augmented) for every binding in a function body, not
    descending into nested functions, lambdas or classes. A binding whose value
    is unknown (a `for` target, `with ... as`, `except ... as`) yields None."""
    stack: list[cst.CSTNode] = [body]
    while stack:
        node = stack.pop()
        yield from _iter_assignments_here(node)
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)) and node is not body:
            continue
        stack.extend(reversed(child_nodes(node)))


def _iter_assignments_here(
    node: cst.CSTNode,
) -> Iterator[tuple[cst.BaseAssignTargetExpression, cst.BaseExpression | None, bool]]:
    """The bindings `node` itself makes (not those of its children)."""
    if isinstance(node, cst.Assign):
        for target in node.targets:
            yield target.target, node.value, False
    elif isinstance(node, cst.AnnAssign):
        yield node.target, node.value, False
    elif isinstance(node, cst.AugAssign):
        yield node.target, node, True  # type: ignore[misc]
    elif isinstance(node, cst.For):
        # The loop itself stands for "an element of `node.iter`".
        yield node.target, node, False  # type: ignore[misc]
    elif isinstance(node, cst.WithItem) and node.asname is not None:
        yield node.asname.name, None, False
    elif isinstance(node, cst.NamedExpr):
        yield node.target, node.value, False
    elif isinstance(node, cst.ExceptHandler) and node.name is not None:
        yield node.name.name, None, False


def scope_nodes(root: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Nodes under `root`, not inside nested functions, lambdas or classes."""
    stack: list[cst.CSTNode] = [root]
    while stack:
        node = stack.pop()
        yield node
        if node is not root and isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        stack.extend(child_nodes(node))


def local_names(function: cst.FunctionDef) -> set[str]:
    """Names local to `function`: its parameters and what its body binds."""
    return {p.name.value for p in all_params(function.params)} | bound_names(function.body)


def bound_names(body: cst.CSTNode) -> set[str]:
    """Local names bound anywhere in `body` (assignments, loop targets,
    `with ... as`, walrus, `except ... as`), not inside nested functions."""
    names: set[str] = set()
    for target, value, _ in _iter_assignments(body):
        names.update(name for name, _, _ in _split_target(target, value))
    return names


class Strength(enum.IntEnum):
    """How much is known that a value is a tensor.

    PROVEN: safe fixes may rest on it (`TensorFacts.is_tensor`). LIKELY: the
    value is a tensor whenever the function is called the way tracing calls
    it (a traced function's parameter with no contrary evidence, a value a
    call site passes as a tensor): enough for a finding and an unsafe fix
    that `verify` proves, never for a safe fix. NONE: nothing says so."""

    NONE = 0
    LIKELY = 1
    PROVEN = 2


@dataclass(eq=False)
class AttributeFacts:
    """What the methods of one class see on `self`: attributes that hold a
    `tf.Variable` (or a Keras weight), and attributes that are Python numbers
    (assigned only in `__init__`, from a number or from a parameter whose
    default is a number)."""

    kinds: dict[str, TensorKind] = field(default_factory=dict)
    numbers: frozenset[str] = frozenset()


class TensorFacts:
    """Tensor facts for the local names of one function."""

    def __init__(
        self,
        function: cst.FunctionDef,
        resolver: NameResolver,
        tensor_params: Iterable[str] = (),
        outer: TensorFacts | None = None,
        param_kinds: dict[str, TensorKind] | None = None,
        likely_params: Iterable[str] | Callable[[], Iterable[str]] = (),
        attributes: AttributeFacts | Callable[[], AttributeFacts | None] | None = None,
        excluded: Iterable[str] = (),
    ) -> None:
        """`param_kinds` gives the facts of some parameters directly (the
        arguments of a call whose result is being analysed, or what the
        project knows of a traced function's parameters). `likely_params`
        are parameters that are likely tensors (see `Strength`): they count
        only in the `likely` view. `outer` is the enclosing function's facts,
        or the module's for a top-level function (`module_facts`).
        `attributes` describes `self`. Names in `excluded` are never facts
        (module names that the project rebinds). `likely_params` and
        `attributes` may be given as functions, called on first use: most
        questions never need them."""
        self.function = function
        self.resolver = resolver
        self.outer = outer
        self._attributes = attributes
        self.excluded = frozenset(excluded)
        self.params = {p.name.value for p in all_params(function.params)}
        self._likely_source = likely_params
        self._likely_known: frozenset[str] | None = None
        self._not_likely = set(param_kinds or ()) | set(tensor_params)
        self._likely_view: TensorFacts | None = None
        self._names: dict[str, TensorKind] = {}
        for name in tensor_params:
            # Loss arguments: Keras hands them over as floating-point tensors.
            self._names[name] = FLOATING
        for param in all_params(function.params):
            if param.annotation is not None:
                qualified = resolver.qualified_name(param.annotation.annotation)
                if qualified in TENSOR_ANNOTATIONS:
                    self._names[param.name.value] = TENSOR
        for name, kind in (param_kinds or {}).items():
            if kind.tensor or kind.variable or kind.dataset:
                self._names[name] = kind
        self._param_kinds = dict(self._names)
        self._local_defs: dict[str, list[cst.FunctionDef]] | None = None
        self._number_names: set[str] = set()
        self._reaching: dict[int, dict[str, TensorKind]] = {}
        self._ordered: list[tuple[str, cst.BaseExpression | None, bool, int | None]] = []
        self._position: dict[int, int | None] | None = None  # built on first use
        self._solve()

    # -- public queries ---------------------------------------------------------
    def kind(self, node: cst.BaseExpression) -> TensorKind:
        return self._kind(node, self._names)

    @property
    def attributes(self) -> AttributeFacts | None:
        """What `self` holds (computed on first use)."""
        if callable(self._attributes):
            self._attributes = self._attributes()
        return self._attributes

    @property
    def _likely_params(self) -> frozenset[str]:
        if self._likely_known is None:
            source = self._likely_source
            names = source() if callable(source) else source
            self._likely_known = frozenset(names) - self._not_likely
        return self._likely_known

    @property
    def likely(self) -> TensorFacts:
        """The same function's facts with every *likely* tensor counted as a
        tensor: ask it the same questions (`kind`, `kind_at`, `is_tensor`) to
        learn what holds if the likely parameters are tensors. Itself when
        nothing is only likely. Its answers are never proof."""
        if self._likely_view is None:
            outer_view = self.outer.likely if self.outer is not None else None
            if not self._likely_params and outer_view is self.outer:
                self._likely_view = self
            else:
                kinds = dict(self._param_kinds)
                kinds.update((name, TENSOR) for name in self._likely_params)
                view = TensorFacts(
                    self.function,
                    self.resolver,
                    (),
                    outer_view,
                    kinds,
                    attributes=self._attributes,
                    excluded=self.excluded,
                )
                view._likely_view = view
                self._likely_view = view
        return self._likely_view

    @property
    def likely_params(self) -> frozenset[str]:
        """Parameters that are likely tensors (not proven ones)."""
        return self._likely_params

    def strength(self, node: cst.BaseExpression) -> Strength:
        """PROVEN, LIKELY or NONE: how much says `node` is a tensor."""
        if self.kind(node).tensor:
            return Strength.PROVEN
        if self.likely is not self and self.likely.kind(node).tensor:
            return Strength.LIKELY
        return Strength.NONE

    def strength_at(self, node: cst.BaseExpression, statement: cst.CSTNode) -> Strength:
        """`strength` with the bindings that reach `statement` (see `kind_at`)."""
        if self.kind_at(node, statement).tensor:
            return Strength.PROVEN
        if self.likely is not self and self.likely.kind_at(node, statement).tensor:
            return Strength.LIKELY
        return Strength.NONE

    def is_likely_tensor(self, node: cst.BaseExpression) -> bool:
        """Proven or likely a tensor: enough for a finding, not for a safe fix."""
        return self.strength(node) is not Strength.NONE

    def assumptions(self, node: cst.CSTNode) -> list[str]:
        """The likely-tensor parameters a LIKELY fact about `node` rests on,
        for messages ("assumes `x` is a tensor argument"): those `node`
        reads, else every likely parameter of this function and the ones
        around it."""
        every: set[str] = set()
        facts: TensorFacts | None = self
        while facts is not None:
            every |= facts._likely_params
            facts = facts.outer
        read = {n.value for n in scope_nodes(node) if isinstance(n, cst.Name) and n.value in every}
        return sorted(read or every)

    def assumption_note(self, node: cst.CSTNode) -> str:
        """The note an unsafe fix resting on likely tensors carries: "it
        assumes `x` is a tensor argument"."""
        names = self.assumptions(node)
        listed = ", ".join(f"`{name}`" for name in names)
        verb = "is a tensor argument" if len(names) == 1 else "are tensor arguments"
        return f"it assumes {listed} {verb}"

    def kind_at(self, node: cst.BaseExpression, statement: cst.CSTNode) -> TensorKind:
        """The kind of `node` evaluated just before `statement` (a statement
        or a conditional expression of this function) runs. Names take the
        meet of the bindings that can reach it: in code outside loops, those
        that come before it in the source (so `m` is a tensor in `if m > 1.0:`
        even when `m = helper(m)` follows the `if`). Inside a loop, or for a
        node not found, the function-wide facts apply."""
        key = id(statement)
        if key not in self._reaching:
            self._reaching[key] = self._names_before(statement)
        return self._kind(node, self._reaching[key])

    def _index_bindings(self) -> None:
        """One walk of the function, in source order: every binding in the
        order it happens (after its value is evaluated: `x = f(x)` binds x
        once f(x) ran), and for each conditional, how many bindings precede
        it, or None inside a loop."""
        self._ordered = []
        self._position = {}
        # (node, inside a loop, visited already: record its bindings now)
        stack: list[tuple[cst.CSTNode, bool, bool]] = [(self.function.body, False, False)]
        while stack:
            node, in_loop, done = stack.pop()
            if done:
                for target, value, augmented in _iter_assignments_here(node):
                    for name, value_part, index in _split_target(target, value):
                        self._ordered.append((name, value_part, augmented, index))
                continue
            if isinstance(node, (cst.If, cst.IfExp)):
                self._position[id(node)] = None if in_loop else len(self._ordered)
            if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                continue
            stack.append((node, in_loop, True))
            loop = in_loop or isinstance(node, (cst.For, cst.While))
            stack.extend((child, loop, False) for child in reversed(child_nodes(node)))

    def _names_before(self, statement: cst.CSTNode) -> dict[str, TensorKind]:
        if self._position is None:
            self._index_bindings()
        assert self._position is not None
        count = self._position.get(id(statement))
        if count is None:
            return self._names
        seen: dict[str, list[tuple[cst.BaseExpression | None, bool, int | None]]] = {}
        for name, value, augmented, index in self._ordered[:count]:
            seen.setdefault(name, []).append((value, augmented, index))
        names = dict(self._names)
        for name, values in seen.items():
            result = self._param_kinds.get(name, NOT_TENSOR) if name in self.params else None
            for value, augmented, index in values:
                kind = self._binding_kind(value, augmented, index, self._names)
                result = kind if result is None else _meet(result, kind)
            names[name] = _settled(result) if result is not None else NOT_TENSOR
        return names

    def is_tensor(self, node: cst.BaseExpression) -> bool:
        return self.kind(node).tensor

    def is_scalar_tensor(self, node: cst.BaseExpression) -> bool:
        k = self.kind(node)
        return k.tensor and k.scalar

    def name_kind(self, name: str) -> TensorKind:
        """The fact for a local name (or a name of an enclosing function)."""
        return self.kind(cst.Name(name))

    def tensor_names(self) -> frozenset[str]:
        return frozenset(n for n, k in self._names.items() if k.tensor)

    def involves_tensor(self, node: cst.CSTNode) -> bool:
        """True when any sub-expression of `node` is a tensor (for arguments
        such as f-strings or containers)."""
        stack: list[cst.CSTNode] = [node]
        while stack:
            current = stack.pop()
            if isinstance(current, cst.BaseExpression) and self.is_tensor(current):
                return True
            if isinstance(current, (cst.Lambda, cst.FunctionDef)):
                continue
            stack.extend(child_nodes(current))
        return False

    # -- solving ----------------------------------------------------------------
    def _solve(self) -> None:
        """Greatest fixed point: every bound name starts as the most specific
        fact (a scalar tensor of every kind) and loses what some binding of it
        contradicts, until nothing changes. So `loss = loss + tf.reduce_sum(x)`
        after `loss = tf.zeros(())` holds, and so do names defined through
        each other (`tmp = m * 2.0; m = tmp + 1.0`). A name with an unknown
        binding ends as not a tensor; a name bound only through itself cannot
        run without an error, so its optimistic fact is never used."""
        bindings: dict[str, list[tuple[cst.BaseExpression | None, bool, int | None]]] = {}
        for target, value, augmented in _iter_assignments(self.function.body):
            for name, value_part, index in _split_target(target, value):
                bindings.setdefault(name, []).append((value_part, augmented, index))
        for name in self.params:
            if name in bindings:
                # A rebound parameter keeps its own value as one binding: a
                # tensor parameter stays a tensor only if every rebinding is
                # a tensor too, and any other parameter is not a tensor.
                bindings[name].append((cst.Name(name), False, -1))  # marker: the parameter itself
        self._bindings = bindings
        self._float_assumed: set[str] = set()
        self._find_number_names(bindings)
        names = {**self._names, **{name: _TOP for name in bindings}}
        # In place, so that nested functions analysed meanwhile (branch
        # functions of a `tf.cond`) see the facts as they are being solved.
        self._names = names
        for _ in range(6 * len(bindings) + 2):  # descending: a few changes per name at most
            changed = False
            for name, values in bindings.items():
                result = self._binding_kind(*values[0], names)
                for value, augmented, index in values[1:]:
                    result = _meet(result, self._binding_kind(value, augmented, index, names))
                result = _settled(result)
                if result != names[name]:
                    changed = True
                    names[name] = result
            if not changed:
                break
        # Locals that are not tensors stay recorded, so that they do not fall
        # back to a tensor of the same name in an enclosing function.
        self._names = names

    def _binding_kind(
        self,
        value: cst.BaseExpression | None,
        augmented: bool,
        index: int | None,
        names: dict[str, TensorKind],
    ) -> TensorKind:
        if index == -1:  # the parameter binding itself
            return self._param_kinds.get(getattr(value, "value", ""), NOT_TENSOR)
        if value is None:
            return NOT_TENSOR
        if isinstance(value, cst.For):
            return self._element_kind(value.iter, index, names)
        if augmented:
            aug = value  # the AugAssign node
            assert isinstance(aug, cst.AugAssign)
            return self._arithmetic_kind(
                aug.target,
                aug.operator,
                aug.value,
                names,  # type: ignore[arg-type]
            )
        if index is not None:
            # Element `index` of a tuple target: tensors when the value is a call
            # returning several tensors.
            if isinstance(value, cst.Call):
                qualified = self.resolver.qualified_name(value.func)
                if qualified in MULTI_TENSOR_FUNCTIONS:
                    return TENSOR
            # Unpacking a tensor (or a parameter holding a structure of
            # tensors, such as a train step's `data`) yields tensors.
            whole = self._kind(value, names)
            if whole.tensor:
                return TensorKind(True, False, whole.boolean, whole.floating, whole.integer)
            return NOT_TENSOR
        return self._kind(value, names)

    def _element_kind(
        self, iterable: cst.BaseExpression, index: int | None, names: dict[str, TensorKind]
    ) -> TensorKind:
        """What `for target in iterable` binds: the rows of a tensor (scalars
        for a rank-1 tensor such as `tf.range(n)`), the elements of a
        `tf.data.Dataset`, and through `enumerate(...)` the second item."""
        if (
            isinstance(iterable, cst.Call)
            and isinstance(iterable.func, cst.Name)
            and iterable.func.value == "enumerate"
            and iterable.args
            and iterable.func.value not in names
        ):
            if index != 1:
                return NOT_TENSOR
            return self._element_kind(iterable.args[0].value, None, names)
        source = self._value(self._kind(iterable, names))
        if source.dataset:
            return TENSOR
        if source.tensor:
            scalar = source.vector and index is None
            return TensorKind(True, scalar, source.boolean, source.floating, source.integer)
        return NOT_TENSOR

    def _kind(self, node: cst.BaseExpression, names: dict[str, TensorKind]) -> TensorKind:
        if isinstance(node, cst.Name):
            if node.value in self.excluded:
                return NOT_TENSOR
            if node.value in names:
                return names[node.value]
            if self.outer is not None and node.value not in self.params:
                return self.outer.kind(node)
            return NOT_TENSOR
        if isinstance(node, cst.Call):
            return self._call_kind(node, names)
        if isinstance(node, cst.BinaryOperation):
            return self._arithmetic_kind(node.left, node.operator, node.right, names)
        if isinstance(node, cst.UnaryOperation):
            if isinstance(node.operator, cst.Not):
                return NOT_TENSOR  # Python `not` calls bool(): not a tensor result
            inner = self._value(self._kind(node.expression, names))
            return TensorKind(inner.tensor, inner.scalar, False, inner.floating, inner.integer)
        if isinstance(node, cst.Comparison):
            return self._comparison_kind(node, names)
        if isinstance(node, cst.Subscript):
            base = self._value(self._kind(node.value, names))
            if not base.tensor:
                return NOT_TENSOR
            # An integer index of a rank-1 tensor (`tf.shape(x)[0]`) is a scalar.
            scalar = base.vector and _is_single_index(node)
            return TensorKind(True, scalar, base.boolean, base.floating, base.integer)
        if isinstance(node, cst.Attribute):
            if (
                self.attributes is not None
                and isinstance(node.value, cst.Name)
                and node.value.value == "self"
            ):
                return self.attributes.kinds.get(node.attr.value, NOT_TENSOR)
            return NOT_TENSOR
        if isinstance(node, cst.IfExp):
            if self._kind(node.test, names).tensor:
                # On a tensor, it runs (or is rewritten) as `tf.cond`.
                return _meet(
                    self._value_kind(node.body, names), self._value_kind(node.orelse, names)
                )
            return _meet(self._kind(node.body, names), self._kind(node.orelse, names))
        if isinstance(node, cst.NamedExpr):
            return self._kind(node.value, names)
        return NOT_TENSOR

    @staticmethod
    def _value(kind: TensorKind) -> TensorKind:
        """What reading a value gives: a `tf.Variable` reads as a tensor."""
        if kind.variable:
            return TensorKind(True, kind.scalar, kind.boolean, kind.floating, kind.integer)
        return kind

    def _is_number(self, node: cst.BaseExpression) -> bool:
        """A Python number: a literal, arithmetic on numbers, or a local name
        every binding of which is one (`scale = 1.0; scale = 2.0`)."""
        if is_python_number(node):
            return True
        if isinstance(node, cst.Name):
            if node.value in self.excluded:
                return False
            if node.value in self._number_names:
                return True
            if node.value in self._bindings or node.value in self.params:
                return False
            return self.outer is not None and self.outer._is_number(node)
        if isinstance(node, cst.Attribute):
            return (
                self.attributes is not None
                and isinstance(node.value, cst.Name)
                and node.value.value == "self"
                and node.attr.value in self.attributes.numbers
            )
        if isinstance(node, cst.UnaryOperation):
            signed = isinstance(node.operator, (cst.Minus, cst.Plus))
            return signed and self._is_number(node.expression)
        if isinstance(node, cst.BinaryOperation):
            return self._is_number(node.left) and self._is_number(node.right)
        return False

    def _find_number_names(self, bindings: dict[str, list]) -> None:  # type: ignore[type-arg]
        """Greatest fixed point over the local names bound only to numbers."""
        self._number_names = {
            name
            for name, values in bindings.items()
            if name not in self.params and all(v is not None and i is None for v, _, i in values)
        }
        changed = True
        while changed:
            changed = False
            for name in list(self._number_names):
                for value, augmented, _ in bindings[name]:
                    expression = value.value if augmented else value  # type: ignore[union-attr]
                    if not self._is_number(expression):
                        self._number_names.discard(name)
                        changed = True
                        break

    def _arithmetic_kind(
        self,
        left_node: cst.BaseExpression,
        operator: cst.CSTNode,
        right_node: cst.BaseExpression,
        names: dict[str, TensorKind],
    ) -> TensorKind:
        """`a op b` (or `a op= b`): a tensor when either side is; floating when
        either side is floating (a Python float included) or for `/`."""
        left = self._value(self._kind(left_node, names))
        right = self._value(self._kind(right_node, names))
        if not (left.tensor or right.tensor):
            return NOT_TENSOR
        scalar = (left.scalar or self._is_number(left_node)) and (
            right.scalar or self._is_number(right_node)
        )
        floating = (
            left.floating
            or right.floating
            or _is_python_float(left_node)
            or _is_python_float(right_node)
            or isinstance(operator, (cst.Divide, cst.DivideAssign))
        )
        integer = (
            not floating
            and (left.integer or _is_python_int(left_node))
            and (right.integer or _is_python_int(right_node))
        )
        return TensorKind(True, scalar, False, floating, integer)

    def _comparison_kind(self, node: cst.Comparison, names: dict[str, TensorKind]) -> TensorKind:
        if len(node.comparisons) != 1:
            return NOT_TENSOR  # chained: Python `and` of comparisons
        target = node.comparisons[0]
        if isinstance(target.operator, (cst.Is, cst.IsNot, cst.In, cst.NotIn)):
            return NOT_TENSOR
        left = self._value(self._kind(node.left, names))
        right = self._value(self._kind(target.comparator, names))
        if not (left.tensor or right.tensor):
            return NOT_TENSOR
        scalar = (left.scalar or self._is_number(node.left)) and (
            right.scalar or self._is_number(target.comparator)
        )
        return TensorKind(True, scalar, boolean=True)

    def _call_kind(self, node: cst.Call, names: dict[str, TensorKind]) -> TensorKind:
        qualified = self.resolver.qualified_name(node.func)
        if qualified == "tensorflow.cond":
            return self._cond_kind(node, names)
        positional = [a.value for a in node.args if a.keyword is None and a.star == ""]
        if qualified in VARIABLE_CONSTRUCTORS:
            initial = positional[0] if positional else None
            dtype = self._dtype_kind(node, "tensorflow.constant", positional, names)
            scalar = initial is not None and (is_python_number(initial) or _is_python_bool(initial))
            return TensorKind(
                False, scalar, dtype.boolean, dtype.floating, dtype.integer, variable=True
            )
        if qualified is not None and qualified.startswith(DATASET_NAMESPACES):
            return DATASET
        if qualified is None and isinstance(node.func, cst.Attribute):
            return self._method_kind(node, names)
        if qualified is not None and qualified.startswith(_LOSS_NAMESPACES):
            leaf = qualified.rsplit(".", 1)[-1]
            if leaf[:1].isupper() and leaf != "Loss":
                keywords = {a.keyword.value for a in node.args if a.keyword is not None}
                return TensorKind(False, loss_object=True, reduces="reduction" not in keywords)
        if isinstance(node.func, cst.Name):
            callee = self._kind(node.func, names)
            if callee.loss_object:
                return TensorKind(True, scalar=callee.reduces, floating=True)
        if not is_tensor_op(qualified):
            return NOT_TENSOR
        assert qualified is not None
        keywords = {a.keyword.value for a in node.args if a.keyword is not None}
        dtype = self._dtype_kind(node, qualified, positional, names)
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
            and qualified.rsplit(".", 1)[-1] in _ELEMENTWISE_LEAVES
        ):
            operands = [
                a.value
                for a in node.args
                if a.star == ""
                and (a.keyword is None or a.keyword.value in ("x", "y", "a", "b", "t"))
            ]
            if qualified.rsplit(".", 1)[-1] in ("cast", "saturate_cast"):
                operands = operands[:1]  # the second argument is the dtype
            scalar = bool(operands) and all(
                self._kind(v, names).scalar or self._is_number(v) for v in operands
            )
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
            scalar = is_python_number(value) or _is_python_bool(value)
            return TensorKind(True, scalar, dtype.boolean, dtype.floating, dtype.integer)
        return TensorKind(True, False, boolean, dtype.floating, dtype.integer)

    def _method_kind(self, node: cst.Call, names: dict[str, TensorKind]) -> TensorKind:
        """`v.read_value()` on a variable is a tensor; `ds.batch(n)` on a
        dataset is a dataset. Other methods: unknown."""
        assert isinstance(node.func, cst.Attribute)
        method = node.func.attr.value
        if method not in VARIABLE_READS and method not in DATASET_METHODS:
            return NOT_TENSOR
        receiver = self._kind(node.func.value, names)
        if receiver.variable and method in VARIABLE_READS:
            return self._value(receiver)
        if receiver.dataset and method in DATASET_METHODS:
            return DATASET
        return NOT_TENSOR

    def _cond_kind(self, node: cst.Call, names: dict[str, TensorKind]) -> TensorKind:
        """`tf.cond(c, lambda: A, lambda: B)` or with branch functions
        defined in this function: a tensor when both branches return one
        value (a Python number becomes a scalar tensor of its kind); the facts
        both branches share. Anything else may be a structure: not a tensor."""
        branches = [a.value for a in node.args if a.keyword is None and a.star == ""][1:3]
        branches += [
            a.value
            for a in node.args
            if a.keyword is not None and a.keyword.value in ("true_fn", "false_fn")
        ]
        if len(branches) != 2:
            return NOT_TENSOR
        kinds = []
        for branch in branches:
            if isinstance(branch, cst.Lambda):
                kinds.append(self._value_kind(branch.body, names))
            elif isinstance(branch, cst.Name) and self._defs_named(branch.value):
                kinds.append(self._local_call_kind(branch.value, [], names))
            else:
                return NOT_TENSOR
        return _meet(kinds[0], kinds[1])

    def _defs_named(self, name: str) -> list[cst.FunctionDef]:
        """Functions of that name defined in this function's own body."""
        if self._local_defs is None:
            self._local_defs = {}
            stack: list[cst.CSTNode] = [self.function.body]
            while stack:
                node = stack.pop()
                if isinstance(node, cst.FunctionDef):
                    self._local_defs.setdefault(node.name.value, []).append(node)
                    continue
                if isinstance(node, (cst.ClassDef, cst.Lambda)):
                    continue
                stack.extend(child_nodes(node))
        return self._local_defs.get(name, [])

    def _local_call_kind(
        self, name: str, args: Sequence[cst.Arg], names: dict[str, TensorKind]
    ) -> TensorKind:
        """What calling a function defined here returns, as a `tf.cond`
        branch: the meet over its `return` values, with its parameters bound
        to the arguments' facts (every definition of that name counts)."""
        if any(a.keyword is not None or a.star for a in args):
            return TENSOR
        result: TensorKind | None = None
        for definition in self._defs_named(name):
            params = positional_param_names(definition)
            if len(params) != len(args):
                return TENSOR
            bound = {p: self._kind(a.value, names) for p, a in zip(params, args, strict=True)}
            inner = TensorFacts(definition, self.resolver, (), self, bound)
            for node in scope_nodes(definition.body):
                if isinstance(node, cst.Return):
                    kind = (
                        inner._value_kind(node.value, inner._names)
                        if node.value is not None
                        else NOT_TENSOR
                    )
                    result = kind if result is None else _meet(result, kind)
        return result if result is not None else NOT_TENSOR

    def _value_kind(self, node: cst.BaseExpression, names: dict[str, TensorKind]) -> TensorKind:
        """What `tf.cond` makes of a branch value: Python numbers and bools
        become scalar tensors; a name that only ever holds Python floats or
        floating-point tensors becomes a floating-point tensor."""
        if isinstance(node, (cst.Tuple, cst.List, cst.Dict)):
            return NOT_TENSOR  # a structure, not one tensor
        if _is_python_float(node):
            return TensorKind(True, True, floating=True)
        if _is_python_int(node):
            return TensorKind(True, True, integer=True)
        if isinstance(node, cst.Name) and node.value in ("True", "False"):
            return TensorKind(True, True, boolean=True)
        if (
            isinstance(node, cst.Call)
            and isinstance(node.func, cst.Name)
            and node.func.value not in names
            and self._defs_named(node.func.value)
        ):
            return self._local_call_kind(node.func.value, node.args, names)
        kind = self._kind(node, names)
        if kind.tensor:
            return kind
        if self._float_valued(node, names, frozenset()):
            return TensorKind(True, floating=True)
        return TENSOR

    def _float_valued(
        self, node: cst.BaseExpression, names: dict[str, TensorKind], visiting: frozenset[str]
    ) -> bool:
        """Whether `node` always holds a Python float or a floating-point
        tensor (a local name: on every binding; assumed while checking its
        own bindings, including through nested `tf.cond`s)."""
        if _is_python_float(node):
            return True
        qualified = self.resolver.qualified_name(node.func) if isinstance(node, cst.Call) else None
        if isinstance(node, cst.Call) and qualified == "tensorflow.cond":
            lambdas = [a.value for a in node.args if isinstance(a.value, cst.Lambda)]
            return len(lambdas) == 2 and all(
                self._float_valued(lam.body, names, visiting)
                for lam in lambdas  # type: ignore[attr-defined]
            )
        if isinstance(node, cst.IfExp):
            return self._float_valued(node.body, names, visiting) and self._float_valued(
                node.orelse, names, visiting
            )
        if isinstance(node, cst.Name) and node.value in self._bindings:
            if node.value in visiting or node.value in self._float_assumed:
                return True
            if self._kind(node, names).floating:
                return True
            self._float_assumed.add(node.value)
            try:
                inner = visiting | {node.value}
                for value, augmented, index in self._bindings[node.value]:
                    if value is None or index is not None:
                        return False
                    if augmented:
                        assert isinstance(value, cst.AugAssign)
                        if not (
                            self._float_valued(value.target, names, inner)  # type: ignore[arg-type]
                            and (
                                is_python_number(value.value)
                                or self._float_valued(value.value, names, inner)
                            )
                        ):
                            return False
                    elif not self._float_valued(value, names, inner):
                        return False
                return True
            finally:
                self._float_assumed.discard(node.value)
        return self._kind(node, names).floating

    def _dtype_kind(
        self,
        node: cst.Call,
        qualified: str,
        positional: list[cst.BaseExpression],
        names: dict[str, TensorKind],
    ) -> TensorKind:
        """The dtype kind of a TensorFlow op's result, from evidence only: an
        explicit dtype, a float-only op, a default float32 constructor, or an
        operand whose kind the op preserves."""
        if qualified in BOOL_RESULTS:
            return TensorKind(True, boolean=True)
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value == "dtype":
                return _kind_of_dtype(self.resolver.qualified_name(arg.value)) or TENSOR
        leaf = qualified.rsplit(".", 1)[-1]
        if leaf == "cast" and len(positional) > 1:
            return _kind_of_dtype(self.resolver.qualified_name(positional[1])) or TENSOR
        if qualified in INTEGER_RESULTS:
            return TensorKind(True, integer=True)
        if (
            qualified in FLOAT_DEFAULT_CONSTRUCTORS
            or qualified.startswith("tensorflow.nn.")
            or (leaf in _FLOAT_ONLY_LEAVES)
        ):
            return FLOATING
        if qualified in ("tensorflow.constant", "tensorflow.convert_to_tensor") and positional:
            value = positional[0]
            if _is_python_float(value):
                return FLOATING
            if _is_python_int(value):
                return TensorKind(True, integer=True)
            if isinstance(value, cst.Name) and value.value in ("True", "False"):
                return TensorKind(True, boolean=True)
        if positional:
            first = self._kind(positional[0], names)
            if first.tensor and (
                qualified in REDUCTIONS
                or qualified in SCALAR_PRESERVING
                or (leaf in _ELEMENTWISE_LEAVES or leaf in ("identity", "stop_gradient", "reshape"))
            ):
                return TensorKind(True, floating=first.floating, integer=first.integer)
        return TENSOR


# Ops defined on floating-point inputs only: their result is floating-point.
_FLOAT_ONLY_LEAVES = frozenset(
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

_ELEMENTWISE_LEAVES = frozenset(
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


def all_params(params: cst.Parameters) -> list[cst.Param]:
    result = [*params.posonly_params, *params.params, *params.kwonly_params]
    if isinstance(params.star_arg, cst.Param):
        result.append(params.star_arg)
    if params.star_kwarg is not None:
        result.append(params.star_kwarg)
    return result


def positional_param_names(function: cst.FunctionDef) -> list[str]:
    return [p.name.value for p in [*function.params.posonly_params, *function.params.params]]


def _split_target(
    target: cst.BaseExpression, value: cst.BaseExpression | None
) -> list[tuple[str, cst.BaseExpression | None, int | None]]:
    """Names bound by a target: (name, value for that name, index in a tuple)."""
    if isinstance(target, cst.Name):
        return [(target.value, value, None)]
    if isinstance(target, (cst.Tuple, cst.List)):
        result: list[tuple[str, cst.BaseExpression | None, int | None]] = []
        value_elements = (
            [e.value for e in value.elements]
            if isinstance(value, (cst.Tuple, cst.List))
            and len(value.elements) == len(target.elements)
            and not any(isinstance(e, cst.StarredElement) for e in value.elements)
            else None
        )
        for i, element in enumerate(target.elements):
            if value_elements is not None:
                result.extend(_split_target(element.value, value_elements[i]))
            else:
                for name, _, _ in _split_target(element.value, None):
                    result.append((name, value, i))
        return result
    return []  # attribute / subscript targets bind no local name


def module_facts(module: cst.Module, resolver: NameResolver, rebound: Iterable[str]) -> TensorFacts:
    """Facts for module-level names, the outermost scope every function
    sees: names bound once to a tensor, a variable, a dataset or a Python
    number. Names the project rebinds elsewhere (`global`, another module)
    are excluded: their value depends on when the function is traced."""
    body = [s for s in module.body if not isinstance(s, (cst.FunctionDef, cst.ClassDef))]
    wrapper = cst.FunctionDef(
        name=cst.Name("__module__"),
        params=cst.Parameters(),
        body=cst.IndentedBlock(body=body or [cst.SimpleStatementLine([cst.Pass()])]),
    )
    return TensorFacts(wrapper, resolver, excluded=rebound)
