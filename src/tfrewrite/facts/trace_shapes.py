"""Whether every trace of a function sees whole shapes.

A `tf.function` called with eager values traces each new input shape with
that shape: a short last batch makes a second trace, not an unknown
dimension (measured: five batch sizes, five traces, none relaxed). A
dimension is unknown (`None` in `x.shape`) only where something traces with
a shape it chooses: Keras (`fit`, `predict`, `build`, `save` run `call` over
a batch dimension left open), an `input_signature` or `reduce_retracing`,
a dataset iterated inside the trace, `get_concrete_function` given a
`TensorSpec`.

So these see whole shapes in every trace, and a static shape there is the
shape, not a hazard (TFR107):

- a function traced by its own plain `tf.function` (no signature, nothing
  relaxed) that a Python loop of the project calls, and that iterates no
  data inside;
- a train step traced only once a fix decorates it (TFR302), when every
  loop calling it feeds batches of one size: the decorator the fix writes
  then takes no `reduce_retracing` (with a short last batch it may, and
  the step's callees would see the batch dimension as `None`);
- the `call` of a model such code runs, when no module handing a model to
  Keras can reach it: a module calling one of Keras' tracing methods on an
  object not known to be of a plain Python class (`vocab.fit(lines)` is no
  Keras loop), or building a functional model (`keras.Input`), and every
  project module it imports, whose layers its models may hold (exporting a
  model, `tf.saved_model.save`, counts as handing it to Keras). A model
  nothing in the project runs (a library's) is taken to be run by Keras;
- what such code calls.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from tfrewrite.facts.index_records import FunctionInfo, ModuleIndex
from tfrewrite.facts.keras_names import keras_leaf, keras_path
from tfrewrite.facts.project_lookup import ProjectLookup, is_plain_class, named_classes
from tfrewrite.facts.traced_function import (
    KERAS_METHOD_CONTEXTS,
    OWN_DECORATOR,
    PENDING_CALLER_CONTEXT,
    PENDING_NESTED_CONTEXT,
    PENDING_STEP_CONTEXTS,
    PENDING_STEP_REASON,
    TRACED_CALLER_PREFIXES,
    WRAPPED,
    TracedFunction,
    context_function,
)

# Keras names whose call builds a functional model on symbolic inputs,
# whose batch dimension is unknown.
_SYMBOLIC_INPUTS = frozenset({"Input", "InputLayer"})

# Functions exporting a model, which trace its `call` with the input
# signature they save (`tf.saved_model.save`, `keras.models.save_model`).
_EXPORTING_FUNCTIONS = ("saved_model.save", "save_model")

# Libraries whose classes are (or build) Keras models.
_KERAS_ROOTS = frozenset({"tensorflow", "keras", "tf_keras", "tensorflow_hub"})

# Contexts naming the function the code is traced with, as a traced caller
# does: it sees whole shapes when that function does.
_NAMING_CONTEXTS = (*TRACED_CALLER_PREFIXES, PENDING_CALLER_CONTEXT, PENDING_NESTED_CONTEXT)


class _Shapes:
    """The verdicts of one project, worked out once per function."""

    def __init__(
        self,
        indexes: list[ModuleIndex],
        traced: dict[str, dict[str, TracedFunction]],
        keras_modules: set[str],
    ) -> None:
        self.by_path = {index.path: index for index in indexes}
        self.traced = traced
        self.keras_modules = keras_modules
        # `f.get_concrete_function(tf.TensorSpec([None, 3]))` traces with
        # the shapes it is given.
        self.signature_modules = {
            index.path
            for index in indexes
            if any(name.endswith("get_concrete_function") for name in index.called_names)
        }
        self.settled: dict[tuple[str, str], bool] = {}

    def concrete(self, path: str, qualname: str, seen: frozenset[tuple[str, str]]) -> bool:
        key = (path, qualname)
        if key in self.settled:
            return self.settled[key]
        if key in seen:
            return True  # a cycle adds no context of its own
        function = self.traced.get(path, {}).get(qualname)
        if function is None:
            return False
        inner = seen | {key}
        verdict = all(
            self._context(context, path, function, lambda q: self.named(path, q, inner))
            for context in function.contexts
        )
        self.settled[key] = verdict
        return verdict

    def named(self, path: str, qualname: str, seen: frozenset[tuple[str, str]]) -> bool:
        """The traced function a context names sees whole shapes: the one of
        the same module, else every one of that name in the project."""
        if qualname in self.traced.get(path, {}):
            return self.concrete(path, qualname, seen)
        found = [p for p, functions in self.traced.items() if qualname in functions]
        return bool(found) and all(self.concrete(p, qualname, seen) for p in found)

    def _context(
        self,
        context: str,
        path: str,
        function: TracedFunction,
        caller_concrete: Callable[[str], bool],
    ) -> bool:
        """Whether tracing `function` in this context sees whole shapes."""
        index = self.by_path[path]
        qualname = function.qualname
        if context == OWN_DECORATOR or context.startswith(WRAPPED):
            return (
                not function.relaxed_shapes
                and path not in self.signature_modules
                and _called_from_loops(index, qualname)
                and not _iterates_data(index.functions.get(qualname))
            )
        if context.startswith(PENDING_STEP_REASON):
            return index.looped_functions.get(qualname) is False
        step = context_function(context, PENDING_STEP_CONTEXTS[:1])
        if step is not None:
            return self._fed_full_batches(step)
        if context.partition(" ")[0] in KERAS_METHOD_CONTEXTS:
            # Keras runs the `call` of a model nothing in the project runs
            # otherwise (a layer library's), as `fit` or a functional model does.
            return path not in self.keras_modules and not all(
                c.partition(" ")[0] in KERAS_METHOD_CONTEXTS for c in function.contexts
            )
        caller = context_function(context, _NAMING_CONTEXTS)
        return caller is not None and caller_concrete(caller)

    def _fed_full_batches(self, step: str) -> bool:
        """Whether every loop calling the train step `step` (a qualname of
        some module) feeds batches of one size: decorating it, TFR302 then
        writes no `reduce_retracing`."""
        verdicts = [
            index.looped_functions[step]
            for index in self.by_path.values()
            if step in index.looped_functions
        ]
        return bool(verdicts) and not any(verdicts)


def concrete_shape_functions(
    indexes: list[ModuleIndex],
    traced: dict[str, dict[str, TracedFunction]],
    keras_modules: set[str],
) -> set[tuple[str, str]]:
    """(path, qualname) of the traced functions every trace of which sees
    its inputs' whole shapes; `keras_modules`: `modules_keras_traces`."""
    shapes = _Shapes(indexes, traced, keras_modules)
    return {
        (path, qualname)
        for path, functions in traced.items()
        for qualname in functions
        if shapes.concrete(path, qualname, frozenset())
    }


def _called_from_loops(index: ModuleIndex, qualname: str) -> bool:
    """Whether a Python loop of the project calls the function (a train
    step the epoch loop calls): what it is given there are the eager values
    of each iteration. A function nothing in the project calls may be called
    from code that sees unknown dimensions."""
    return (
        qualname in index.looped_functions or qualname.rpartition(".")[2] in index.loop_method_names
    )


def _iterates_data(info: FunctionInfo | None) -> bool:
    """Whether a function loops over data in its own body, or takes the
    next element of an iterator: traced, a dataset's elements have the
    shapes its element spec gives, the batch dimension open unless every
    batch drops its remainder."""
    return info is None or bool(info.calls_in_data_loops) or "next" in info.calls


def modules_keras_traces(
    indexes: list[ModuleIndex], lookup: ProjectLookup, loops_only: bool = False
) -> set[str]:
    """Paths of the modules whose models Keras may trace with shapes it
    chooses: those handing a model to Keras, and what they import. With
    `loops_only`, those whose models Keras' own loops may run (`fit`,
    `evaluate`, `predict`): a symbolic `Input` or an export traces a
    model's `call`, never its `train_step`."""
    by_module = {index.module: index for index in indexes if index.module}
    todo = [index for index in indexes if _hands_models_to_keras(index, lookup, loops_only)]
    reached: set[str] = set()
    while todo:
        index = todo.pop()
        if index.path in reached:
            continue
        reached.add(index.path)
        todo.extend(_imported_modules(index, by_module))
    return reached


def _hands_models_to_keras(index: ModuleIndex, lookup: ProjectLookup, loops_only: bool) -> bool:
    if not loops_only and any(
        keras_leaf(name) in _SYMBOLIC_INPUTS or name.endswith(_EXPORTING_FUNCTIONS)
        for name in index.called_names
    ):
        return True
    for built in index.keras_runs:
        if not built:
            return True  # an object of unknown class
        classes = named_classes(index, built, lookup)
        if classes:
            if any(not is_plain_class(other, qualname, lookup) for other, qualname in classes):
                return True
        elif built.startswith("tensorflow.") and keras_path(built) is None:
            continue  # a TensorFlow object that is no model (`tf.train.Checkpoint`)
        elif built.partition(".")[0] in _KERAS_ROOTS or not _names_a_class(built):
            # A Keras model, or what a factory returned (`build_model()`).
            return True
        # Else a class the project defines in a module that imports no
        # TensorFlow (`Vocab`, never indexed), or another library's
        # (`LogisticRegression`): its `fit` is no Keras loop.
    return False


def _names_a_class(dotted: str) -> bool:
    """`utils.Vocab`: a CapWords last name, as classes are named."""
    return dotted.rpartition(".")[2][:1].isupper()


def _imported_modules(
    index: ModuleIndex, by_module: dict[str, ModuleIndex]
) -> Iterable[ModuleIndex]:
    """The project modules `index` imports from (`from pkg.layers import
    Attention`, `import pkg.layers`)."""
    for qualified in index.imports.values():
        parts = qualified.split(".")
        for end in range(len(parts), 0, -1):
            found = by_module.get(".".join(parts[:end]))
            if found is not None:
                yield found
                break
