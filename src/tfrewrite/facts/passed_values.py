"""What the call sites of a project function pass its parameters: objects of
project classes, project classes, project functions.

    agent = Agent(noise=OUNoise(2))            # an object of `OUNoise`
    evaluate(model, test_ds)                   # batches, the last one short
    spectral_norm(self.w)                      # a weight made at set-up: a whole shape
    train_and_eval(cfg, model_cls=Model)       # the class `Model`
    trainer = Trainer(model, loss_fn=dice)     # the function `dice`
    BinaryClassifier(LSTMWrapper())            # ... which hands its `model`
        self.trainer = Trainer(model)          # on to `Trainer`

A parameter is known only when every call site fills it so; a site passing
anything else there leaves it unknown. A site that hands on a parameter of
its own function passes what that function receives there (followed to a
fixed point). The project facts ask these to resolve what a method calls
through `self.<attr>` kept from `__init__` (`ProjectLookup.held_attributes`,
`held_functions`).
"""

from __future__ import annotations

from collections.abc import Callable

from tfrewrite.facts.call_evidence import HELD_ARGUMENT, PART_OPEN
from tfrewrite.facts.call_site_flow import filled_parameter, self_offset, site_targets
from tfrewrite.facts.index_records import CallSite, ModuleIndex
from tfrewrite.facts.keras_names import KERAS_MODEL_IGNORING_TRAINING
from tfrewrite.facts.project_lookup import ProjectLookup

_Sites = list[tuple[ModuleIndex, CallSite, list[tuple[ModuleIndex, str]]]]
_Filled = dict[tuple[str, str], dict[str, tuple[str, ...]]]
# How `_given` marks an argument that hands on a parameter of the caller.
_FORWARDED = "\0forwarded:"
# How `_short_batches` marks an argument whose dataset went through
# `ds.apply(f)` of a function the caller's module does not define.
_APPLIED = "\0applied:"
# Rounds of handing on followed (a chain of constructors each passing its
# `model` to the next is rarely longer).
_FORWARDING_ROUNDS = 4


def record_passed_values(indexes: list[ModuleIndex], lookup: ProjectLookup) -> None:
    """`ModuleIndex.param_classes` (objects of project classes, built by a
    call of the class, by a call of a parameter that every site fills with
    a class: `model = model_cls(...)`, or handed on from the caller's own
    parameter) and `ModuleIndex.param_functions` (project functions named
    at every site)."""
    if not any(
        site.objects
        or site.named
        or site.forwarded
        or site.short_batches
        or site.applied_batchers
        or site.whole_shapes
        or site.grown_lists
        for index in indexes
        for site in index.call_sites
    ):
        return
    sites = [
        (index, site, targets)
        for index in indexes
        for site in index.call_sites
        if (targets := site_targets(index, site, lookup))
    ]
    index_of = {index.path: index for index in indexes}

    def classes_named(index: ModuleIndex, site: CallSite, name: str) -> set[str]:
        return _project_definitions(index, name, lookup, classes=True)

    def functions_named(index: ModuleIndex, site: CallSite, name: str) -> set[str]:
        return _project_definitions(index, name, lookup, classes=False)

    passed_classes = _filled_parameters(sites, _named, classes_named)
    for (path, target), params in passed_classes.items():
        index_of[path].param_class_types[target] = params
    for (path, target), params in _filled_parameters(sites, _named, functions_named).items():
        index_of[path].param_functions[target] = params

    known: _Filled = {}

    def built(index: ModuleIndex, site: CallSite, built_by: str) -> set[str]:
        if built_by.startswith(_FORWARDED):
            # `Trainer(model)` in `BinaryClassifier.__init__(self, model)`:
            # what its callers pass there.
            owner, _, param = built_by[len(_FORWARDED) :].partition(":")
            return set(known.get((index.path, owner), {}).get(param, ()))
        if built_by.startswith(HELD_ARGUMENT):
            # `self.train_step(self.pi, ...)`: what the caller's class keeps there.
            caller = index.functions.get(site.caller)
            owner = caller.class_name if caller is not None else None
            held = (
                lookup.held_objects(index, owner, built_by[len(HELD_ARGUMENT) :]) if owner else ()
            )
            return {c for name in held for c in classes_named(index, site, name)}
        if built_by == KERAS_MODEL_IGNORING_TRAINING:
            return {built_by}  # judged whole by pass 1: it stands for its class
        found = classes_named(index, site, built_by)
        if found or site.caller not in index.functions:
            return found
        # `model = model_cls(...)`: a class the caller's parameter receives.
        return set(passed_classes.get((index.path, site.caller), {}).get(built_by, ()))

    def marked(index: ModuleIndex, site: CallSite, given: str) -> set[str]:
        return {given}

    def short(index: ModuleIndex, site: CallSite, given: str) -> set[str]:
        if not given.startswith(_APPLIED):
            return {given}
        # `ds.apply(input_pipeline.prepare)`: short when `prepare` batches
        # keeping the remainder.
        batcher = given[len(_APPLIED) :]
        for found_index, qualname in lookup.find(batcher, index):
            info = found_index.functions.get(qualname)
            if info is not None and info.batch_sizes == "any":
                return {"short"}
        return set()

    for (path, target), params in _filled_parameters(sites, _short_batches, short).items():
        index_of[path].short_batch_params[target] = frozenset(params)
    for (path, target), params in _filled_parameters(sites, _whole_shapes, marked).items():
        index_of[path].whole_shape_params[target] = frozenset(params)
    for (path, target), params in _filled_parameters(sites, _grown_lists, marked).items():
        # Every call hands it a list that grows between calls (the states
        # of an episode): traced, each new length traces anew.
        info = index_of[path].functions.get(target)
        if params and info is not None:
            info.consumes_grown_lists = True

    for (path, target), params in _filled_parameters(sites, _loop_elements, marked).items():
        # Every call hands the loops around its tapes an element of the
        # caller's own loop (`noises` of `for image, noises in data`): it
        # is a step called per batch, its loops its own, not a training loop.
        info = index_of[path].functions.get(target)
        if (
            info is not None
            and info.tape_loop_params
            and not info.tape_in_other_loop
            and info.tape_loop_params <= set(params)
        ):
            index_of[path].per_call_tape_loops.add(target)

    _handed_on(sites, built, known)
    for (path, target), params in known.items():
        index_of[path].param_classes[target] = params

    def built_by_function(index: ModuleIndex, site: CallSite, built_by: str) -> set[str]:
        if built_by.startswith(_FORWARDED):
            owner, _, param = built_by[len(_FORWARDED) :].partition(":")
            return set(builders.get((index.path, owner), {}).get(param, ()))
        if built_by.startswith(HELD_ARGUMENT):
            return set()
        if built_by.endswith("]"):
            function, _, position = built_by[:-1].rpartition(PART_OPEN)
            return _returned_part(index, function, int(position), lookup)
        return functions_named(index, site, built_by)

    builders: _Filled = {}
    _handed_on(sites, built_by_function, builders)
    for (path, target), params in builders.items():
        index_of[path].param_builders[target] = params


def _returned_part(
    index: ModuleIndex, function: str, position: int, lookup: ProjectLookup
) -> set[str]:
    """The project functions whose result stands at `position` of what
    `function` (as `index` names it) returns (`FunctionInfo.returned_parts`);
    `function` itself, whose results all of its parts are, when it does not
    say."""
    found: set[str] = set()
    for found_index, qualname in lookup.find(function, index):
        info = found_index.functions.get(qualname)
        if info is None:
            continue
        parts = info.returned_parts
        if position < len(parts):
            found |= _project_definitions(found_index, parts[position], lookup, classes=False)
        else:
            found.add(found_index.qualify(qualname))
    return found


def _handed_on(
    sites: _Sites, built: Callable[[ModuleIndex, CallSite, str], set[str]], known: _Filled
) -> None:
    """The parameters every call site fills with an object `built` names
    the makers of, followed through sites that hand on a parameter of
    their own (`built` reads `known` for those, which this fills in place,
    round after round, to a fixed point)."""
    for _round in range(_FORWARDING_ROUNDS):
        found = _filled_parameters(sites, _objects_or_forwarded, built)
        if found == known:
            break
        known.clear()
        known.update(found)


def _named(site: CallSite) -> dict[str, str]:
    return dict(site.named)


def _short_batches(site: CallSite) -> dict[str, str]:
    given = {where: f"{_APPLIED}{batcher}" for where, batcher in site.applied_batchers}
    given.update(dict.fromkeys(site.short_batches, "short"))
    return given


def _grown_lists(site: CallSite) -> dict[str, str]:
    return dict.fromkeys(site.grown_lists, "grown")


def _loop_elements(site: CallSite) -> dict[str, str]:
    return dict.fromkeys(site.loop_elements, "element")


def _whole_shapes(site: CallSite) -> dict[str, str]:
    return dict.fromkeys(site.whole_shapes, "whole")


def _objects_or_forwarded(site: CallSite) -> dict[str, str]:
    """Per argument, what built the object it passes, or (`_FORWARDED`)
    the caller's parameter it hands on."""
    given = {where: f"{_FORWARDED}{owner}:{param}" for where, param, owner in site.forwarded}
    given.update(site.objects)
    return given


def _project_definitions(
    index: ModuleIndex, name: str, lookup: ProjectLookup, classes: bool
) -> set[str]:
    """The project classes (or functions) `name`, as `index` names it, may
    be, qualified."""
    return {
        found_index.qualify(found)
        for found_index, found in lookup.find(name, index)
        if found in (found_index.classes if classes else found_index.functions)
    }


def _filled_parameters(
    sites: _Sites,
    given_of: Callable[[CallSite], dict[str, str]],
    values_of: Callable[[ModuleIndex, CallSite, str], set[str]],
) -> _Filled:
    """(module path, function) -> the parameters that every call site fills
    with what `values_of` makes of what the site gives there (`given_of`:
    per argument, a name or a marker) -> those values. Only functions some
    site gives such an argument are asked; a site passing anything else
    there leaves the parameter unknown."""
    passed = {
        (target_index.path, _constructor(target_index, target))
        for _, site, targets in sites
        if given_of(site)
        for target_index, target in targets
    }
    seen: dict[tuple[str, str], dict[str, set[str]]] = {}
    for index, site, targets in sites:
        given = given_of(site)
        for target_index, called in targets:
            # `Agent(noise=OUNoise())`: building an object calls `__init__`.
            target = _constructor(target_index, called)
            info = target_index.functions.get(target)
            if info is None or (target_index.path, target) not in passed:
                continue
            offset = 1 if target != called else self_offset(site, info.params)
            arguments = [str(i) for i in range(len(site.args))] + [k for k, _ in site.keywords]
            for argument in arguments:
                name = given.get(argument, "")
                values = values_of(index, site, name) if name else set()
                parameter = filled_parameter(argument, info.params, offset)
                key = (target_index.path, target)
                seen.setdefault(key, {}).setdefault(parameter, set()).update(values or {""})
    return {
        key: known
        for key, params in seen.items()
        if (known := {n: tuple(sorted(c)) for n, c in params.items() if "" not in c})
    }


def _constructor(index: ModuleIndex, target: str) -> str:
    """The `__init__` a call of the class `target` runs, when the class
    defines one; any other target as it is."""
    init = f"{target}.__init__"
    return init if target in index.classes and init in index.functions else target
