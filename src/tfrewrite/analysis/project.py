"""Project facts: which functions run traced, across every indexed file.

A function runs traced when it is decorated with `@tf.function` (any spelling),
wrapped by `tf.function(f)`, given to `compile(loss=..., metrics=...)`, is the
`call` of a Keras `Loss`/`Layer`/`Model`, a `Model.train_step`/`test_step`/
`predict_step`, a `Metric.update_state`/`result`, or is called from a function
that runs traced. Functions nested inside a traced function run traced too.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from tfrewrite.analysis.index import TF_FUNCTION_NAMES, ModuleIndex

# Keras base classes (normalised to `keras.<leaf>`) and the methods Keras traces.
KERAS_TRACED_METHODS: dict[str, tuple[str, ...]] = {
    "Loss": ("call", "__call__"),
    "Layer": ("call",),
    "Model": ("call", "train_step", "test_step", "predict_step"),
    "Sequential": ("call", "train_step", "test_step", "predict_step"),
    "Metric": ("update_state", "result"),
}
LOSS_BASES = frozenset({"Loss"})


def keras_leaf(name: str) -> str | None:
    """`tensorflow.keras.losses.Loss` -> `Loss`; None if not a Keras name."""
    for prefix in ("tensorflow.keras.", "tf_keras.", "keras."):
        if name.startswith(prefix):
            return name.rsplit(".", 1)[-1]
    return None


@dataclass(frozen=True)
class TracedFunction:
    qualname: str  # local to its module
    reason: str
    is_loss: bool = False  # called with (y_true, y_pred): its first two params are tensors


@dataclass
class ProjectFacts:
    """What pass 2 needs to know about one module, derived from all modules."""

    traced: dict[str, dict[str, TracedFunction]] = field(default_factory=dict)  # path -> qualname

    def for_path(self, path: str) -> dict[str, TracedFunction]:
        return self.traced.get(path, {})


def _suffixes(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[i:]) for i in range(len(parts))]


class _Lookup:
    """Resolve dotted references to (module index, local qualname), tolerating
    module names that differ by a leading package (`examples.losses` vs `losses`)."""

    def __init__(self, indexes: list[ModuleIndex]) -> None:
        self.by_name: dict[str, list[tuple[ModuleIndex, str]]] = {}
        for index in indexes:
            for qualname in [*index.functions, *index.classes]:
                for key in _suffixes(index.qualify(qualname)):
                    if "." in key or not index.module:
                        self.by_name.setdefault(key, []).append((index, qualname))

    def find(self, name: str) -> list[tuple[ModuleIndex, str]]:
        return self.by_name.get(name, [])


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
        leaf = keras_leaf(base)
        if leaf in KERAS_TRACED_METHODS:
            return leaf
        for other_index, other_qualname in lookup.find(base):
            if other_qualname in other_index.classes:
                found = _keras_base(other_index, other_qualname, lookup, depth + 1)
                if found:
                    return found
    return None


def compute_facts(indexes: list[ModuleIndex]) -> ProjectFacts:
    facts = ProjectFacts()
    lookup = _Lookup(indexes)
    queue: deque[tuple[ModuleIndex, str]] = deque()

    def mark(index: ModuleIndex, qualname: str, reason: str, is_loss: bool = False) -> None:
        if qualname not in index.functions:
            return
        per_file = facts.traced.setdefault(index.path, {})
        known = per_file.get(qualname)
        if known is None:
            per_file[qualname] = TracedFunction(qualname, reason, is_loss)
            queue.append((index, qualname))
        elif is_loss and not known.is_loss:
            per_file[qualname] = TracedFunction(qualname, known.reason, True)

    def mark_class(index: ModuleIndex, qualname: str, reason: str) -> None:
        base = _keras_base(index, qualname, lookup)
        if base is None:
            return
        for method in KERAS_TRACED_METHODS[base]:
            method_qualname = f"{qualname}.{method}"
            if method_qualname in index.functions:
                mark(index, method_qualname, reason or f"{base}.{method}", base in LOSS_BASES)

    for index in indexes:
        for qualname, info in index.functions.items():
            if any(d in TF_FUNCTION_NAMES for d in info.decorators):
                mark(index, qualname, "decorated with @tf.function")
        for qualname in index.classes:
            mark_class(index, qualname, "")
        for site in index.traced_sites:
            where = f"{index.path}:{site.lineno}"
            is_loss = site.reason.startswith("given to compile(loss")
            for target_index, target in lookup.find(site.target):
                if target in target_index.classes:
                    mark_class(target_index, target, f"{site.reason} at {where}")
                else:
                    mark(target_index, target, f"{site.reason} at {where}", is_loss)

    # Functions nested in each qualname prefix, built once per file: scanning
    # every function for each traced one made large files quadratic.
    nested_in: dict[int, dict[str, list[str]]] = {}
    while queue:
        index, qualname = queue.popleft()
        info = index.functions[qualname]
        caller = info.qualname
        if id(index) not in nested_in:
            nested_in[id(index)] = _nested_functions(index)
        for nested in nested_in[id(index)].get(qualname, ()):
            mark(index, nested, f"nested in traced `{caller}`")
        for callee in info.calls:
            for target_index, target in lookup.find(callee):
                if target in target_index.functions:
                    mark(target_index, target, f"called from traced `{caller}`")
    _record_training_facts(indexes, lookup, facts)
    return facts


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
            if site.reason.startswith("wrapped in tf.function") and (
                full == site.target or full.endswith("." + site.target)
            ):
                return dict(site.keywords)
    return None


def _record_training_facts(
    indexes: list[ModuleIndex], lookup: _Lookup, facts: ProjectFacts
) -> None:
    """A function differentiated inside a `GradientTape` block is a loss: its
    first two parameters are (labels, predictions). Traced ones get `is_loss`
    (the loss's own file learns how other files use it), and every file that
    calls a loss learns the options of the `tf.function` wrapping it, wherever
    that loss is defined (a step must carry them when the loss loses them).
    Functions called from a loop (a train step driven per batch) learn so in
    their own module, with whether that loop may feed a short final batch."""
    for index in indexes:
        for callee, short in index.loop_calls.items():
            for target_index, target in lookup.find(callee):
                if target in target_index.functions:
                    known = target_index.looped_functions.get(target, False)
                    target_index.looped_functions[target] = known or short
        for tape_loss in index.tape_losses:
            for target_index, target in lookup.find(tape_loss.callee):
                if target not in target_index.functions:
                    continue
                per_file = facts.traced.get(target_index.path, {})
                known = per_file.get(target)
                if known is not None and not known.is_loss:
                    per_file[target] = TracedFunction(target, known.reason, True)
                options = tf_function_options(target_index, target, indexes)
                if options is not None:
                    index.loss_decorator_options[tape_loss.callee] = options
