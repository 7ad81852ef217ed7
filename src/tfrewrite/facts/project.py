"""Project facts: which functions run traced, across every indexed file.

A function runs traced when it is decorated with `@tf.function` (any spelling),
wrapped by `tf.function(f)`, given to `compile(loss=..., metrics=...)`, is the
`call` of a Keras `Loss`/`Layer`/`Model`, a `Model.train_step`/`test_step`/
`predict_step`, a `Metric.update_state`/`result`, or is called from a function
that runs traced. Functions nested inside a traced function run traced too.
"""

from __future__ import annotations

import ast
import builtins
import re
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import PurePath

from tfrewrite.facts.call_evidence import EXTERNAL_ROOTS, SPLAT
from tfrewrite.facts.callee_facts import record_callee_parameters
from tfrewrite.facts.class_dispatch import init_computes, overrides
from tfrewrite.facts.eager_models import eagerly_compiled_classes
from tfrewrite.facts.index_calls import DATASET_CONTEXT, TF_FUNCTION_NAMES
from tfrewrite.facts.index_names import dotted
from tfrewrite.facts.index_records import SOURCE_FOLDER, CallSite, FunctionInfo, ModuleIndex
from tfrewrite.facts.keras_names import keras_leaf, keras_path
from tfrewrite.facts.method_steps import looped_train_methods, record_looped_train_methods
from tfrewrite.workspace.line_names import path_line

# Framework base classes, by their last name (`traced_base_leaf`: Keras'
# under any spelling, TensorFlow Probability's `Bijector`), and the methods
# the framework calls itself in traced code.
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
# Keras bases whose traced method's tensor argument is a scalar: a
# schedule is called with the optimizer's `iterations`.
SCALAR_STEP_BASES = frozenset({"LearningRateSchedule"})
# The context a function's own `@tf.function` (any spelling) gives it.
OWN_DECORATOR = "decorated with @tf.function"
# How a `f = tf.function(f)` site's reason starts (`index_calls`).
WRAPPED = "wrapped in tf.function"
# How the reason of a function given to `compile(loss=/metrics=...)` starts.
COMPILE_CONTEXT = "given to compile"
# How the contexts a train step not traced yet gives start: the functions a
# step function calls (`runs in the train step `train_step``, traced once
# TFR302 decorates it), those a tape in a loop calls (`runs in the eager loop
# of `fit``), a loss a module-level tape differentiates (both traced once
# TFR303 extracts the step from its loop).
PENDING_STEP_CONTEXTS = (
    "runs in the train step",
    "runs in the eager loop of",
    "differentiated in a `GradientTape` at",
)
# The pending contexts of a tape in a loop: traced only by an extraction.
EAGER_LOOP_CONTEXTS = PENDING_STEP_CONTEXTS[1:]
# How the reason of a function handed to a tracer starts (`given to
# `tensorflow.map_fn``, `given to Keras' `backend.rnn``).
HANDED_CONTEXT = "given to "
# How the context a traced caller gives starts (`called from traced `step``).
TRACED_CALLER_CONTEXT = "called from traced"


# Parameter pairs that make a function a loss by its signature.
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
# Keras methods whose arguments Keras passes as tensors: method -> how many
# positional parameters (after `self`) are tensors.
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
            c.startswith(COMPILE_CONTEXT) or c.partition(" ")[0] in _KERAS_METHOD_CONTEXTS
            for c in self.contexts
        )

    @property
    def traced_callers(self) -> list[str]:
        """The traced functions that call it, anywhere in the project."""
        prefix = TRACED_CALLER_CONTEXT + " `"
        return [c[len(prefix) : -1] for c in self.contexts if c.startswith(prefix)]

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


# Keras bases whose `__call__` runs the object's `call`.
_KERAS_CALLED_BASES = frozenset({"Layer", "Model", "Sequential", "Loss"})

# The contexts of the methods Keras calls itself (`Loss.call`, ...).
_KERAS_METHOD_CONTEXTS = frozenset(
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


def _suffixes(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[i:]) for i in range(len(parts))]


# Re-exports followed from one name at most: a package's `__init__` naming a
# private module's function is one; each star import of a submodule that
# another star-imports could otherwise be followed without end.
MAX_REEXPORT_HOPS = 4


class _Lookup:
    """Resolve dotted references to (module index, local qualname), tolerating
    module names that differ by a leading package (`examples.losses` vs
    `losses`): a reference finds every definition whose qualified name ends
    with it, component by component (a bare name only in a file with no
    module name).

    Definitions are grouped by their last component, and each reference is
    answered once: building every suffix of every qualified name up front
    cost most of the project facts' time on a large project."""

    def __init__(self, indexes: list[ModuleIndex]) -> None:
        # last component -> (index, local qualname, qualified name), in index order
        self.by_last: dict[str, list[tuple[ModuleIndex, str, str]]] = {}
        for index in indexes:
            for qualname in [*index.functions, *index.classes]:
                full = index.qualify(qualname)
                self.by_last.setdefault(full.rpartition(".")[2], []).append((index, qualname, full))
        self.found: dict[str, list[tuple[ModuleIndex, str]]] = {}
        # Module-level objects made by a call (`load = make_loader(cfg)`,
        # `net = Net()`): qualified name -> what made them.
        self.module_objects: dict[str, str] = {}
        for index in indexes:
            if index.module:
                for name, constructor in index.module_instances.items():
                    self.module_objects[f"{index.module}.{name}"] = constructor
        # Modules that re-export others' names (`from .helpers import *` in a
        # package's `__init__.py`): module name -> the modules it star-imports.
        self.reexports: dict[str, list[str]] = {}
        # What each module imports, by the name it binds (`from
        # ._penalty import gradient_penalty` in `pkg/losses/__init__.py`):
        # `pkg.losses.gradient_penalty`, imported elsewhere, is that function.
        self.imported: dict[str, dict[str, str]] = {}
        self.reexport_hops = 0  # re-exports followed to reach the name looked up now
        # Modules that import or re-export, by their last component; and what
        # `_modules_named` answered.
        self.modules_by_last: dict[str, list[str]] = {}
        self.modules_named: dict[str, list[str]] = {}
        for index in indexes:
            if index.reexported_stars and index.module:
                self.reexports.setdefault(index.module, []).extend(index.reexported_stars)
            if index.reexported and index.module:
                self.imported.setdefault(index.module, {}).update(index.reexported)
        for module in {*self.imported, *self.reexports}:
            self.modules_by_last.setdefault(module.rpartition(".")[2], []).append(module)

    def find(self, name: str, origin: ModuleIndex | None = None) -> list[tuple[ModuleIndex, str]]:
        """Definitions `name` may refer to. A bare name written in `origin`,
        a file with no module name (a notebook), is that file's own
        definition when it has one: two notebooks that each define `f`
        cannot import each other's. `make_loss()` (the result of a call,
        `ImportResolution.call_results`) is what `make_loss` returns. A name
        qualified with `origin`'s own
        module name is `origin`'s definition: pass 1 qualifies only a file's
        own definitions so, and two files may share a module name
        (`a/main.py`, `b/main.py`)."""
        if name.endswith("()"):
            found: list[tuple[ModuleIndex, str]] = []
            for index, made in self.find(name[:-2], origin):
                if made in index.functions:
                    found += [(index, returned) for returned in index.functions[made].returns]
                elif made in index.classes:
                    found += self.call_method(index, made)
            return found
        if origin is not None and origin.module and name.startswith(origin.module + "."):
            local = name[len(origin.module) + 1 :]
            if local in origin.functions or local in origin.classes:
                return [(origin, local)]
        known = self._find(name)
        if not known and name in self.module_objects:
            # A module-level object handed on or called (`ds.map(load)` for
            # `load = make_loader(cfg)`): what its maker returns runs.
            return self.find(self.module_objects[name] + "()", origin)
        if origin is not None and not origin.module and "." not in name:
            own = [(index, qualname) for index, qualname in known if index is origin]
            if own:
                return own
        return known

    def call_method(
        self, index: ModuleIndex, class_qualname: str, depth: int = 0
    ) -> list[tuple[ModuleIndex, str]]:
        """What calling an object of a project class runs: its `__call__`,
        or for a Keras layer, model or loss the `call` Keras's `__call__`
        runs; the first the class or its project bases define."""
        info = index.classes.get(class_qualname)
        if info is None or depth > 10:
            return []
        names = ["__call__"]
        if _keras_base(index, class_qualname, self) in _KERAS_CALLED_BASES:
            names.append("call")
        for name in names:
            if name in info.methods:
                return [(index, f"{class_qualname}.{name}")]
        for base in info.bases:
            for base_index, base_qualname in self.find(base, index):
                found = self.call_method(base_index, base_qualname, depth + 1)
                if found:
                    return found
        return []

    def held_instance(self, name: str) -> list[tuple[ModuleIndex, str]]:
        """`Agent.net` (`self.net(x)` in a method of `Agent`): what calling
        the object `Agent` holds in `self.net` (`self.net = Net()`) runs,
        when the project defines its class (`call_method`)."""
        owner, _, attr = name.rpartition(".")
        if not owner:
            return []
        found = []
        for index, qualname in self._find(owner):
            info = index.classes.get(qualname)
            held = info.held_objects.get(attr) if info is not None else None
            target = _held_class(index, held, self) if held is not None else None
            if target is not None:
                found += self.call_method(*target)
        return found

    def held_method(self, name: str) -> list[tuple[ModuleIndex, str]]:
        """`Agent.memory.sample` (`self.memory.sample(...)` in a method of
        `Agent`): the `sample` method of the project class whose object
        `Agent` holds in `self.memory` (`self.memory = ReplayBuffer(...)`).
        Used for what call sites pass, and for tracing: a traced method's
        held objects' methods run in its trace (a step not traced yet that
        calls them is refused instead: `step_hazards`)."""
        if name.count(".") < 2:
            return []
        owner, attr, method = name.rsplit(".", 2)
        found = []
        for index, qualname in self._find(owner):
            held = (
                index.classes[qualname].held_objects.get(attr)
                if qualname in index.classes
                else None
            )
            if held is None:
                continue
            target = _held_class(index, held, self)
            if target is not None and f"{target[1]}.{method}" in target[0].functions:
                found.append((target[0], f"{target[1]}.{method}"))
        return found

    def _find(self, name: str) -> list[tuple[ModuleIndex, str]]:
        known = self.found.get(name)
        if known is not None:
            return known
        dotted_name = "." in name
        tail = "." + name
        known = [
            (index, qualname)
            for index, qualname, full in self.by_last.get(name.rpartition(".")[2], ())
            if (full == name or full.endswith(tail)) and (dotted_name or not index.module)
        ]
        prefix = SOURCE_FOLDER + "."
        if not known and name.startswith(prefix):
            # Module names leave a leading `src/` out (`module_name_for`); a
            # project that imports its `src` as a package (`from
            # src.dataset import load`) names the same module with it.
            known = self._find(name[len(prefix) :])
        if not known and dotted_name:
            self.found[name] = known  # a cycle of star imports ends here
            known = self._reexported(name)
        self.found[name] = known
        return known

    def _reexported(self, name: str) -> list[tuple[ModuleIndex, str]]:
        """A name another module imports and so binds: `pkg.f` where
        `pkg/__init__.py` says `from .helpers import f` or `from .helpers
        import *`, or `pkg.Net.call` for a class `Net` it imports by name:
        the definition in `pkg.helpers` (and so on through further imports)."""
        if self.reexport_hops >= MAX_REEXPORT_HOPS:
            return []
        self.reexport_hops += 1
        try:
            return self._reexported_once(name)
        finally:
            self.reexport_hops -= 1

    def _reexported_once(self, name: str) -> list[tuple[ModuleIndex, str]]:
        parts = name.split(".")
        found: list[tuple[ModuleIndex, str]] = []
        for cut in range(len(parts) - 1, 0, -1):
            owner, first, rest = ".".join(parts[:cut]), parts[cut], parts[cut + 1 :]
            for module in self._modules_named(owner):
                target = self.imported.get(module, {}).get(first)
                if target is not None and target != name:
                    found.extend(self._find(".".join([target, *rest])))
                if rest:
                    continue  # a star import is followed for the name it exports
                for source in self.reexports.get(module, ()):
                    found.extend(self._find(f"{source}.{first}"))
            if found:
                break
        unique: dict[tuple[int, str], tuple[ModuleIndex, str]] = {}
        for index, qualname in found:
            unique.setdefault((id(index), qualname), (index, qualname))
        return list(unique.values())

    def _modules_named(self, owner: str) -> list[str]:
        """Project modules `owner` may name, tolerating a leading package
        either side (`losses` for `pkg.losses`): each ends with `owner`'s
        last component, so only those are compared."""
        known = self.modules_named.get(owner)
        if known is None:
            known = [
                module
                for module in self.modules_by_last.get(owner.rpartition(".")[2], ())
                if module == owner or module.endswith("." + owner) or owner.endswith("." + module)
            ]
            self.modules_named[owner] = known
        return known


def _keras_base(
    index: ModuleIndex, class_qualname: str, lookup: _Lookup, depth: int = 0
) -> str | None:
    """The Keras base (`Loss`, `Layer`, ...) a class derives from, following project classes."""
    if depth > 10:
        return None
    info = index.classes.get(class_qualname)
    if info is None:
        return None
    for base in info.bases:
        leaf = traced_base_leaf(base)
        if leaf in FRAMEWORK_TRACED_METHODS:
            return leaf
        for other_index, other_qualname in lookup.find(base, index):
            if other_qualname in other_index.classes:
                found = _keras_base(other_index, other_qualname, lookup, depth + 1)
                if found:
                    return found
    return None


def traced_base_leaf(base: str) -> str | None:
    """The framework base class a resolved base name is, by its last name
    (`Layer`, `Bijector`): a Keras class under any of its spellings, or a
    TensorFlow Probability bijector."""
    if base.startswith("tensorflow_probability.") and base.endswith(".Bijector"):
        return "Bijector"
    return keras_leaf(base)


# Hooks the framework calls with exactly this many positional arguments
# (besides `self`): Keras's `fit` calls `train_step(data)`. A method of that
# name that cannot take them (`train_step(self, features, labels, ...)`,
# called by hand from an eager loop) is the project's own, not the hook.
FRAMEWORK_CALL_ARGUMENTS = {"train_step": 1, "test_step": 1, "predict_step": 1}


def _callable_as_hook(info: FunctionInfo, method: str) -> bool:
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


# Words in a function name that say it measures, not trains: a metric with a
# loss's signature (`compute_accuracy(logits, labels)`), or a metric's
# `update_state`.
_METRIC_WORDS = frozenset(
    {"accuracy", "metric", "precision", "recall", "auc", "iou", "score", "acc", "update"}
)


def names_a_measure(name: str) -> bool:
    """Whether a function's name says it measures rather than trains: one of
    its words (`compute_accuracy`, `iouMetric`) is a metric's, in the
    singular or the plural (`_assymetric_focal_tversky_loss` has none)."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).lower()
    return any(
        word in _METRIC_WORDS or word.removesuffix("s") in _METRIC_WORDS
        for word in spaced.split("_")
    )


def _loss_by_signature(info: FunctionInfo) -> bool:
    if names_a_measure(info.qualname.rsplit(".", 1)[-1]):
        return False
    return tuple(info.caller_params[:2]) in LOSS_SIGNATURES


def _signature_params(source: str) -> list[tuple[bool, bool]] | None:
    """Per position of an `input_signature=[tf.TensorSpec(...), ...]`:
    (tensor, scalar). None when it cannot be read."""
    try:
        tree = ast.parse(source, mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(tree, (ast.List, ast.Tuple)):
        return None
    result = []
    for spec in tree.elts:
        if not (isinstance(spec, ast.Call) and (dotted(spec.func) or "").endswith("TensorSpec")):
            result.append((False, False))
            continue
        shape = spec.args[0] if spec.args else None
        for kw in spec.keywords:
            if kw.arg == "shape":
                shape = kw.value
        scalar = isinstance(shape, (ast.List, ast.Tuple)) and not shape.elts
        result.append((True, scalar))
    return result


@dataclass
class _Marks:
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


def compute_facts(
    indexes: list[ModuleIndex], carried: Sequence[tuple[ModuleIndex, TracedFunction]] = ()
) -> ProjectFacts:
    """Which functions run traced, why, and with what arguments. `carried`
    are functions known to run traced for reasons the indexes no longer show
    (a fix round re-indexing one file: a loss whose decorator the round
    removed still runs in its train step); what they call runs traced too."""
    facts = ProjectFacts()
    lookup = _Lookup(indexes)
    queue: deque[tuple[ModuleIndex, str]] = deque()
    marks: dict[tuple[str, str], _Marks] = {}
    by_path = {index.path: index for index in indexes}

    def mark(
        index: ModuleIndex,
        qualname: str,
        reason: str,
        is_loss: bool = False,
        tensor: list[str] | tuple[str, ...] = (),
        likely: list[str] | tuple[str, ...] = (),
        pending: bool = False,
        elsewhere: bool = False,
    ) -> None:
        info = index.functions.get(qualname)
        if info is None:
            return
        key = (index.path, qualname)
        known = marks.get(key)
        if known is None:
            known = marks[key] = _Marks(reason, pending=pending, elsewhere=elsewhere)
            queue.append((index, qualname))
        elif known.pending and not pending:
            # Traced for real, not only once a fix decorates it.
            known.reason, known.pending = reason, False
            known.elsewhere = known.elsewhere or elsewhere
            queue.append((index, qualname))
        elif elsewhere and not known.elsewhere:
            known.elsewhere = True
            queue.append((index, qualname))  # so its callees learn it too
        if reason not in known.contexts:
            known.contexts.append(reason)
        known.is_loss = known.is_loss or is_loss
        known.tensor.update(tensor)
        known.likely.update(likely)

    # Keras models every `compile` runs eagerly: their methods are not
    # traced by Keras's contract.
    eager_models = eagerly_compiled_classes(
        indexes, lambda index, name: _named_classes(index, name, lookup)
    )

    def mark_class(index: ModuleIndex, qualname: str, reason: str, elsewhere: bool) -> None:
        base = _keras_base(index, qualname, lookup)
        if base is None:
            return
        # A base found through project classes may be another module's.
        elsewhere = elsewhere or not any(
            traced_base_leaf(b) in FRAMEWORK_TRACED_METHODS for b in index.classes[qualname].bases
        )
        for method in FRAMEWORK_TRACED_METHODS[base]:
            method_qualname = f"{qualname}.{method}"
            info = index.functions.get(method_qualname)
            if info is None or not _callable_as_hook(info, method):
                continue
            is_loss = base in LOSS_BASES
            count = 0 if is_loss else KERAS_TENSOR_ARGUMENTS.get(method, 0)
            tensors = info.caller_params[:count]
            mark(
                index,
                method_qualname,
                reason or f"{base}.{method}",
                is_loss,
                tensors,
                elsewhere=elsewhere,
            )
            if base in SCALAR_STEP_BASES:
                # The optimizer's step count: a scalar integer variable.
                marks[(index.path, method_qualname)].scalar.update(tensors)

    for index in indexes:
        for qualname, info in index.functions.items():
            if any(d in TF_FUNCTION_NAMES for d in info.decorators):
                mark(index, qualname, OWN_DECORATOR)
                _mark_signature(marks[(index.path, qualname)], info, info.decorator_keywords)
        for qualname in index.classes:
            if (index.path, qualname) not in eager_models:
                mark_class(index, qualname, "", elsewhere=False)
        for site in index.traced_sites:
            where = path_line(index.path, site.lineno, index.cell_starts)
            is_loss = site.reason.startswith(f"{COMPILE_CONTEXT}(loss")
            is_metric = site.reason.startswith(
                (f"{COMPILE_CONTEXT}(metrics", f"{COMPILE_CONTEXT}(w")
            )
            for target_index, target in lookup.find(site.target, index):
                elsewhere = target_index.path != index.path
                if target in target_index.classes:
                    mark_class(target_index, target, f"{site.reason} at {where}", elsewhere)
                    continue
                info = target_index.functions.get(target)
                if info is None:
                    continue
                params = info.caller_params
                tensors: list[str] = []
                likely: list[str] = []
                if site.arguments == "tensor":
                    tensors = params
                elif site.arguments == "first" or is_metric:
                    tensors = params[: 2 if is_metric else 1]
                elif site.arguments == "likely":
                    likely = params
                mark(
                    target_index,
                    target,
                    f"{site.reason} at {where}",
                    is_loss,
                    tensors,
                    likely,
                    elsewhere=elsewhere,
                )
                if site.reason.startswith(WRAPPED):
                    options = {"tensorflow.function": site.keywords}
                    _mark_signature(marks[(target_index.path, target)], info, options)

    for index, known in carried:
        mark(
            index,
            known.qualname,
            known.reason,
            known.is_loss,
            tuple(known.tensor_params),
            tuple(known.likely_params),
            pending=known.pending,
            elsewhere=not known.local_reasons_only,
        )
        marks[(index.path, known.qualname)].contexts[:] = known.contexts

    # Functions nested in each qualname prefix, built once per file: scanning
    # every function for each traced one made large files quadratic.
    nested_in: dict[int, dict[str, list[str]]] = {}
    overriding = overrides(indexes, lookup)

    def propagate() -> None:
        while queue:
            index, qualname = queue.popleft()
            known = marks[(index.path, qualname)]
            info = index.functions[qualname]
            caller = info.qualname
            how = "will be traced with" if known.pending else TRACED_CALLER_CONTEXT
            # `K.rnn(self.step, ...)` in a base class runs a subclass's
            # `step`: a method handed to a tracer by the base class. (A
            # method the base class calls itself is judged as it is called.)
            handed = any(
                c.startswith(HANDED_CONTEXT) and not c.startswith(COMPILE_CONTEXT)
                for c in known.contexts
            )
            for sub_index, override in overriding.get((index.path, qualname), ()) if handed else ():
                mark(
                    sub_index,
                    override,
                    f"overrides traced `{caller}`",
                    pending=known.pending,
                    elsewhere=known.elsewhere or sub_index.path != index.path,
                )
            if id(index) not in nested_in:
                nested_in[id(index)] = _nested_functions(index)
            for nested in nested_in[id(index)].get(qualname, ()):
                if nested != qualname and not _runs_eagerly(index, nested):
                    where = (
                        "nested in a step that will be traced"
                        if known.pending
                        else "nested in traced"
                    )
                    mark(
                        index,
                        nested,
                        f"{where} `{caller}`",
                        pending=known.pending,
                        elsewhere=known.elsewhere,
                    )
            for callee in info.calls:
                targets = lookup.find(callee, index)
                if callee.endswith("()"):
                    # Calling a plain Python object (`parse(lines)`) runs
                    # Python bookkeeping once, while tracing, by design: the
                    # step that calls it is judged instead (`step_hazards`).
                    targets = [
                        (target_index, target)
                        for target_index, target in targets
                        if not _is_plain_class(target_index, target.rpartition(".")[0], lookup)
                    ]
                if not targets and not known.pending:
                    # `self.critic.sync()`: a method of a TensorFlow object
                    # the class holds (a `tf.Module`, a Keras layer) runs in
                    # the caller's trace. A plain Python object's called for
                    # its effect (a replay buffer's `add`, a tracker's) is
                    # Python bookkeeping that runs once, while tracing, by
                    # design: the step that calls it is judged instead
                    # (`step_hazards`), as a step not traced yet is. One
                    # whose result the caller uses (`self.aug.flip(x)`)
                    # computes part of the traced value: it runs traced.
                    # `self.decoder(x)`: calling a held object runs its
                    # `__call__` (a layer overriding `__call__` itself).
                    computes = callee in info.held_results
                    held = (
                        lookup.held_method(callee)
                        or lookup.held_instance(callee)
                        or _parameter_method(index, info, callee, lookup)
                    )
                    targets = [
                        (target_index, target)
                        for target_index, target in held
                        if computes
                        or not _is_plain_class(target_index, target.rpartition(".")[0], lookup)
                    ]
                for target_index, target in targets:
                    if (
                        target in target_index.classes
                        and not callee.endswith("()")
                        and _is_plain_class(target_index, target, lookup)
                        and init_computes(target_index, target)
                    ):
                        # `CorrBlock(f1, f2)`: building an object of a plain
                        # class runs its `__init__` in the caller's trace.
                        target = f"{target}.__init__"
                    if target in target_index.functions:
                        reason = f"{how} `{caller}`"
                        mark(
                            target_index,
                            target,
                            reason,
                            pending=known.pending,
                            elsewhere=known.elsewhere or target_index.path != index.path,
                        )

    _record_param_classes(indexes, lookup)
    propagate()
    # Train-step methods a loop calls: found once, used twice (they can be
    # pending steps, and their modules record that a loop calls them).
    looped_methods = looped_train_methods(indexes)
    for index, qualname in _pending_train_steps(indexes, lookup, marks, looped_methods):
        mark(
            index,
            qualname,
            "a train step called from a Python loop: it will be traced once "
            "`@tf.function` decorates it (TFR302)",
            pending=True,
            elsewhere=True,  # the loop calling it may be another module's
        )
    propagate()
    _mark_train_step_contexts(indexes, lookup, marks)
    _mark_value_references(indexes, lookup, marks)
    _apply_call_sites(indexes, lookup, marks)
    for (path, qualname), known in marks.items():
        facts.traced.setdefault(path, {})[qualname] = TracedFunction(
            qualname,
            known.reason,
            known.is_loss,
            frozenset(known.tensor),
            frozenset(known.scalar),
            frozenset(known.likely - known.tensor),
            frozenset(known.python),
            known.pending,
            _loss_by_signature(by_path[path].functions[qualname]),
            elements=tuple(sorted(known.elements.items())),
            local_reasons_only=not known.elsewhere,
            contexts=tuple(dict.fromkeys([known.reason, *known.contexts])),
            jit_compile=_own_jit_compile(by_path[path].functions[qualname]),
            mixed_callers=tuple(
                (name, python_at, tensor_at)
                for name, (python_at, tensor_at) in sorted(known.mixed.items())
            ),
        )
    _record_foreign_writes(indexes)
    _record_rebound_imports(indexes)
    _record_star_names(indexes)
    _record_held_state(indexes, lookup)
    keras = _KerasClasses(lookup)
    _record_held_classes(indexes, lookup, keras)
    _record_called_classes(indexes, lookup, keras)
    _record_built_by_running_call(indexes, lookup)
    record_callee_parameters(indexes, lookup)
    _record_training_facts(indexes, lookup, facts)
    _record_custom_schedules(indexes, lookup)
    record_looped_train_methods(indexes, looped_methods)
    return facts


def _mark_value_references(
    indexes: list[ModuleIndex], lookup: _Lookup, marks: dict[tuple[str, str], _Marks]
) -> None:
    """A traced function the project hands over as a value (to a Keras
    `LossFunctionWrapper`, a trainer's `loss_fn=`, returned by a factory,
    kept in `self.loss_fn`) runs wherever its receiver runs it: a context
    it keeps when a fix removes its own `@tf.function`."""
    if not marks:
        return
    for index in indexes:
        for name, how in index.value_references.items():
            for target_index, target in lookup.find(name, index):
                known = marks.get((target_index.path, target))
                if known is None:
                    continue
                context = f"{how} of {index.path}"
                if context not in known.contexts:
                    known.contexts.append(context)
                if target_index is not index:
                    known.elsewhere = True


def _runs_eagerly(index: ModuleIndex, qualname: str) -> bool:
    """Whether a function is, or is nested in, one the file hands to
    `tf.py_function`/`tf.numpy_function` (`eager_callables`)."""
    return any(
        qualname == eager or qualname.startswith(eager + ".") for eager in index.eager_functions
    )


def _own_jit_compile(info: FunctionInfo) -> str | None:
    for decorator in info.decorators:
        if decorator in TF_FUNCTION_NAMES:
            return info.decorator_keywords.get(decorator, {}).get("jit_compile")
    return None


def step_contexts(qualname: str) -> frozenset[str]:
    """The contexts `_mark_train_step_contexts` gives what the train step
    `qualname` (a local qualname) reaches: decorated as it is, or with the
    tape in its loop extracted."""
    return frozenset(f"{kind} `{qualname}`" for kind in PENDING_STEP_CONTEXTS[:2])


def tape_block_context(index: ModuleIndex, line: int) -> str:
    """The context of what a module-level `GradientTape` block in a loop,
    its `with` on `line` of `index`'s file, reaches: traced once TFR303
    extracts the block into a step."""
    return f"{EAGER_LOOP_CONTEXTS[0]} the `GradientTape` at " + path_line(
        index.path, line, index.cell_starts
    )


def _call_targets(
    index: ModuleIndex, callee: str, lookup: _Lookup
) -> list[tuple[ModuleIndex, str]]:
    """The project functions a call of `callee` (as `index` names it) may
    run: a definition, or what calling an object a class holds runs
    (`self.net(x)`: `Net.call`)."""
    return lookup.find(callee, index) or lookup.held_instance(callee)


def _mark_train_step_contexts(
    indexes: list[ModuleIndex], lookup: _Lookup, marks: dict[tuple[str, str], _Marks]
) -> None:
    """The train step each traced function runs in: a function that opens a
    `GradientTape` and applies gradients, or a module-level tape block in a
    loop, and everything it calls, directly or not (a module-level model's
    `call` through `net(x)` included), runs traced once that step is (TFR301
    moves a loss's decorator onto it, TFR302 decorates it, TFR303 extracts
    it from its loop). A loss whose own `@tf.function` a fix removes keeps
    this context: its hazards are still hazards of the step. The decoration
    gate reads it to find what a step reaches that is traced already (a
    Keras model's `call`). Recorded for functions already traced only;
    steps already traced give their callees that context themselves."""
    if not marks:
        return
    seen: set[tuple[str, str, str]] = set()
    queue: deque[tuple[ModuleIndex, str, str]] = deque()
    for index in indexes:
        for qualname, info in index.functions.items():
            if not info.trains:
                continue
            known = marks.get((index.path, qualname))
            if known is not None and not known.pending:
                continue
            kind = EAGER_LOOP_CONTEXTS[0] if info.tape_in_loop else PENDING_STEP_CONTEXTS[0]
            queue.append((index, qualname, f"{kind} `{info.qualname}`"))
        for line, called in index.tape_block_calls.items():
            context = tape_block_context(index, line)
            for callee in called:
                for target_index, target in _call_targets(index, callee, lookup):
                    if target in target_index.functions:
                        queue.append((target_index, target, context))
        for tape_loss in index.tape_losses:
            if tape_loss.function:
                continue
            where = f"{EAGER_LOOP_CONTEXTS[1]} " + path_line(
                index.path, tape_loss.lineno, index.cell_starts
            )
            for target_index, target in lookup.find(tape_loss.callee, index):
                if target in target_index.functions:
                    queue.append((target_index, target, where))
    while queue:
        index, qualname, context = queue.popleft()
        key = (index.path, qualname)
        if (*key, context) in seen:
            continue
        seen.add((*key, context))
        known = marks.get(key)
        if known is not None and context not in known.contexts:
            known.contexts.append(context)
        for callee in index.functions[qualname].calls:
            for target_index, target in _call_targets(index, callee, lookup):
                if target in target_index.functions:
                    queue.append((target_index, target, context))


def _mark_signature(known: _Marks, info: FunctionInfo, keywords: dict[str, dict[str, str]]) -> None:
    """`tf.function(input_signature=[...])`: its positional parameters are tensors."""
    source = keywords.get("tensorflow.function", {}).get("input_signature")
    if not source:
        return
    specs = _signature_params(source)
    if specs is None:
        return
    for name, (tensor, scalar) in zip(info.caller_params, specs, strict=False):
        if tensor:
            known.tensor.add(name)
        if scalar:
            known.scalar.add(name)


def _looped_targets(
    indexes: list[ModuleIndex], lookup: _Lookup, looped_methods: set[tuple[str, str]]
) -> set[tuple[str, str]]:
    """(path, qualname) of functions some Python loop calls: through the
    project's names, or by bare name for a function nested where it is called
    (a step defined inside `main()`)."""
    found: set[tuple[str, str]] = set()
    for index in indexes:
        for callee in index.loop_calls:
            for target_index, target in lookup.find(callee, index):
                found.add((target_index.path, target))
            if "." not in callee:
                suffix = "." + callee
                for qualname in index.functions:
                    if qualname.endswith(suffix):
                        found.add((index.path, qualname))
    return found | looped_methods


def _pending_train_steps(
    indexes: list[ModuleIndex],
    lookup: _Lookup,
    marks: dict[tuple[str, str], _Marks],
    looped_methods: set[tuple[str, str]],
) -> list[tuple[ModuleIndex, str]]:
    """Undecorated custom train steps (they open a `GradientTape` and apply
    gradients) called from a Python loop, not `Model.train_step` overrides:
    the functions TFR302 decorates."""
    looped = _looped_targets(indexes, lookup, looped_methods)
    result = []
    for index in indexes:
        for qualname, info in index.functions.items():
            if not info.trains:
                continue
            if info.tape_in_loop or info.consumes_grown_lists:
                continue  # a training loop (TFR303's case), or eager by design
            if (index.path, qualname) in marks or (index.path, qualname) not in looped:
                continue
            if info.class_name and qualname.rsplit(".", 1)[-1] in ("train_step", "test_step"):
                continue
            result.append((index, qualname))
    return result


@dataclass
class _Passed:
    """What one call site passes one target: per parameter, the site's own
    evidence (`given`), and the parameters it forwards from its caller
    (parameter -> (caller's key, caller's parameter))."""

    target: tuple[str, str]
    given: dict[str, str]
    where: str
    forwarded: dict[str, tuple[tuple[str, str], str]]
    # Per parameter filled with a list or tuple display: its elements' evidence.
    elements: dict[str, str] = field(default_factory=dict)

    def evidence(self, known: dict[tuple[str, str], dict[str, str]]) -> dict[str, str]:
        """`given`, with a forwarded parameter's evidence what the project
        knows its caller receives there, when it knows."""
        if not self.forwarded:
            return self.given
        given = dict(self.given)
        for name, (caller, param) in self.forwarded.items():
            found = known.get(caller, {}).get(param)
            if found is not None:
                given[name] = found
        return given


# How many rounds forwarded evidence goes through: one call level each; a
# longer chain, or a recursion, stays unknown beyond it.
_FORWARDING_ROUNDS = 8


def _site_targets(
    index: ModuleIndex, site: CallSite, lookup: _Lookup
) -> list[tuple[ModuleIndex, str]]:
    nested = _nested_callee(index, site)
    if nested:
        return [(index, nested)]
    targets = lookup.find(site.callee, index)
    if not targets and site.via_attribute:
        targets = lookup.held_method(site.callee) or lookup.held_instance(site.callee)
    return targets


def _self_offset(site: CallSite, params: list[str]) -> int:
    """1 when the call binds the callee's first parameter (`self.step(x)`,
    a held object's method), else 0."""
    return 1 if site.via_attribute and params[:1] in (["self"], ["cls"]) else 0


def _filled_parameter(argument: str, params: list[str], offset: int) -> str:
    """The parameter a site's argument fills: by position (a decimal
    string, after a bound `self`), else the keyword itself."""
    position = int(argument) + offset if argument.isdigit() else -1
    return params[position] if 0 <= position < len(params) else argument


def _passed(index: ModuleIndex, site: CallSite, target_index: ModuleIndex, target: str) -> _Passed:
    """Which parameter of `target` each argument of `site` fills."""
    params = target_index.functions[target].params
    offset = _self_offset(site, params)
    given = dict(site.keywords)
    splat = given.pop(SPLAT, None)
    for i, evidence in enumerate(site.args):
        if i + offset < len(params):
            given.setdefault(params[i + offset], evidence)
    if splat is not None:  # `**self.config.kl` fills the rest
        for name in params[offset:]:
            given.setdefault(name, splat)
    forwarded: dict[str, tuple[tuple[str, str], str]] = {}
    for argument, param in site.forwarded:
        name = _filled_parameter(argument, params, offset)
        if name in given:
            forwarded[name] = ((index.path, site.caller), param)
    elements: dict[str, str] = {}
    for argument, codes in site.structures:
        elements[_filled_parameter(argument, params, offset)] = codes
    where = path_line(index.path, site.lineno, index.cell_starts)
    return _Passed((target_index.path, target), given, where, forwarded, elements)


def _received(
    info: FunctionInfo, passed: list[dict[str, str]], known: _Marks | None
) -> dict[str, str]:
    """What the project knows a function receives, per parameter: `t`/`s`
    when its tracer or every call site passes a tensor (a scalar), `p` when
    every site passes a Python value (a parameter a site leaves out has its
    default, a Python value)."""
    received: dict[str, str] = {}
    for name in info.caller_params:
        evidence = {site.get(name, "p") for site in passed}
        if evidence and evidence <= {"t", "s"}:
            received[name] = "s" if evidence == {"s"} else "t"
        elif evidence == {"p"}:
            received[name] = "p"
    if known is not None:
        received.update((name, "t") for name in known.tensor - known.scalar)
        received.update((name, "s") for name in known.scalar & known.tensor)
    return received


def _forwarded_knowledge(
    passes: list[_Passed],
    by_path: dict[str, ModuleIndex],
    marks: dict[tuple[str, str], _Marks],
) -> dict[tuple[str, str], dict[str, str]]:
    """What each function that forwards a parameter receives there, to a
    fixed point: `call(self, x, step)` forwards `step` to `scaled_noise`,
    and receives a tensor from `net(xb, counter)`; so does `scaled_noise`.
    Bounded rounds: a recursion (`f(x)` calling `f(x)`) ends unknown."""
    callers = {caller for p in passes for caller, _ in p.forwarded.values()}
    if not callers:
        return {}
    into: dict[tuple[str, str], list[_Passed]] = {caller: [] for caller in callers}
    for p in passes:
        if p.target in into:
            into[p.target].append(p)
    known: dict[tuple[str, str], dict[str, str]] = {}
    for _round in range(_FORWARDING_ROUNDS):
        updated = {}
        for caller in callers:
            info = by_path[caller[0]].functions.get(caller[1])
            if info is not None:
                given = [p.evidence(known) for p in into[caller]]
                updated[caller] = _received(info, given, marks.get(caller))
        if updated == known:
            break
        known = updated
    return known


def _apply_call_sites(
    indexes: list[ModuleIndex], lookup: _Lookup, marks: dict[tuple[str, str], _Marks]
) -> None:
    """What call sites pass to traced functions: a parameter every call site
    passes a tensor is a tensor (a scalar when every one passes a scalar); one
    some site passes a tensor is likely one; one some site passes a Python
    value is a Python value. A site that passes on its caller's own parameter
    passes what the caller receives there (`_forwarded_knowledge`)."""
    # What a traced function is passed, and what a function forwarding a
    # parameter is: the other targets' sites say nothing needed.
    needed = {
        (index.path, site.caller)
        for index in indexes
        for site in index.call_sites
        if site.forwarded
    }
    passes: list[_Passed] = []
    for index in indexes:
        for site in index.call_sites:
            for target_index, target in _site_targets(index, site, lookup):
                key = (target_index.path, target)
                if (key in marks or key in needed) and target in target_index.functions:
                    passes.append(_passed(index, site, target_index, target))
    by_path = {index.path: index for index in indexes}
    knowledge = _forwarded_knowledge(passes, by_path, marks)
    seen: dict[tuple[str, str], list[tuple[dict[str, str], str]]] = {}
    structures: dict[tuple[str, str], list[dict[str, str]]] = {}
    for p in passes:
        if p.target in marks:
            seen.setdefault(p.target, []).append((p.evidence(knowledge), p.where))
            structures.setdefault(p.target, []).append(p.elements)
    for key, located in seen.items():
        known = marks[key]
        info = by_path[key[0]].functions[key[1]]
        sites = [given for given, _ in located]
        known.elements.update(_element_evidence(info.caller_params, structures[key]))
        for name in info.caller_params:
            python_at = [where for given, where in located if given.get(name) == "p"]
            tensor_at = [where for given, where in located if given.get(name, "") in ("t", "s")]
            if python_at and tensor_at:
                known.mixed[name] = (python_at[0], tensor_at[0])
            evidence = [site.get(name, "p") for site in sites]
            if all(e in "ts" for e in evidence):
                known.tensor.add(name)
                if all(e == "s" for e in evidence):
                    known.scalar.add(name)
            elif any(e in "ts" for e in evidence) and "p" not in evidence:
                known.likely.add(name)
            if any(site.get(name) == "p" for site in sites):
                known.python.add(name)


def _element_evidence(params: list[str], sites: list[dict[str, str]]) -> dict[str, str]:
    """Per parameter every call site fills with a list or tuple display,
    what each element is (see `TracedFunction.elements`); parameters some
    site fills otherwise are left out."""
    found: dict[str, str] = {}
    for name in params:
        given = [site.get(name) for site in sites]
        if not given or any(codes is None for codes in given):
            continue
        size = max(len(codes) for codes in given if codes is not None)
        combined = ""
        for position in range(size):
            at = [codes[position] if position < len(codes) else "?" for codes in given if codes]
            if all(code in "ts" for code in at):
                combined += "s" if all(code == "s" for code in at) else "t"
            elif "p" not in at:
                combined += "l"
            else:
                combined += "?"
        if combined.strip("?"):
            found[name] = combined
    return found


def _nested_callee(index: ModuleIndex, site: CallSite) -> str | None:
    """The function a plain-name call reaches when the calling function, or
    one it is nested in, defines it (`_nms(class_id)` inside
    `Post._per_class` calls `Post._per_class._nms`): the nearest such
    definition shadows the module's names. Only functions enclose names: a
    method's plain-name call never reaches another method of its class."""
    if site.via_attribute or "." in site.callee or not site.caller:
        return None
    scope = site.caller
    while scope in index.functions:
        candidate = f"{scope}.{site.callee}"
        if candidate in index.functions:
            return candidate
        scope = scope.rpartition(".")[0]
    return None


def _record_foreign_writes(indexes: list[ModuleIndex]) -> None:
    """`config.LR = 0.1` in one module rebinds `LR` of module `config`."""
    writes = [(index, written) for index in indexes for written in index.foreign_writes]
    if not writes:
        return
    for index in indexes:
        if not index.module:
            continue
        for writer, written in writes:
            head, _, name = written.rpartition(".")
            if head == index.module or head.endswith("." + index.module):
                how = f"rebound in `{writer.path}`"
                if index.rebound_module_names.get(name, how) == "assigned more than once":
                    index.rebound_module_names[name] = how  # not only by its own module
                index.rebound_module_names.setdefault(name, how)


def _record_rebound_imports(indexes: list[ModuleIndex]) -> None:
    """`import config` then `config.SCALE` read in traced code, where the
    project rebinds `SCALE` after import (`global SCALE` in a function of
    `config`, `config.SCALE = ...` in another module): recorded in the
    importing module as `config.SCALE` -> how. Bindings that run while
    `config` is imported (its own module-level statements) are settled by
    then and are not recorded."""
    by_module: dict[str, ModuleIndex] = {}
    for index in indexes:  # also by shorter names: `losses` for `pkg.losses`
        for key in _suffixes(index.module) if index.module else ():
            by_module.setdefault(key, index)
    # Written through an import (`config.SCALE = ...`): known even when the
    # written module itself was never indexed (it imports no TensorFlow).
    # (The reader's own writes are the frozen-state analysis' to judge: it
    # sees whether they run in a function or once at module level.)
    written = [(writer, target) for writer in indexes for target in writer.foreign_writes]
    for reader in indexes:
        if not reader.module_attribute_reads:
            continue
        for target in set(reader.imports.values()):
            for writer, name in written:
                if (
                    writer is not reader
                    and name.rpartition(".")[0] == target
                    and name in reader.module_attribute_reads
                ):
                    reader.rebound_imports.setdefault(name, f"rebound in `{writer.path}`")
            module = by_module.get(target)
            if module is None or module is reader:
                continue
            for name, how in module.rebound_module_names.items():
                read = f"{target}.{name}"
                if how.startswith("rebound in `") and read in reader.module_attribute_reads:
                    reader.rebound_imports.setdefault(read, how)  # a function or another module


def _record_held_state(indexes: list[ModuleIndex], lookup: _Lookup) -> None:
    """`self.memory = ReplayBuffer(...)` where the project's `ReplayBuffer`
    updates `self.mem_cntr += 1` in a method: a traced method of the holder
    that reads `self.memory.mem_cntr` reads Python state that changes between
    calls. Recorded in the holder's module as `Agent.memory` -> attributes."""
    for index in indexes:
        for class_qualname, info in index.classes.items():
            for attr, callee in info.held_objects.items():
                for target_index, target in lookup.find(callee, index):
                    held = target_index.classes.get(target)
                    if held is None or not held.updated_attrs:
                        continue
                    name = target.rpartition(".")[2]
                    index.held_state[f"{class_qualname}.{attr}"] = {
                        updated: f"updated in place in `{name}.{method}`"
                        for updated, method in held.updated_attrs.items()
                    }
                    break


def _module_named(name: str, by_module: dict[str, ModuleIndex]) -> ModuleIndex | None:
    """The project module `name` refers to, tolerating a package prefix
    that differs (`pkg.utils` against a module indexed as `utils`)."""
    found = by_module.get(name)
    if found is not None:
        return found
    for module, index in by_module.items():
        if module and (name.endswith("." + module) or module.endswith("." + name)):
            return index
    return None


def _exported_names(index: ModuleIndex) -> dict[str, str]:
    """What `from <index's module> import *` binds, as far as pass 1 knows:
    the module's public imports and top-level definitions."""
    names = {alias: target for alias, target in index.imports.items() if not alias.startswith("_")}
    names.update(
        (name, index.qualify(name))
        for name in (*index.functions, *index.classes)
        if "." not in name and not name.startswith("_")
    )
    return names


def _record_star_names(indexes: list[ModuleIndex]) -> None:
    """What names other project modules bring mean, where pass 1 could not
    tell: `from rlzoo.common.utils import *` in a module that never imports
    NumPy itself, then `np.array(...)` (followed through that module's own
    star imports); and `from pkg import tf` where `pkg/__init__.py` does
    `import tensorflow as tf`, then `tf.numpy_function(...)`. The file is
    then indexed again with those names (`build_index`'s `star_names`)."""
    suffixes: dict[str, ModuleIndex] = {}
    for index in indexes:
        parts = index.module.split(".") if index.module else []
        for i in range(len(parts)):
            suffixes.setdefault(".".join(parts[i:]), index)
    if not suffixes:
        return
    by_module = {index.module: index for index in indexes}
    for _round in range(5):  # star imports of star imports, a few levels deep
        changed = False
        for index in indexes:
            names: dict[str, str] = {}
            unseen: list[str] = []
            for module in index.star_imports:
                source = _module_named(module, by_module)
                if source is None or source is index:
                    unseen.append(module)
                    continue
                for alias, target in {**source.star_names, **_exported_names(source)}.items():
                    names.setdefault(alias, target)
            for alias, brought in _reexported_imports(index, suffixes).items():
                names.setdefault(alias, brought)
            if names != index.star_names or unseen != index.unseen_star_imports:
                index.star_names, index.unseen_star_imports = names, unseen
                changed = True
        if not changed:
            break


def _reexported_imports(index: ModuleIndex, suffixes: dict[str, ModuleIndex]) -> dict[str, str]:
    """`tf` -> `tensorflow` for `from pkg import tf` when the project module
    `pkg` binds `tf` to an import of an outside package."""
    found: dict[str, str] = {}
    for alias, target in index.imports.items():
        module, _, name = target.rpartition(".")
        if not module or target.split(".", 1)[0] in EXTERNAL_ROOTS:
            continue
        parts = module.split(".")
        source = next(
            (s for i in range(len(parts)) if (s := suffixes.get(".".join(parts[i:]))) is not None),
            None,
        )
        if source is None or source is index:
            continue
        brought = source.star_names.get(name) or source.imports.get(name)
        if brought and brought.split(".", 1)[0] in EXTERNAL_ROOTS:
            found[alias] = brought
    return found


# Bases that leave a class plain Python.
_PLAIN_BASES = frozenset({"object", "ABC", "Generic", "NamedTuple", "Enum"})
_PLAIN_BASE_MODULES = ("abc.", "typing.", "collections.", "enum.", "dataclasses.")


def _is_plain_class(
    index: ModuleIndex, class_qualname: str, lookup: _Lookup, depth: int = 0
) -> bool:
    """Whether a project class derives only from plain Python: no base, or
    `object`, the standard library's abstract bases, and other plain
    project classes. A base the project does not define (a Keras model, a
    `tf.Module`, a package's class) makes it not plain."""
    info = index.classes.get(class_qualname)
    if info is None or depth > 10:
        return False
    for base in info.bases:
        if base in _PLAIN_BASES or base.startswith(_PLAIN_BASE_MODULES):
            continue
        found = [(i, q) for i, q in lookup.find(base, index) if q in i.classes]
        if not found or not all(_is_plain_class(i, q, lookup, depth + 1) for i, q in found):
            return False
    return True


def _held_class(index: ModuleIndex, callee: str, lookup: _Lookup) -> tuple[ModuleIndex, str] | None:
    """The project class `callee` (as `index` names it) builds, looked up
    through `from module import *` for a bare name."""
    found = _named_classes(index, callee, lookup)
    return found[0] if found else None


def _named_classes(
    index: ModuleIndex, callee: str, lookup: _Lookup
) -> list[tuple[ModuleIndex, str]]:
    """Every project class `callee` (as `index` names it) may build: two
    modules may define a class under the name (`a/nets.py`, `b/nets.py`)."""
    return _class_candidates(index, callee, lookup)[1]


def _class_candidates(
    index: ModuleIndex, callee: str, lookup: _Lookup
) -> tuple[str, list[tuple[ModuleIndex, str]]]:
    """`_named_classes`, with the name they were found under (`callee`, or
    it in a star-imported module)."""
    names = [callee]
    if "." not in callee:
        names += [f"{module}.{callee}" for module in index.star_imports]
    for name in names:
        found = [(i, target) for i, target in lookup.find(name, index) if target in i.classes]
        if found:
            return name, found
    return callee, []


def _importable(
    importer: ModuleIndex, name: str, found: list[tuple[ModuleIndex, str]]
) -> list[tuple[ModuleIndex, str]]:
    """Of the classes `found` for the dotted `name` written in `importer`,
    those Python can import from where `importer` runs: the folder their
    module path (`model/net.py` for `model.net.TextNet`) hangs from holds
    `importer`'s own folder (a script's folder, or the project's root above
    it). Two scripts of a collection each import their own `networks.py`;
    the lookup, tolerant of leading packages, finds both. A class reached
    another way (a package re-exporting it) is kept."""
    folder = PurePath(importer.path).parent.parts
    kept = []
    for target_index, qualname in found:
        module = name[: -len(qualname) - 1] if name.endswith("." + qualname) else ""
        parts = list(PurePath(target_index.path).with_suffix("").parts)
        if parts and parts[-1] == "__init__":
            parts.pop()
        wanted = module.split(".") if module else []
        if not wanted or parts[-len(wanted) :] != wanted:
            kept.append((target_index, qualname))
            continue
        root = parts[: -len(wanted)]
        if list(folder[: len(root)]) == root:
            kept.append((target_index, qualname))
    return kept


# What `called_classes` and `held_classes` say of a project class deriving
# from Keras' `Layer` or `Model` (through project classes too), instead of
# "framework". Its objects accept `training=` whatever their `call` says:
# Keras hands it on, through its call context, to the layers `call` uses.
KERAS_CLASS = "keras"
# One whose `call` takes no `training` and whose methods build only layers
# that ignore it: `training=True` changes nothing it computes.
KERAS_CLASS_IGNORING_TRAINING = "keras-ignores-training"

# Keras layers whose output does not depend on `training`; an RNN layer
# (`RNN_LAYERS`) only when built without `dropout=`/`recurrent_dropout=`.
TRAINING_INSENSITIVE_LAYERS = frozenset(
    {
        "Input", "InputLayer", "Dense", "EinsumDense", "Flatten", "Reshape", "Permute",
        "RepeatVector", "Activation", "ReLU", "LeakyReLU", "PReLU", "ELU", "Softmax",
        "Conv1D", "Conv2D", "Conv3D", "Conv1DTranspose", "Conv2DTranspose",
        "Conv3DTranspose", "SeparableConv1D", "SeparableConv2D", "DepthwiseConv1D",
        "DepthwiseConv2D", "MaxPooling1D", "MaxPooling2D", "MaxPooling3D", "MaxPool1D",
        "MaxPool2D", "MaxPool3D", "AveragePooling1D", "AveragePooling2D", "AveragePooling3D",
        "AvgPool1D", "AvgPool2D", "AvgPool3D", "GlobalAveragePooling1D",
        "GlobalAveragePooling2D", "GlobalAveragePooling3D", "GlobalMaxPooling1D",
        "GlobalMaxPooling2D", "GlobalMaxPooling3D", "Embedding", "LayerNormalization",
        "Concatenate", "Add", "Subtract", "Multiply", "Average", "Maximum", "Minimum",
        "ZeroPadding1D", "ZeroPadding2D", "ZeroPadding3D", "UpSampling1D", "UpSampling2D",
        "UpSampling3D", "Cropping1D", "Cropping2D", "Cropping3D", "Rescaling",
        "Normalization", "LSTM", "GRU", "SimpleRNN",
    }
)  # fmt: skip
RNN_LAYERS = frozenset({"LSTM", "GRU", "SimpleRNN"})
# The Keras bases whose objects take `training` (a `Loss` or a `Metric` does not).
_TRAINING_BASES = frozenset({"Layer", "Model", "Sequential"})
# Keras' own bases a class may derive from and stay one that ignores `training`.
_INERT_KERAS_BASES = frozenset({"Layer", "Model"})
# Methods of Keras' `Layer` a class calls on `self` (`self.add_weight(...)`):
# they build no layer that reads `training`.
_KERAS_LAYER_METHODS = frozenset(
    {
        "add_weight", "add_variable", "add_loss", "add_metric", "add_update", "build",
        "get_config", "compute_output_shape", "compute_mask", "get_layer",
    }
)  # fmt: skip
# Keras modules whose calls build models or read the learning phase: what
# they build may depend on `training` (`applications.ResNet50`, `Sequential`).
_KERAS_TRAINING_MODULES = ("layers.", "applications.", "models.", "backend.")
_BUILTINS = frozenset(dir(builtins))


class _KerasClasses:
    """Which project classes are Keras layers or models, and which of them
    compute the same with `training=True`, each class worked out once.

    A class ignores `training` when the `call` Keras runs takes no
    `training` and nothing its methods (and its project bases') call may
    build a layer that reads it: Keras' dropout, normalization, noise and
    RNN layers, a Keras model or application, another project class or
    function, or a class or factory tfrewrite cannot see (a parameter, a
    package's `KerasLayer`). Only Keras' layers known to ignore `training`,
    TensorFlow's other names, builtins and the class's own methods and held
    layers are known not to."""

    def __init__(self, lookup: _Lookup) -> None:
        self.lookup = lookup
        self.ignoring: dict[tuple[str, str], bool] = {}

    def kind(self, index: ModuleIndex, callee: str) -> str | None:
        """`KERAS_CLASS` or `KERAS_CLASS_IGNORING_TRAINING` when every class
        `callee` may name is a Keras layer or model; None otherwise."""
        name, found = _class_candidates(index, callee, self.lookup)
        # The classes it can import; all of them when none is (a `src/` layout).
        found = _importable(index, name, found) or found
        if not found or any(
            _keras_base(i, q, self.lookup) not in _TRAINING_BASES for i, q in found
        ):
            return None
        if all(self._ignores_training(i, q) for i, q in found):
            return KERAS_CLASS_IGNORING_TRAINING
        return KERAS_CLASS

    def _ignores_training(self, index: ModuleIndex, qualname: str) -> bool:
        key = (index.path, qualname)
        known = self.ignoring.get(key)
        if known is None:
            self.ignoring[key] = False  # a cycle of bases ignores nothing
            called = self.lookup.call_method(index, qualname)
            call = called[0][0].functions.get(called[0][1]) if len(called) == 1 else None
            known = (
                call is not None
                and call.qualname.endswith(".call")
                and "training" not in call.params
                and self._builds_nothing_training_reads(index, qualname)
            )
            self.ignoring[key] = known
        return known

    def _builds_nothing_training_reads(self, index: ModuleIndex, qualname: str) -> bool:
        info = index.classes[qualname]
        for base in info.bases:
            leaf = keras_leaf(base)
            if leaf is not None:
                if leaf not in _INERT_KERAS_BASES and (
                    leaf not in TRAINING_INSENSITIVE_LAYERS or leaf in RNN_LAYERS
                ):
                    return False  # a `Dropout` or `Sequential` subclass
                continue
            if base in _PLAIN_BASES or base.startswith(_PLAIN_BASE_MODULES):
                continue
            found = [(i, q) for i, q in self.lookup.find(base, index) if q in i.classes]
            if not found or not all(self._builds_nothing_training_reads(i, q) for i, q in found):
                return False
        own = index.qualify(qualname) + "."
        known = {*info.methods, *info.held_objects, *_KERAS_LAYER_METHODS}
        prefix = qualname + "."
        for function_name, function in index.functions.items():
            if function_name.startswith(prefix) and any(
                self._may_read_training(index, callee, own, known) for callee in function.calls
            ):
                return False
        return True

    def _may_read_training(
        self, index: ModuleIndex, callee: str, own: str, known: set[str]
    ) -> bool:
        """Whether what a method of a class calls (`callee`, as `index`
        resolves it; `own`: the class's qualified name and a dot, how its
        `self.` calls are named; `known`: its methods, held layers and
        Keras' layer methods) may build or run a layer that reads
        `training`."""
        while callee.endswith("()"):
            callee = callee[:-2]  # `Dropout(0.5)(x)`: the layer built
        if callee.startswith(own):
            return callee[len(own) :].partition(".")[0] not in known
        path = keras_path(callee)
        if path is not None:
            leaf = path.rpartition(".")[2]
            if path.startswith("layers.") and leaf in TRAINING_INSENSITIVE_LAYERS:
                return leaf in RNN_LAYERS  # its `dropout=` is not known here
            return path.startswith(_KERAS_TRAINING_MODULES) or leaf in ("Sequential", "Model")
        if callee.startswith("tensorflow."):
            return False
        if self.lookup.find(callee, index):
            return True  # a project class or function: what it builds is not followed
        if "." not in callee:
            return callee not in _BUILTINS  # a parameter or a name bound at run time
        return any(part[:1].isupper() for part in callee.split("."))


def _class_kind(
    index: ModuleIndex, callee: str, lookup: _Lookup, keras: _KerasClasses
) -> str | None:
    """What `called_classes`/`held_classes` say of the class `callee` (as
    `index` names it) when the project defines it: "python" (plain Python),
    a Keras kind (`_KerasClasses.kind`), or "framework"."""
    found = _held_class(index, callee, lookup)
    if found is None:
        return None
    if _is_plain_class(*found, lookup):
        return "python"
    return keras.kind(index, callee) or "framework"


def _record_held_classes(indexes: list[ModuleIndex], lookup: _Lookup, keras: _KerasClasses) -> None:
    """`self.memory = ReplayBuffer(...)`: whether the class of each held
    object, when the project defines it, is plain Python. A step that calls
    `self.memory.sample(...)` then calls Python code that tracing runs once.
    `self.critic = Critic()` of a Keras model class in any module: a model
    whose `training` matters, or not (`_KerasClasses`)."""
    for index in indexes:
        for class_qualname, info in index.classes.items():
            for attr, callee in info.held_objects.items():
                kind = _class_kind(index, callee, lookup, keras)
                if kind is not None:
                    index.held_classes[f"{class_qualname}.{attr}"] = kind


def _record_called_classes(
    indexes: list[ModuleIndex], lookup: _Lookup, keras: _KerasClasses
) -> None:
    """`Targets(lines)` in a function, or `parse = Targets()` at module level:
    whether each class the module builds, when the project defines it, is
    plain Python. A step that builds or calls such an object runs Python
    code that tracing runs once, and that no rule checks as traced code.
    `net = TextNet(classes=2)` of a Keras model class in any module, in a
    function or at module level: an object that takes `training`, and
    whether it changes what it computes (`_KerasClasses`)."""
    for index in indexes:
        constructors = {callee for info in index.functions.values() for callee in info.calls}
        constructors.update(index.module_instances.values())
        constructors.update(c for built in index.module_object_choices.values() for c in built)
        constructors.update(index.module_call_lines)
        for callee in sorted(constructors):
            if not callee or not callee.rpartition(".")[2][:1].isupper():
                continue  # a function or method: tracing follows those itself
            kind = _class_kind(index, callee, lookup, keras)
            if kind is not None:
                index.called_classes[callee] = kind


def _record_param_classes(indexes: list[ModuleIndex], lookup: _Lookup) -> None:
    """The parameters every call site of a function fills with an object of
    one project class (`ModuleIndex.param_classes`). A site that passes
    anything else there (`object()`, a name not bound to a built object)
    leaves the parameter unknown."""
    if not any(site.objects for index in indexes for site in index.call_sites):
        return
    sites = [
        (index, site, targets)
        for index in indexes
        for site in index.call_sites
        if (targets := _site_targets(index, site, lookup))
    ]
    passed_objects = {
        (id(target_index), target)
        for _, site, targets in sites
        if site.objects
        for target_index, target in targets
    }
    seen: dict[tuple[int, str], dict[str, set[str]]] = {}
    targets_of: dict[tuple[int, str], ModuleIndex] = {}
    for index, site, targets in sites:
        built_at = dict(site.objects)
        for target_index, target in targets:
            key = (id(target_index), target)
            info = target_index.functions.get(target)
            if key not in passed_objects or info is None:
                continue
            targets_of[key] = target_index
            offset = _self_offset(site, info.params)
            arguments = [str(i) for i in range(len(site.args))] + [k for k, _ in site.keywords]
            for argument in arguments:
                classes = {
                    found_index.qualify(found)
                    for found_index, found in lookup.find(built_at.get(argument, ""), index)
                    if found in found_index.classes
                }
                name = _filled_parameter(argument, info.params, offset)
                seen.setdefault(key, {}).setdefault(name, set()).update(classes or {""})
    for key, params in seen.items():
        known = {name: next(iter(c)) for name, c in params.items() if len(c) == 1 and "" not in c}
        if known:
            targets_of[key].param_classes[key[1]] = known


def _record_built_by_running_call(indexes: list[ModuleIndex], lookup: _Lookup) -> None:
    """The Keras 3 layers and models of each module without a `build` of
    their own or of a project base (`ModuleIndex.built_by_running_call`)."""
    for index in indexes:
        index.built_by_running_call = {
            qualname
            for qualname in index.classes
            if _built_by_running_call(index, qualname, lookup)
        }


def _built_by_running_call(
    index: ModuleIndex, class_qualname: str, lookup: _Lookup, depth: int = 0
) -> bool:
    """Whether Keras 3 builds objects of the class by running its `call` on
    symbolic inputs: a `Layer` or `Model` (not of the legacy `tf_keras`)
    that defines no `build`, nor does any project class it derives from."""
    info = index.classes.get(class_qualname)
    if info is None or depth > 10 or "build" in info.methods:
        return False
    for base in info.bases:
        if keras_leaf(base) in ("Layer", "Model"):
            return not base.startswith("tf_keras.")
        for other_index, other_qualname in lookup.find(base, index):
            if other_qualname in other_index.classes:
                return _built_by_running_call(other_index, other_qualname, lookup, depth + 1)
    return False


def held_object_references(indexes: list[ModuleIndex], facts: ProjectFacts) -> set[str]:
    """Dotted names of the classes whose objects a class with traced methods
    holds (`self.memory = ReplayBuffer(...)`): their modules must be indexed
    to know which of their attributes change between calls."""
    refs: set[str] = set()
    for index in indexes:
        traced = facts.for_path(index.path)
        owners = {
            info.class_name
            for qualname, info in index.functions.items()
            if qualname in traced and info.class_name
        }
        for owner in owners:
            held = index.classes.get(owner)
            if held is not None:
                for callee in held.held_objects.values():
                    refs.add(callee)
                    if "." not in callee:  # maybe from `from module import *`
                        refs.update(f"{module}.{callee}" for module in index.star_imports)
    return refs


def _nested_functions(index: ModuleIndex) -> dict[str, list[str]]:
    """For each dotted prefix of a function's qualname, the functions under it."""
    under: dict[str, list[str]] = {}
    for qualname in index.functions:
        parts = qualname.split(".")
        for depth in range(1, len(parts)):
            under.setdefault(".".join(parts[:depth]), []).append(qualname)
    return under


def tf_function_options(
    index: ModuleIndex, qualname: str, indexes: list[ModuleIndex]
) -> dict[str, str] | None:
    """Keyword arguments of the `@tf.function` (or `tf.function(f, ...)`) that
    wraps `index`'s function `qualname`; None when nothing wraps it."""
    info = index.functions.get(qualname)
    if info is None:
        return None
    for decorator in info.decorators:
        if decorator in TF_FUNCTION_NAMES:
            return dict(info.decorator_keywords.get(decorator, {}))
    full = index.qualify(qualname)
    for other in indexes:
        for site in other.traced_sites:
            if site.reason.startswith(WRAPPED) and (
                full == site.target or full.endswith("." + site.target)
            ):
                return dict(site.keywords)
    return None


def _record_custom_schedules(indexes: list[ModuleIndex], lookup: _Lookup) -> None:
    """Every module learns which learning-rate schedules of the project its
    steps' optimizers may call, and what in them fails traced
    (`ModuleIndex.custom_schedules`): a step that applies gradients runs its
    optimizer's schedule traced, and Keras calls it from its own code, which
    AutoGraph does not convert."""
    found: list[tuple[tuple[str, str, int, str], list[ModuleIndex]]] = []
    for index in indexes:
        for qualname in index.classes:
            info = index.functions.get(f"{qualname}.__call__")
            if info is None or _keras_base(index, qualname, lookup) != "LearningRateSchedule":
                continue
            leaf = qualname.rpartition(".")[2]
            built_in = [
                other
                for other in indexes
                if any(name.rpartition(".")[2] == leaf for name in other.called_names)
            ]
            found.append(((index.path, qualname, info.lineno, _fails_traced(info)), built_in))
    for index in indexes:
        index.custom_schedules = [
            schedule
            for schedule, built_in in found
            if any(_related(index, other) for other in built_in)
        ]


def _fails_traced(info: FunctionInfo) -> str:
    """What in a schedule's `__call__`, called traced without AutoGraph,
    raises: a Python branch on what may be a tensor, or Python's `math` on
    it; "" when neither is seen."""
    if info.branches:
        return "branches in Python on its step"
    host = next((c for c in info.calls if c.startswith("math.")), None)
    return f"calls Python's `{host}` on it" if host else ""


def _related(index: ModuleIndex, other: ModuleIndex) -> bool:
    """The same file, or one imports the other (or the package holding it)."""
    if index.path == other.path:
        return True
    if not (index.module and other.module):
        return False
    return _imports_module(other, index.module) or _imports_module(index, other.module)


def _imports_module(index: ModuleIndex, module: str) -> bool:
    for target in index.imports.values():
        package = target.rpartition(".")[0]
        if target == module or target.startswith(module + "."):
            return True
        if package and (module == package or module.startswith(package + ".")):
            return True
    return False


def _record_steps_of_looped_helpers(
    looped: list[tuple[ModuleIndex, str, bool]], lookup: _Lookup
) -> None:
    """A train step a looped helper calls runs once per iteration too:
    `for batch in data: self._compute_loss(batch)`, where `_compute_loss`
    calls `self.train_step(...)`, a held `TrainStep` object. One call level,
    train steps only (`FunctionInfo.trains`)."""
    for index, function, short in looped:
        for site in index.call_sites:
            if site.caller != function:
                continue
            for target_index, target in _site_targets(index, site, lookup):
                info = target_index.functions.get(target)
                if info is not None and info.trains and target != function:
                    known = target_index.looped_functions.get(target, False)
                    target_index.looped_functions[target] = known or short


def _is_model_call(index: ModuleIndex, qualname: str, lookup: _Lookup) -> bool:
    """Whether `qualname` is the `call` of a Keras layer or model: what
    calling an object built in the step's function runs (`net = Net()`, then
    `net(x, y)` in the tape) is its forward pass, not a loss."""
    info = index.functions[qualname]
    if info.class_name is None:
        return False
    owner = qualname.rpartition(".")[0]
    return _keras_base(index, owner, lookup) in _KERAS_CALLED_BASES - LOSS_BASES


def _parameter_method(
    index: ModuleIndex, info: FunctionInfo, callee: str, lookup: _Lookup
) -> list[tuple[ModuleIndex, str]]:
    """`loss_obj.compute_losses` in a function every call site of which
    passes a `Losses` object as `loss_obj` (`ModuleIndex.param_classes`):
    that class's method."""
    head, _, rest = callee.partition(".")
    if not rest or "." in rest or head not in info.params:
        return []
    built = index.param_classes.get(info.qualname, {}).get(head)
    return lookup.find(f"{built}.{rest}", index) if built is not None else []


def _tape_callee(
    index: ModuleIndex, callee: str, owner: FunctionInfo | None, lookup: _Lookup
) -> list[tuple[ModuleIndex, str]]:
    """The functions a tape's loss call names."""
    if owner is not None:
        # `loss_obj.compute_losses(...)`, `loss_obj` a `Losses` at every call site.
        passed = _parameter_method(index, owner, callee, lookup)
        if passed:
            return passed
    return lookup.find(callee, index)


def _differentiated_functions(
    found: list[tuple[ModuleIndex, str]], lookup: _Lookup
) -> list[tuple[ModuleIndex, str]]:
    """The functions a tape's loss call runs whose results it takes: the
    callee, and the functions whose results that callee returns as its own
    (`calc_loss` doing `return self.ll(...)`), and so on."""
    result = list(found)
    seen = {(id(i), q) for i, q in found}
    position = 0
    while position < len(result) and len(result) < 16:
        index, qualname = result[position]
        position += 1
        info = index.functions.get(qualname)
        for callee in info.returned_calls if info is not None else ():
            for target in lookup.find(callee, index) or lookup.held_method(callee):
                if (id(target[0]), target[1]) not in seen:
                    seen.add((id(target[0]), target[1]))
                    result.append(target)
    return result


def _record_training_facts(
    indexes: list[ModuleIndex], lookup: _Lookup, facts: ProjectFacts
) -> None:
    """A function differentiated inside a `GradientTape` block is a loss
    (`differentiated`); called as `f(a, b)`, its first two parameters are
    (labels, predictions). Traced ones get `is_loss`
    (the loss's own file learns how other files use it), and every file that
    calls a loss learns the options of the `tf.function` wrapping it, wherever
    that loss is defined (a step must carry them when the loss loses them).
    Functions called from a loop (a train step driven per batch) learn so in
    their own module, with whether that loop may feed a short final batch."""
    looped: list[tuple[ModuleIndex, str, bool]] = []
    for index in indexes:
        for callee, short in index.loop_calls.items():
            for target_index, target in lookup.find(callee, index):
                if target in target_index.functions:
                    known = target_index.looped_functions.get(target, False)
                    target_index.looped_functions[target] = known or short
                    looped.append((target_index, target, short))
    _record_steps_of_looped_helpers(looped, lookup)
    for index in indexes:
        for tape_loss in index.tape_losses:
            tape_owner = index.functions.get(tape_loss.function)
            if tape_owner is not None and not (
                tape_owner.applies_gradients or tape_owner.returns_gradients
            ):
                # A gradient no optimizer applies (forces from an energy, a
                # saliency map): what it differentiates is no training loss.
                continue
            direct = _tape_callee(index, tape_loss.callee, tape_owner, lookup)
            for target_index, target in _differentiated_functions(direct, lookup):
                if target not in target_index.functions or _is_model_call(
                    target_index, target, lookup
                ):
                    continue
                per_file = facts.traced.get(target_index.path, {})
                known = per_file.get(target)
                if known is not None:
                    # Called as `f(a, b)`: (labels, predictions), for the callee only.
                    pair = tape_loss.pair and (target_index, target) in direct
                    per_file[target] = replace(
                        known, is_loss=known.is_loss or pair, differentiated=True
                    )
                options = tf_function_options(target_index, target, indexes)
                if options is not None:
                    index.loss_decorator_options[tape_loss.callee] = options
