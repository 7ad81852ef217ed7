"""Which project classes are Keras layers or models and whether what they
compute reads `training`; which classes calls build, attributes hold and
parameters receive; and which layers Keras builds by running `call`.
Recorded on each module index for the rules of every file.
"""

from __future__ import annotations

from collections.abc import Callable

from tfrewrite.facts.index_names import BUILTIN_NAMES
from tfrewrite.facts.index_records import ClassInfo, FunctionInfo, ModuleIndex
from tfrewrite.facts.keras_names import (
    KERAS_MODEL_IGNORING_TRAINING,
    LAMBDA_PART,
    TRAINING_INSENSITIVE_LAYERS,
    builds_keras_model,
    keras_leaf,
    keras_path,
)
from tfrewrite.facts.project_lookup import (
    PLAIN_BASE_MODULES,
    PLAIN_BASES,
    ProjectLookup,
    class_candidates,
    held_class,
    importable,
    is_plain_class,
    keras_base,
)
from tfrewrite.facts.vocabulary import KERAS_MODEL_METHODS, LIST_GROWING_METHODS, weighted_layer

KERAS_CLASS = "keras"


KERAS_CLASS_IGNORING_TRAINING = "keras-ignores-training"


RNN_LAYERS = frozenset({"LSTM", "GRU", "SimpleRNN"})


_TRAINING_BASES = frozenset({"Layer", "Model", "Sequential"})


_INERT_KERAS_BASES = frozenset({"Layer", "Model"})


_KERAS_LAYER_METHODS = frozenset(
    {
        "add_weight", "add_variable", "add_loss", "add_metric", "add_update", "build",
        "get_config", "compute_output_shape", "compute_mask", "get_layer",
        # What `compile` gives a model, which its `train_step` calls.
        "loss", "optimizer", "compiled_loss", "compiled_metrics", "compute_loss",
        # A model's own API, running its own `call` or copying its weights.
        *KERAS_MODEL_METHODS,
        # What Keras' `Dense`/`Conv*` keep of their `activation=` argument
        # (`activations.get`): a function of the output, called without a flag.
        "activation",
    }
)  # fmt: skip


_KERAS_TRAINING_MODULES = ("layers.", "applications.", "models.", "backend.")
# Libraries whose objects a layer may build that are no layers: probability
# distributions and bijectors take no `training`.
_INERT_LIBRARY_MODULES = (
    "tensorflow_probability.distributions.",
    "tensorflow_probability.bijectors.",
    "tensorflow_probability.python.distributions.",
    "tensorflow_probability.python.bijectors.",
)


class KerasClasses:
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

    def __init__(self, lookup: ProjectLookup) -> None:
        self.lookup = lookup
        self.ignoring: dict[tuple[str, str], bool] = {}
        self.plain_functions: dict[tuple[str, str], bool] = {}
        # (module path, callee) -> `kind`: the project's calls name the same
        # classes again and again.
        self.kinds: dict[tuple[str, str], str | None] = {}
        # (module path, callee, depth) -> `model_builder_reads`.
        self.builder_reads: dict[tuple[str, str, int], bool | None] = {}

    def kind(self, index: ModuleIndex, callee: str) -> str | None:
        """`KERAS_CLASS` or `KERAS_CLASS_IGNORING_TRAINING` when every class
        `callee` may name is a Keras layer or model; None otherwise."""
        if callee == KERAS_MODEL_IGNORING_TRAINING:
            return KERAS_CLASS_IGNORING_TRAINING
        key = (index.path, callee)
        if key not in self.kinds:
            self.kinds[key] = self._kind(index, callee)
        return self.kinds[key]

    def _kind(self, index: ModuleIndex, callee: str) -> str | None:
        name, found = class_candidates(index, callee, self.lookup)
        # The classes it can import; all of them when none is (a `src/` layout).
        found = importable(index, name, found) or found
        if not found or any(keras_base(i, q, self.lookup) not in _TRAINING_BASES for i, q in found):
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
            # Keras' `__call__` runs `call`; a class overriding `__call__`
            # runs its own, which takes `training` only by name or `**kwargs`.
            # No `call` of the project's: Keras' own, of the Keras layer it
            # derives from (`class SineDense(Dense)`), which the bases judge.
            known = (
                not called
                or call is not None
                and not call.reads_training
                and (call.qualname.endswith(".call") or not call.takes_any_keyword)
            ) and self._builds_nothing_training_reads(index, qualname)
            self.ignoring[key] = known
        return known

    def _builds_inert(self, index: ModuleIndex, qualname: str) -> bool:
        """Whether an object of a project class, built by another class,
        computes the same with `training=True`: a layer or model that
        ignores it, or no layer at all."""
        if keras_base(index, qualname, self.lookup) in _TRAINING_BASES:
            return self._ignores_training(index, qualname)
        return True

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
            if base in PLAIN_BASES or base.startswith(PLAIN_BASE_MODULES):
                continue
            found = [(i, q) for i, q in self.lookup.find(base, index) if q in i.classes]
            if not found or not all(self._builds_nothing_training_reads(i, q) for i, q in found):
                return False
        own = index.qualify(qualname) + "."
        known = {*info.methods, *info.held_objects, *_KERAS_LAYER_METHODS}
        prefix = qualname + "."
        methods = [f for name, f in index.functions.items() if name.startswith(prefix)]
        unused = _built_never_used(info, methods)
        forward = _forward_methods(qualname, own, methods)
        held = set(info.held_objects.values())
        for function in methods:
            # `block(x)` for `block` in `self.blocks`, a list of objects the
            # class builds: those constructor calls are judged as its calls.
            items = function.loop_attributes or {}
            # A method neither building nor calling the object (`__setstate__`,
            # `_get_params` of older code): what it calls through attributes
            # the class does not set (`self.sess.run(...)`) keeps no layer.
            idle = function.qualname not in forward
            if any(
                self.may_read_training(index, callee, own, known, function)
                for callee in function.calls
                if not info.built_lists.get(items.get(callee, ""), False)
                and callee not in unused
                and not (idle and _through_unset_attribute(callee, own, known, held))
            ):
                return False
        return True

    def builds_nothing(self, index: ModuleIndex, qualname: str) -> bool:
        """Whether a project function (`clamp(x, low, high)`) returns what
        TensorFlow ops or operators compute and calls nothing that may build
        or run a layer reading `training`: TensorFlow ops, builtins, other such
        functions (a cycle counts as building one). A function returning
        anything else (`return BACKBONE`, `return None`) may hand out a
        layer built elsewhere."""
        key = (index.path, qualname)
        known = self.plain_functions.get(key)
        if known is None:
            self.plain_functions[key] = False  # a cycle: not shown to build nothing
            info = index.functions[qualname]
            known = info.returns_computed and not any(
                self.may_read_training(index, callee, "", set()) for callee in info.calls
            )
            self.plain_functions[key] = known
        return known

    def may_read_training(
        self,
        index: ModuleIndex,
        callee: str,
        own: str,
        known: set[str],
        caller: FunctionInfo | None = None,
    ) -> bool:
        """Whether what a method of a class calls (`callee`, as `index`
        resolves it; `own`: the class's qualified name and a dot, how its
        `self.` calls are named, "" for a plain function; `known`: its methods, held layers and
        Keras' layer methods; `caller`: the method, when known) may build or
        run a layer that reads `training`."""
        while callee.endswith("()"):
            callee = callee[:-2]  # `Dropout(0.5)(x)`: the layer built
        if own and callee.startswith(own):
            attribute, _, method = callee[len(own) :].partition(".")
            if method in LIST_GROWING_METHODS:
                # `self.blocks.append(Conv2D(...))` builds what its argument
                # does, a call judged on its own.
                return False
            return attribute not in known
        path = keras_path(callee)
        if path is not None:
            leaf = path.rpartition(".")[2]
            if path.startswith("layers.") and leaf in TRAINING_INSENSITIVE_LAYERS:
                # A recurrent layer reads it when built with `dropout=`.
                return leaf in RNN_LAYERS and (caller is None or caller.builds_rnn_dropout)
            if leaf in ("Sequential", "Model"):
                return False  # a container: the layers it holds are built here too
            return path.startswith(_KERAS_TRAINING_MODULES)
        if callee.startswith(("tensorflow.", *_INERT_LIBRARY_MODULES)):
            return False
        found = self.lookup.find(callee, index)
        if not found:
            # `blocks.append(...)` for `blocks = [Block()]`: a method of an
            # object of a project class, or of a list of them.
            owner = callee.rpartition(".")[0]
            owners = self.lookup.find(owner, index) if owner else []
            if owners and all(q in i.classes for i, q in owners):
                found = owners
        classes = [(i, q) for i, q in found if q in i.classes]
        if classes and len(classes) == len(found):
            # A project class: a layer of its own kind, or a plain object
            # (an initializer, a schedule) that runs no layer.
            return not all(self._builds_inert(i, q) for i, q in classes)
        if found:
            # A project function: a model builder is judged by the layers it
            # builds (`mlp(sizes)` of `Dense` layers); what another builds
            # is not followed.
            reads = model_builder_reads(index, callee, self.lookup, self)
            if reads is not None:
                return reads
            return not all(
                q in i.functions and self.builds_nothing(i, q) for i, q in found
            )
        if "." not in callee:
            passed = index.param_class_types.get(caller.qualname, {}) if caller else {}
            if passed.get(callee):
                # `backbone(...)` for a parameter every call site fills with
                # a project class (`RPN(n, VGG)`): what those classes build.
                found = [(i, q) for c in passed[callee] for i, q in self.lookup.find(c, index)]
                classes = [(i, q) for i, q in found if q in i.classes]
                if classes and len(classes) == len(found):
                    return not all(self._builds_inert(i, q) for i, q in classes)
            return callee not in BUILTIN_NAMES  # a parameter or a name bound at run time
        return any(part[:1].isupper() for part in callee.split("."))


# Attributes through which Keras hands a class every layer it tracks.
_TRACKED_LAYER_LISTS = frozenset({"layers", "submodules", "_layers", "_flatten_layers"})


# The methods Keras runs when a layer is built or called.
_FORWARD_ENTRIES = ("__init__", "build", "call", "__call__")


def _forward_methods(qualname: str, own: str, methods: list[FunctionInfo]) -> set[str]:
    """The methods of the class `qualname` (`own`: how its `self.` calls
    are named) that run when its objects are built or called: Keras'
    entries and the methods they call, followed to a fixed point."""
    by_name = {f.qualname.rpartition(".")[2]: f for f in methods}
    reached = {f"{qualname}.{name}" for name in _FORWARD_ENTRIES if name in by_name}
    pending = list(reached)
    while pending:
        function = by_name[pending.pop().rpartition(".")[2]]
        for callee in function.calls:
            name = callee[len(own) :] if callee.startswith(own) else ""
            if name in by_name and f"{qualname}.{name}" not in reached:
                reached.add(f"{qualname}.{name}")
                pending.append(f"{qualname}.{name}")
    return reached


def _through_unset_attribute(callee: str, own: str, known: set[str], held: set[str]) -> bool:
    """A call through `self.<attr>` (`own`: how the class's `self.` calls
    are named) where the class neither defines nor sets `attr` (`known`),
    and whose result it does not keep (`held`: what built what it keeps)."""
    if not callee.startswith(own) or callee in held:
        return False
    return callee[len(own) :].partition(".")[0] not in known


def _built_never_used(info: ClassInfo, methods: list[FunctionInfo]) -> set[str]:
    """The layer constructors (`tensorflow.keras.layers.BatchNormalization`)
    whose every object the class keeps (`self.norm = BatchNormalization()`)
    no method of it reads: built and never run, such a layer reads no
    `training` flag. None when a method goes over every tracked layer."""
    read = {attr for function in methods for attr in function.self_reads}
    if read & _TRACKED_LAYER_LISTS:
        return set()
    used = {built for attr, built in info.held_objects.items() if attr in read}
    return {built for attr, built in info.held_objects.items() if attr not in read} - used


def _class_kind(
    index: ModuleIndex, callee: str, lookup: ProjectLookup, keras: KerasClasses
) -> str | None:
    """What `called_classes`/`held_classes` say of the class `callee` (as
    `index` names it) when the project defines it: "python" (plain Python),
    a Keras kind (`KerasClasses.kind`), or "framework"."""
    if callee == KERAS_MODEL_IGNORING_TRAINING:
        return KERAS_CLASS_IGNORING_TRAINING
    found = held_class(index, callee, lookup)
    if found is None:
        return None
    if is_plain_class(*found, lookup):
        return "python"
    return keras.kind(index, callee) or "framework"


def record_held_classes(
    indexes: list[ModuleIndex], lookup: ProjectLookup, keras: KerasClasses
) -> None:
    """`self.memory = ReplayBuffer(...)`: whether the class of each held
    object, when the project defines it, is plain Python. A step that calls
    `self.memory.sample(...)` then calls Python code that tracing runs once.
    `self.critic = Critic()` of a Keras model class in any module: a model
    whose `training` matters, or not (`KerasClasses`). `self.model = model`
    in `__init__`: the classes every call site building the class passes
    there (`ProjectLookup.held_attributes`), when they are all of one kind."""
    for index in indexes:
        for class_qualname in index.classes:
            for attr, callees in lookup.held_attributes(index, class_qualname).items():
                kinds = {_class_kind(index, callee, lookup, keras) for callee in callees}
                kind = kinds.pop() if len(kinds) == 1 else None
                if kind is not None:
                    index.held_classes[f"{class_qualname}.{attr}"] = kind


def record_held_models(
    indexes: list[ModuleIndex], lookup: ProjectLookup, keras: KerasClasses
) -> None:
    """`enc = parts.encoder` in a function that builds `parts = Parts()`
    (`FunctionInfo.attribute_aliases`), where `Parts`, in any module, keeps
    a Keras model in `self.encoder`: built by a method or function that
    returns one (`self.make_encoder()`), by Keras itself (`Sequential(...)`),
    or of a Keras layer or model class of the project. `enc(x)` then calls
    a model (`ModuleIndex.held_models`)."""
    for index in indexes:
        references = {
            r for info in index.functions.values() for r in info.attribute_aliases.values()
        }
        for reference in sorted(references):
            owner, _, attr = reference.rpartition(".")
            for target_index, qualname in lookup.find(owner, index):
                info = target_index.classes.get(qualname)
                held = info.held_objects.get(attr) if info is not None else None
                if held is not None and _builds_model(target_index, held, lookup, keras):
                    index.held_models.add(reference)
                    break
        for function, params in index.param_classes.items():
            for param, classes in params.items():
                models = _held_models_of(index, classes, lookup, keras)
                for attr, reads in models.items():
                    found = index.parameter_models.setdefault(function, {})
                    found[f"{param}.{attr}"] = reads
                # The parameter itself a model: `step(self, model, ...)` every
                # call site of which passes `self.pi`, a Keras model.
                kinds = {keras.kind(index, qualified) for qualified in classes}
                if kinds and None not in kinds:
                    found = index.parameter_models.setdefault(function, {})
                    found[param] = kinds != {KERAS_CLASS_IGNORING_TRAINING}
        # The parameter a model a project builder built (`get_actor(...)`,
        # or a part of what `get_model(...)` returns): as its layers read
        # `training`.
        for function, params in index.param_builders.items():
            for param, builders in params.items():
                reads = [model_builder_reads(index, b, lookup, keras) for b in builders]
                if reads and None not in reads:
                    found = index.parameter_models.setdefault(function, {})
                    found.setdefault(param, any(reads))


def _held_models_of(
    index: ModuleIndex, classes: tuple[str, ...], lookup: ProjectLookup, keras: KerasClasses
) -> dict[str, bool]:
    """The attributes in which every one of `classes` (qualified project
    classes) keeps a Keras model -> whether one of those models may compute
    otherwise with `training=True`."""
    per_class: list[dict[str, bool]] = []
    for qualified in classes:
        models: dict[str, bool] = {}
        for target_index, qualname in lookup.find(qualified, index):
            for attr, held in lookup.held_attributes(target_index, qualname).items():
                for callee in held:
                    reads = _held_model_reads(target_index, callee, lookup, keras)
                    if reads is not None:
                        models[attr] = models.get(attr, False) or reads
        per_class.append(models)
    if not per_class:
        return {}
    shared = set.intersection(*(set(m) for m in per_class))
    return {attr: any(m[attr] for m in per_class) for attr in sorted(shared)}


def _held_model_reads(
    index: ModuleIndex, callee: str, lookup: ProjectLookup, keras: KerasClasses, depth: int = 0
) -> bool | None:
    """Whether the model `callee` builds (a project builder, a Keras class of
    the project) may compute otherwise with `training=True`; None when it
    builds no model, or Keras builds it on the spot (`Sequential([...])`:
    what its layers read is not recorded for other functions to ask).
    `depth`: how deep in builders composing builders the question is."""
    reads = model_builder_reads(index, callee, lookup, keras, depth)
    if reads is not None:
        return reads
    kind = keras.kind(index, callee)
    return None if kind is None else kind != KERAS_CLASS_IGNORING_TRAINING


# How deep builders composing other builders are followed.
_MAX_BUILDER_DEPTH = 4


def model_builder_reads(
    index: ModuleIndex, callee: str, lookup: ProjectLookup, keras: KerasClasses, depth: int = 0
) -> bool | None:
    """Whether the model the project function `callee` (as `index` names it)
    builds may compute otherwise with `training=True`; None when it builds
    no model. A builder builds a Keras model in every `return`
    (`returns_model`), or returns what other builders build (`return actor,
    critic` of `get_actor(...)` and `get_critic(...)`, in any module:
    `returned_builder_calls`), whose models it reads as they do."""
    key = (index.path, callee, depth)
    if key not in keras.builder_reads:
        keras.builder_reads[key] = _builder_reads(index, callee, lookup, keras, depth)
    return keras.builder_reads[key]


def _builder_reads(
    index: ModuleIndex, callee: str, lookup: ProjectLookup, keras: KerasClasses, depth: int
) -> bool | None:
    for found, qualname in lookup.find(callee, index):
        info = found.functions.get(qualname)
        if info is None:
            continue
        if info.returns_model:
            return _model_reads_training(found, info, keras)
        if not info.returned_builder_calls or depth >= _MAX_BUILDER_DEPTH:
            continue
        # A Keras model built where a project builder's is returned too; a
        # project builder's model; an object of a project Keras class.
        reads = [
            True
            if builds_keras_model(part)
            else _held_model_reads(found, part, lookup, keras, depth + 1)
            for part in info.returned_builder_calls
        ]
        if all(r is not None for r in reads):
            return any(reads)
    return None


def _model_reads_training(
    index: ModuleIndex, builder: FunctionInfo, keras: KerasClasses, depth: int = 0
) -> bool:
    """Whether the model `builder` builds (or the layers a block function
    builds) may compute otherwise with `training=True`: Keras' own layers
    say so, or a project function or class it calls is neither a Keras
    class known to ignore the flag, a block whose layers ignore it, nor a
    function of TensorFlow ops (`Lambda(ada_in)`)."""
    return builder.model_reads_training or any(
        keras.kind(index, part) != KERAS_CLASS_IGNORING_TRAINING
        and not _inert_function(index, part, keras, depth)
        for part in builder.model_parts
    )


def _inert_function(index: ModuleIndex, part: str, keras: KerasClasses, depth: int) -> bool:
    """Whether every project function `part` may name computes the same with
    `training=True`: a block of layers that ignore it (`g_block(...)`), or a
    function returning what TensorFlow ops compute."""
    wrapped = part.startswith(LAMBDA_PART)
    found = keras.lookup.find(part.removeprefix(LAMBDA_PART), index)
    if not found or depth >= _MAX_BUILDER_DEPTH:
        return False
    for found_index, qualname in found:
        info = found_index.functions.get(qualname)
        if info is None:
            return False
        if wrapped and not info.builds_layers:
            # What a `Lambda` runs on its inputs: only what it calls counts.
            if any(keras.may_read_training(found_index, c, "", set()) for c in info.calls):
                return False
        elif info.builds_layers:
            if _model_reads_training(found_index, info, keras, depth + 1):
                return False
        elif not keras.builds_nothing(found_index, qualname):
            return False
    return True


def _builds_model(
    index: ModuleIndex, callee: str, lookup: ProjectLookup, keras: KerasClasses
) -> bool:
    """Whether calling `callee` (as `index` names it) gives a Keras model
    or layer: Keras' own, a project function every `return` of which
    builds one, or a Keras class of the project."""
    return builds_keras_model(callee) or _held_model_reads(index, callee, lookup, keras) is not None


def record_called_classes(
    indexes: list[ModuleIndex], lookup: ProjectLookup, keras: KerasClasses
) -> None:
    """`Targets(lines)` in a function, or `parse = Targets()` at module level:
    whether each class the module builds, when the project defines it, is
    plain Python. A step that builds or calls such an object runs Python
    code that tracing runs once, and that no rule checks as traced code.
    `net = TextNet(classes=2)` of a Keras model class in any module, in a
    function or at module level: an object that takes `training`, and
    whether it changes what it computes (`KerasClasses`)."""
    for index in indexes:
        constructors = {callee for info in index.functions.values() for callee in info.calls}
        constructors.update(index.module_instances.values())
        constructors.update(c for built in index.module_object_choices.values() for c in built)
        constructors.update(index.module_call_lines)
        for callee in sorted(constructors):
            if not callee or not lookup.defines_class_named(callee.rpartition(".")[2]):
                reads = model_builder_reads(index, callee, lookup, keras) if callee else None
                if reads is not None:
                    index.model_builders[callee] = reads
                    position = _builder_training_position(index, callee, lookup)
                    if position != KERAS_TRAINING_POSITION_UNKNOWN:
                        index.class_training_positions[callee] = position
                continue  # a function or method: tracing follows those itself
            kind = _class_kind(index, callee, lookup, keras)
            if kind is not None:
                index.called_classes[callee] = kind
            if kind == KERAS_CLASS and _trains_by_default(index, callee, lookup):
                index.classes_training_by_default.add(callee)
            if kind in (KERAS_CLASS, KERAS_CLASS_IGNORING_TRAINING):
                position = _training_position(index, callee, lookup)
                if position != KERAS_TRAINING_POSITION_UNKNOWN:
                    index.class_training_positions[callee] = position


def _trains_by_default(index: ModuleIndex, callee: str, lookup: ProjectLookup) -> bool:
    """Whether every class `callee` may name runs a `call` (or `__call__`)
    of the project that defaults `training` to True."""
    _, found = class_candidates(index, callee, lookup)
    if not found:
        return False
    for class_index, qualname in found:
        called = lookup.call_method(class_index, qualname)
        if len(called) != 1:
            return False
        method = called[0][0].functions.get(called[0][1])
        if method is None or not method.trains_by_default:
            return False
    return True


# `_training_position` of a class whose `call` says nothing either way.
KERAS_TRAINING_POSITION_UNKNOWN = -1


def _training_position(index: ModuleIndex, callee: str, lookup: ProjectLookup) -> int | None:
    """Where `training` stands among the positional arguments of a call of
    an object of the Keras class `callee` (`self` left out): its place in
    the `call` the class or its project bases define; None when no
    positional argument binds it (not a parameter, or keyword-only);
    `KERAS_TRAINING_POSITION_UNKNOWN` when `call` takes `*args` without
    naming it, or is not found."""
    found = held_class(index, callee, lookup)
    called = lookup.call_method(*found) if found is not None else []
    if len(called) != 1:
        return KERAS_TRAINING_POSITION_UNKNOWN
    target_index, qualname = called[0]
    call = target_index.functions.get(qualname)
    return call_training_position(call) if call is not None else KERAS_TRAINING_POSITION_UNKNOWN


def _builder_training_position(
    index: ModuleIndex, builder: str, lookup: ProjectLookup
) -> int | None:
    """Where `training` stands in a call of the models a project builder
    returns when each is an object of a Keras class of the project
    (`return generator, discriminators, n` after `generator =
    Generator(cfg)`) and they agree; `KERAS_TRAINING_POSITION_UNKNOWN`
    otherwise."""
    for found, qualname in lookup.find(builder, index):
        info = found.functions.get(qualname)
        parts = info.returned_builder_calls if info is not None else ()
        if not parts or not all(held_class(found, part, lookup) for part in parts):
            continue
        positions = {_training_position(found, part, lookup) for part in parts}
        if len(positions) == 1:
            return positions.pop()
    return KERAS_TRAINING_POSITION_UNKNOWN


def call_training_position(call: FunctionInfo) -> int | None:
    """Where a layer's or model's `call` takes `training` among the
    positional arguments of a call of its objects (`self` left out); None
    when no positional argument binds it (not a parameter, or keyword-only
    after `*args`); `KERAS_TRAINING_POSITION_UNKNOWN` when `call` takes
    `*args` without naming it (Keras' own place may then apply)."""
    positional = call.params[1 : call.positional_count]
    if "training" in positional:
        return positional.index("training")
    if call.max_positional != -1 or "training" in call.params:
        return None  # no `*args`, or `training` keyword-only after it
    return KERAS_TRAINING_POSITION_UNKNOWN


def record_built_by_running_call(indexes: list[ModuleIndex], lookup: ProjectLookup) -> None:
    """The Keras 3 layers and models of each module without a `build` of
    their own or of a project base (`ModuleIndex.built_by_running_call`)."""
    for index in indexes:
        index.built_by_running_call = {
            qualname
            for qualname in index.classes
            if _built_by_running_call(index, qualname, lookup)
        }


def _built_by_running_call(
    index: ModuleIndex, class_qualname: str, lookup: ProjectLookup, depth: int = 0
) -> bool:
    """Whether Keras 3 builds objects of the class by running its `call` on
    symbolic inputs: a `Layer` or `Model` (not of the legacy `tf_keras`)
    that defines no `build`, nor does any project class it derives from,
    and whose `__init__` does not run `call` itself (`self.call(dummy)`:
    its sublayers are built by that run, whose weights train, measured on
    Keras 3.15)."""
    info = index.classes.get(class_qualname)
    if info is None or depth > 10 or "build" in info.methods:
        return False
    init = index.functions.get(f"{class_qualname}.__init__")
    if init is not None and index.qualify(f"{class_qualname}.call") in init.calls:
        return False
    for base in info.bases:
        if keras_leaf(base) in ("Layer", "Model"):
            return not base.startswith("tf_keras.")
        for other_index, other_qualname in lookup.find(base, index):
            if other_qualname in other_index.classes:
                return _built_by_running_call(other_index, other_qualname, lookup, depth + 1)
    return False


def record_weighted_classes(indexes: list[ModuleIndex], lookup: ProjectLookup) -> None:
    """The project's layer classes whose objects create weights
    (`ModuleIndex.weighted_classes`), each worked out once: a class holding
    an object of another project class owns weights when that class does."""
    known: dict[tuple[str, str], bool] = {}

    def owns_weights(index: ModuleIndex, qualname: str) -> bool:
        key = (index.path, qualname)
        if key not in known:
            known[key] = False  # a cycle of held classes adds no weights
            known[key] = _owns_weights(index, qualname, lookup, owns_weights)
        return known[key]

    found = frozenset(
        index.qualify(qualname)
        for index in indexes
        for qualname in index.classes
        if owns_weights(index, qualname)
    )
    for index in indexes:
        index.weighted_classes = found


def _owns_weights(
    index: ModuleIndex,
    class_qualname: str,
    lookup: ProjectLookup,
    owns_weights: Callable[[ModuleIndex, str], bool],
) -> bool:
    """Whether objects of the class create weights: `self.add_weight`, or a
    base or a held sublayer that does (a Keras `Sequential` is taken to hold
    some; a project class as `owns_weights` judges it)."""
    info = index.classes[class_qualname]
    methods = (index.functions.get(f"{class_qualname}.{m}") for m in info.methods)
    if any(m is not None and any(c.endswith("add_weight") for c in m.calls) for m in methods):
        return True
    for name in [*info.bases, *info.held_objects.values()]:
        if weighted_layer(name) is not None or keras_leaf(name) == "Sequential":
            return True
        found = lookup.find(name, index)
        if any(owns_weights(other, q) for other, q in found if q in other.classes):
            return True
    return False
