"""How one function runs traced: the contexts that trace it (a framework
hook, its own `@tf.function`, `compile`, a traced caller, a train step it
will run in) and what its arguments are (`TracedFunction`), for every file
of the project (`ProjectFacts`). The framework bases and hooks that make a
method traced are defined here, once, for both passes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from tfrewrite.facts.index_calls import DATASET_CONTEXT
from tfrewrite.facts.index_records import FunctionInfo, ModuleIndex
from tfrewrite.facts.keras_names import keras_leaf, keras_path
from tfrewrite.workspace.line_names import path_line

FRAMEWORK_TRACED_METHODS: dict[str, tuple[str, ...]] = {
    "Loss": ("call", "__call__"),
    "Layer": ("call",),
    "Model": ("call", "train_step", "test_step", "predict_step"),
    "Sequential": ("call", "train_step", "test_step", "predict_step"),
    "Metric": ("update_state", "result"),
    # The optimizer calls its schedule with `iterations` when it applies
    # gradients, inside the traced train step.
    "LearningRateSchedule": ("__call__",),
    # TensorFlow Probability calls a bijector's hooks from the distribution's
    # `log_prob` and `sample`, inside the loss of the traced train step.
    "Bijector": (
        "_forward",
        "_inverse",
        "_forward_log_det_jacobian",
        "_inverse_log_det_jacobian",
    ),
}


LOSS_BASES = frozenset({"Loss"})

# The hooks only Keras' own loops call (`fit`, `evaluate`, `predict`): traced
# where Keras runs the model, a plain method where the project calls them.
KERAS_LOOP_HOOKS = frozenset({"train_step", "test_step", "predict_step"})


SCALAR_STEP_BASES = frozenset({"LearningRateSchedule"})


OWN_DECORATOR = "decorated with @tf.function"


# `tf.function` keywords under which a trace may see unknown dimensions: a
# signature's `None`, or a dimension relaxed after a retrace.
DYNAMIC_SHAPE_KEYWORDS = ("input_signature", "reduce_retracing", "experimental_relax_shapes")


WRAPPED = "wrapped in tf.function"


COMPILE_CONTEXT = "given to compile"


# An undecorated train step a fix would decorate: its module's path and
# its qualname there.
StepKey = tuple[str, str]


PENDING_STEP_CONTEXTS = (
    "runs in the train step",
    "runs in the eager loop of",
    "differentiated in a `GradientTape` at",
)


EAGER_LOOP_CONTEXTS = PENDING_STEP_CONTEXTS[1:]


HANDED_CONTEXT = "given to "


TRACED_CALLER_CONTEXT = "called from traced"
OVERRIDES_CONTEXT = "overrides traced"
NESTED_CONTEXT = "nested in traced"
# Contexts of code traced only once a fix decorates the step it runs in.
PENDING_CALLER_CONTEXT = "will be traced with"
PENDING_NESTED_CONTEXT = "nested in a step that will be traced"
PENDING_STEP_REASON = "a train step called from a Python loop"
PENDING_CONTEXTS = (
    *PENDING_STEP_CONTEXTS,
    PENDING_CALLER_CONTEXT,
    PENDING_NESTED_CONTEXT,
    PENDING_STEP_REASON,
)
# Contexts naming the traced function the code runs in (`called from
# traced `step``): it is traced as that function is.
TRACED_CALLER_PREFIXES = (TRACED_CALLER_CONTEXT, OVERRIDES_CONTEXT, NESTED_CONTEXT)


LOSS_SIGNATURES = frozenset(
    {
        ("y_true", "y_pred"),
        ("labels", "logits"),
        ("labels", "predictions"),
        ("labels", "preds"),
        ("y_true", "logits"),
        ("targets", "logits"),
        ("target", "output"),
        ("targets", "outputs"),
        ("targets", "predictions"),
        ("true", "pred"),
        ("logits", "labels"),
        ("labels", "embeddings"),
        ("y_true", "logits_pred"),
    }
)


KERAS_TENSOR_ARGUMENTS = {
    "_forward": 1,
    "_inverse": 1,
    "_forward_log_det_jacobian": 1,
    "_inverse_log_det_jacobian": 1,
    "call": 1,  # a layer's inputs (a loss's `call` is handled as a loss)
    "train_step": 1,
    "test_step": 1,
    "predict_step": 1,
    "update_state": 2,
    "__call__": 1,  # a schedule's step (a loss's `__call__` is handled as a loss)
}


@dataclass(frozen=True)
class TapeUse:
    """One way a method of a held object runs in a train step's tape
    (`facts.tape_reach`): the step (its local qualname), where it is
    (`path:line`), the call reaching the method (`self._model.q1`), and the
    attributes of the object it runs on whose models the step trains
    (`_q1_model`)."""

    step: str
    where: str
    via: str
    trained: frozenset[str]


@dataclass(frozen=True)
class TracedFunction:
    """A function that runs traced, why, and what the project knows of the
    arguments it is traced with."""

    qualname: str  # local to its module
    reason: str
    is_loss: bool = False  # called with (y_true, y_pred): its first two params are tensors
    # Parameters proven to be tensors: the tracer passes tensors (`Dataset.map`,
    # an `input_signature`, a Keras contract), or every call site in the
    # project does. `scalar_params` are the ones also known to be scalars.
    tensor_params: frozenset[str] = frozenset()
    scalar_params: frozenset[str] = frozenset()
    # Some call site passes a tensor and none a Python value.
    likely_params: frozenset[str] = frozenset()
    # Some call site passes a Python value (a literal, a loop counter).
    python_params: frozenset[str] = frozenset()
    # Not traced yet: it will be once a pending fix decorates it (an
    # undecorated train step), so its body is checked as traced code.
    pending: bool = False
    # Its first two parameters follow a loss signature (`y_true, y_pred`,
    # `labels, logits`, ...): a loss even when nothing in the project calls
    # it as one (`is_loss` says that something does).
    loss_signature: bool = False
    # Traced (or pending) only for reasons its own module gives: its own
    # `@tf.function`, a call from a function traced for such reasons. A fix
    # round re-derives these from the module alone (`fix_rounds._reindex`): a
    # function whose decorator a fix removed is no longer traced. False when
    # another module may trace it (a step there calls it, a `compile` there).
    local_reasons_only: bool = False
    # Every context it runs traced in, `reason` first: its own decorator,
    # a `compile`, a traced caller, a Keras method, the train step it runs
    # in (traced once a fix decorates or extracts that step).
    contexts: tuple[str, ...] = ()

    # Parameters some call site passes a Python value and another a tensor:
    # (parameter, "path:line" of the first Python caller, of the first tensor
    # caller). A condition on one is a Python bool in one trace and a tensor
    # in the other: only AutoGraph handles both.
    mixed_callers: tuple[tuple[str, str, str], ...] = ()
    # `jit_compile=` of its own `@tf.function`: a fix moving the decorator
    # to the step carries it there, so the function keeps running under XLA.
    jit_compile: str | None = None
    # A `GradientTape` differentiates what it returns: a loss, whatever its
    # parameters (`dsm_loss(scores, noisy, clean, sigmas)`, `loss(model, x)`).
    differentiated: bool = False
    # Parameters every call site fills with a list or tuple display of more
    # than Python values: (parameter, one evidence code per element: `t` a
    # tensor at every site, `s` a scalar one, `l` no Python value at any site
    # (a likely tensor, as a parameter with no evidence is), `?` otherwise).
    # `y, n_c = inputs` binds a tensor to `y`.
    elements: tuple[tuple[str, str], ...] = ()
    # Parameters whose values come from outside every trace: no traced
    # caller computes them, each passes on a parameter of its own fed so
    # (`update_critic(self, batch)` handing `batch` to `critic_loss`), or
    # only eager code calls the function (a tracer's inputs). A dict there
    # holds inputs, and its items are likely tensors; one a traced caller
    # builds (augmentation settings NumPy drew) holds what it computed.
    fed_from_outside: frozenset[str] = frozenset()
    # Parameters given one tensor wherever the project says what they get:
    # every call site passes one, or an `input_signature` gives one. Not a
    # framework's contract alone (Keras hands `call` a tuple of inputs as
    # often as one tensor): `len()` of such a parameter is a tensor's length.
    single_tensor_params: frozenset[str] = frozenset()
    # A method of an object a train step's class holds, run in that step's
    # tape (`self._model.q1(s, a)` in `TD3Agent.train_q`'s): how, and which
    # of the object's models the step trains (`tape_reach`).
    tapes: tuple[TapeUse, ...] = ()
    # Every trace sees its inputs' whole shapes (`facts.trace_shapes`: a
    # plain `tf.function` a loop calls, a step a fix decorates without
    # `reduce_retracing`, the `call` of a model nothing hands to Keras, and
    # what these call): `x.shape` is the shape.
    concrete_shapes: bool = False
    # Its own `tf.function` may trace it with unknown dimensions (an
    # `input_signature`, `reduce_retracing=True`).
    relaxed_shapes: bool = False
    # While `pending`: the undecorated train steps (path, qualname) whose
    # decoration would trace it, in this module or another.
    pending_steps: frozenset[StepKey] = frozenset()
    # On a pending train step: what the code of other modules it would
    # trace does differently traced and cannot be rewritten ("in `log`
    # (helpers.py line 3): TFR202 ..."): its decoration is withheld.
    foreign_blockers: tuple[str, ...] = ()


    def __post_init__(self) -> None:
        if not self.contexts:
            object.__setattr__(self, "contexts", (self.reason,))

    @property
    def per_element(self) -> bool:
        """Traced only as a `tf.data` element function (given to
        `Dataset.map`/`filter`, directly or through a lambda): it sees one
        element at a time, with the shapes the dataset knows."""
        return all(DATASET_CONTEXT in c for c in self.contexts)

    @property
    def keras_traces(self) -> bool:
        """Keras traces it in `fit`'s step: given to `compile`, or a method
        Keras calls (`Loss.call`, `Layer.call`, `Model.train_step`). That
        step runs without AutoGraph (Keras 3) and may be compiled with XLA
        (`jit_compile="auto"` on a GPU)."""
        return any(
            c.startswith(COMPILE_CONTEXT) or c.partition(" ")[0] in KERAS_METHOD_CONTEXTS
            for c in self.contexts
        )

    @property
    def traced_callers(self) -> list[str]:
        """The traced functions that call it, anywhere in the project."""
        return [
            name
            for c in self.contexts
            if (name := context_function(c, (TRACED_CALLER_CONTEXT,))) is not None
        ]

    @property
    def runs_in_an_eager_loop(self) -> bool:
        """A tape in an eager loop differentiates it: without its own
        decorator it runs eagerly there until the loop's step is extracted
        (TFR303)."""
        return any(c.startswith(EAGER_LOOP_CONTEXTS) for c in self.contexts)

    @property
    def has_own_decorator(self) -> bool:
        """Its own `@tf.function`, or `f = tf.function(f)`, traces it."""
        return any(_is_own_decorator(c) for c in self.contexts)

    def without_own_decorator(self) -> TracedFunction | None:
        """How it runs once a fix removes its own `@tf.function` (TFR301):
        still traced, in every other context it has (a loss keeps the step
        that differentiates it, the `compile` that hands it to `fit`); None
        when nothing else traces it."""
        rest = tuple(c for c in self.contexts if not _is_own_decorator(c))
        if not rest:
            return None
        return replace(self, reason=rest[0], contexts=rest)


def context_function(context: str, prefixes: Sequence[str]) -> str | None:
    """The function a context names after one of `prefixes` (`step` for
    "called from traced `step`"), or None."""
    for prefix in prefixes:
        if context.startswith(prefix + " `") and context.endswith("`"):
            return context[len(prefix) + 2 : -1]
    return None


KERAS_CALLED_BASES = frozenset({"Layer", "Model", "Sequential", "Loss"})


KERAS_METHOD_CONTEXTS = frozenset(
    f"{base}.{method}" for base, methods in FRAMEWORK_TRACED_METHODS.items() for method in methods
)


def _is_own_decorator(context: str) -> bool:
    return context == OWN_DECORATOR or context.startswith(WRAPPED)


@dataclass
class ProjectFacts:
    """What pass 2 needs to know about one module, derived from all modules."""

    traced: dict[str, dict[str, TracedFunction]] = field(default_factory=dict)  # path -> qualname

    def for_path(self, path: str) -> dict[str, TracedFunction]:
        return self.traced.get(path, {})


def traced_base_leaf(base: str) -> str | None:
    """The framework base class a resolved base name is, by its last name
    (`Layer`, `Bijector`): a Keras class under any of its spellings, or a
    TensorFlow Probability bijector."""
    if base.startswith("tensorflow_probability.") and base.endswith(".Bijector"):
        return "Bijector"
    leaf = keras_leaf(base)
    if leaf in FRAMEWORK_TRACED_METHODS:
        return leaf
    # A subclass of one of Keras' own layers, losses or metrics
    # (`class BatchNormalization(tf.keras.layers.BatchNormalization)`) is
    # one of them: Keras traces its `call` as any layer's.
    family, _, name = (keras_path(base) or "").rpartition(".")
    if name[:1].isupper() and family.partition(".")[0] in _KERAS_FAMILY_BASES:
        return _KERAS_FAMILY_BASES[family.partition(".")[0]]
    return leaf


_KERAS_FAMILY_BASES = {"layers": "Layer", "losses": "Loss", "metrics": "Metric"}


FRAMEWORK_CALL_ARGUMENTS = {"train_step": 1, "test_step": 1, "predict_step": 1}


def fit_calls(info: FunctionInfo) -> bool:
    """A method named for a step hook Keras's `fit` (or `evaluate`,
    `predict`) calls, that its call can reach (`train_step(self, data)`):
    Keras traces it. `train_step(self, batch, optimizers)` is the project's
    own step, called by hand."""
    method = info.qualname.rpartition(".")[2]
    return (
        info.class_name is not None
        and method in FRAMEWORK_CALL_ARGUMENTS
        and callable_as_hook(info, method)
    )


def callable_as_hook(info: FunctionInfo, method: str) -> bool:
    """Whether the framework's call of the hook `method` can reach `info`."""
    count = FRAMEWORK_CALL_ARGUMENTS.get(method)
    if count is None:
        return True
    passed = count + 1  # and `self`
    return (
        info.min_positional <= passed
        and (info.max_positional < 0 or passed <= info.max_positional)
        and not info.requires_keywords
    )


def tensor_arguments(info: FunctionInfo, traced: TracedFunction) -> set[str]:
    """The parameters of a traced function that the project says receive
    tensors, proven or likely: `tensor_params`, `likely_params`, and a
    loss's first two."""
    found = set(traced.tensor_params | traced.likely_params)
    if traced.is_loss or traced.loss_signature:
        found.update(info.caller_params[:2])
    return found


@dataclass
class TraceMarks:
    """What marking learns of one function before it becomes a `TracedFunction`."""

    reason: str
    is_loss: bool = False
    tensor: set[str] = field(default_factory=set)
    scalar: set[str] = field(default_factory=set)
    likely: set[str] = field(default_factory=set)
    python: set[str] = field(default_factory=set)
    pending: bool = False
    # Some reason to trace it comes from another module (see
    # `TracedFunction.local_reasons_only`).
    elsewhere: bool = False
    contexts: list[str] = field(default_factory=list)
    mixed: dict[str, tuple[str, str]] = field(default_factory=dict)
    elements: dict[str, str] = field(default_factory=dict)
    single: set[str] = field(default_factory=set)  # `single_tensor_params`
    # Its own `tf.function` (a decorator, or `tf.function(f, ...)`) takes a
    # keyword of `DYNAMIC_SHAPE_KEYWORDS`.
    relaxed: bool = False
    # Parameters some traced caller fills with a value it computes
    # (`TracedFunction.fed_from_outside` is the rest).
    fed_inside: set[str] = field(default_factory=set)
    # While `pending`: the undecorated train steps whose decoration traces it.
    steps: set[StepKey] = field(default_factory=set)


def step_contexts(qualname: str) -> frozenset[str]:
    """The contexts `compute_facts` gives what the train step `qualname`
    (a local qualname) reaches: decorated as it is, or with the
    tape in its loop extracted."""
    return frozenset(f"{kind} `{qualname}`" for kind in PENDING_STEP_CONTEXTS[:2])


def tape_block_context(index: ModuleIndex, line: int) -> str:
    """The context of what a module-level `GradientTape` block in a loop,
    its `with` on `line` of `index`'s file, reaches: traced once TFR303
    extracts the block into a step."""
    return f"{EAGER_LOOP_CONTEXTS[0]} the `GradientTape` at " + path_line(
        index.path, line, index.cell_starts
    )
