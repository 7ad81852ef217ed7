"""Training facts across modules: which functions a `GradientTape`
differentiates (the losses), the options of the `tf.function` that wraps
them, helpers a loop runs per batch, custom learning-rate schedules, and the
module objects traced code holds.
"""

from __future__ import annotations

from dataclasses import replace

from tfrewrite.facts.call_evidence import HELD_ARGUMENT
from tfrewrite.facts.call_site_flow import site_targets
from tfrewrite.facts.index_calls import TF_FUNCTION_NAMES
from tfrewrite.facts.index_records import FunctionInfo, ModuleIndex
from tfrewrite.facts.project_lookup import ProjectLookup, keras_base
from tfrewrite.facts.traced_function import KERAS_CALLED_BASES, LOSS_BASES, WRAPPED, ProjectFacts


def held_object_references(indexes: list[ModuleIndex], facts: ProjectFacts) -> set[str]:
    """Dotted names of the classes whose objects a class with traced methods
    holds (`self.memory = ReplayBuffer(...)`): their modules must be indexed
    to know which of their attributes change between calls."""
    refs: set[str] = set()
    # Classes with traced methods that keep constructor arguments
    # (`self.noise = noise`): what their builders pass there is held too.
    holders: set[str] = set()
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
                if held.held_parameters or held.absorbs_keywords:
                    holders.add(owner.rpartition(".")[2])
                for callee in held.held_objects.values():
                    refs.add(callee)
                    if "." not in callee:  # maybe from `from module import *`
                        refs.update(f"{module}.{callee}" for module in index.star_imports)
    if holders:
        for index in indexes:
            for site in index.call_sites:
                if site.objects and site.callee.rpartition(".")[2] in holders:
                    # An object the caller's class keeps (`self.noise`) names
                    # no module: its constructor is that class's held object.
                    refs.update(b for _, b in site.objects if not b.startswith(HELD_ARGUMENT))
    return refs


def nested_functions(index: ModuleIndex) -> dict[str, list[str]]:
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


def record_custom_schedules(indexes: list[ModuleIndex], lookup: ProjectLookup) -> None:
    """Every module learns which learning-rate schedules of the project its
    steps' optimizers may call, and what in them fails traced
    (`ModuleIndex.custom_schedules`): a step that applies gradients runs its
    optimizer's schedule traced, and Keras calls it from its own code, which
    AutoGraph does not convert."""
    found: list[tuple[tuple[str, str, int, str], list[ModuleIndex]]] = []
    for index in indexes:
        for qualname in index.classes:
            info = index.functions.get(f"{qualname}.__call__")
            if info is None or keras_base(index, qualname, lookup) != "LearningRateSchedule":
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


def loop_call_targets(
    index: ModuleIndex, callee: str, lookup: ProjectLookup
) -> list[tuple[ModuleIndex, str]]:
    """What a call in a Python loop runs: the definitions its name finds,
    or, for an object a class holds (`self.train_step(x, y)` after
    `self.train_step = TrainStep(...)`), the `__call__` of that object."""
    return lookup.find(callee, index) or lookup.held_instance(callee)


def _record_steps_of_looped_helpers(
    looped: list[tuple[ModuleIndex, str, bool]], lookup: ProjectLookup
) -> None:
    """A train step a looped helper calls runs once per iteration too:
    `for batch in data: self._compute_loss(batch)`, where `_compute_loss`
    calls `self.train_step(...)`, a held `TrainStep` object. One call level,
    train steps only (`FunctionInfo.trains`)."""
    for index, function, short in looped:
        for site in index.call_sites:
            if site.caller != function:
                continue
            for target_index, target in site_targets(index, site, lookup):
                info = target_index.functions.get(target)
                if info is not None and info.trains and target != function:
                    known = target_index.looped_functions.get(target, False)
                    target_index.looped_functions[target] = known or short


def _no_loss_of_the_model(index: ModuleIndex, qualname: str, lookup: ProjectLookup) -> bool:
    """Whether `qualname`, a method of a Keras layer or model a tape block
    calls, computes no loss: its `call` (what calling an object built in
    the step's function runs, `net = Net()` then `net(x, y)`, is its
    forward pass), or another method that reads nothing of the object (a
    schedule of its argument, `self.step_fn(delta)`, whose result weighs a
    loss term and holds no variable). A method that computes from the
    model (`self.loss_glb(x, u)` calling `self.dnn`) is a loss."""
    info = index.functions[qualname]
    if info.class_name is None:
        return False
    owner, _, method = qualname.rpartition(".")
    if keras_base(index, owner, lookup) not in KERAS_CALLED_BASES - LOSS_BASES:
        return False
    return method in ("call", "__call__") or not info.self_reads


def parameter_method(
    index: ModuleIndex, info: FunctionInfo, callee: str, lookup: ProjectLookup
) -> list[tuple[ModuleIndex, str]]:
    """`loss_obj.compute_losses` in a function every call site of which
    passes a `Losses` object as `loss_obj` (`ModuleIndex.param_classes`):
    that class's method (each class's, when sites pass objects of several)."""
    head, _, rest = callee.partition(".")
    if not rest or "." in rest or head not in info.params:
        return []
    built = index.param_classes.get(info.qualname, {}).get(head, ())
    return [found for name in built for found in lookup.find(f"{name}.{rest}", index)]


def _tape_callee(
    index: ModuleIndex, callee: str, owner: FunctionInfo | None, lookup: ProjectLookup
) -> list[tuple[ModuleIndex, str]]:
    """The functions a tape's loss call names: for `self.loss_fn(...)`, the
    method the class defines or inherits, and its overrides in the project's
    subclasses (an object of one runs the inherited step)."""
    if owner is not None:
        # `loss_obj.compute_losses(...)`, `loss_obj` a `Losses` at every call site.
        passed = parameter_method(index, owner, callee, lookup)
        if passed:
            return passed
        # A step nested in a method (`fit` defining `train_step`) calls
        # through the method's `self`.
        owner = index.method_around(owner.qualname) or owner
    return lookup.self_call_targets(index, owner, callee)


def _differentiated_functions(
    found: list[tuple[ModuleIndex, str]], lookup: ProjectLookup
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


def record_training_facts(
    indexes: list[ModuleIndex], lookup: ProjectLookup, facts: ProjectFacts
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
            for target_index, target in loop_call_targets(index, callee, lookup):
                if target in target_index.functions:
                    known = target_index.looped_functions.get(target, False)
                    target_index.looped_functions[target] = known or short
                    looped.append((target_index, target, short))
    _record_steps_of_looped_helpers(looped, lookup)
    for index in indexes:
        for tape_loss in index.tape_losses:
            tape_owner = index.functions.get(tape_loss.function)
            if tape_owner is not None and not tape_owner.trains:
                # A gradient no optimizer applies (forces from an energy, a
                # saliency map): what it differentiates is no training loss.
                continue
            direct = _tape_callee(index, tape_loss.callee, tape_owner, lookup)
            for target_index, target in _differentiated_functions(direct, lookup):
                if target not in target_index.functions or _no_loss_of_the_model(
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
