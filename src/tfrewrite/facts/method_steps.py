"""Train steps that are methods, called through an attribute in a Python loop.

`self.actor.train(states, actions)` in an agent's loop, or `agent.learn()` in
`main.py`, names a method whose class the index cannot resolve from the call
alone. The evidence taken instead: the call sits in a Python loop, and a class
in the project defines a method of that name that opens a `GradientTape` and
applies gradients. When several do, the attribute may name the class
(`self.actor` names `Actor`); when it names none, the loop calls whichever of
them (a few, as a factory's alternatives) it was given. That is a method-name
heuristic, so a decorator TFR302 offers for such a step is an unsafe fix.
"""

from __future__ import annotations

from pathlib import PurePath

from tfrewrite.facts.class_dispatch import Lookup
from tfrewrite.facts.index_records import ModuleIndex
from tfrewrite.facts.traced_function import fit_calls
from tfrewrite.facts.vocabulary import is_gradient_tape

# How many classes' train-step methods of one name a loop's call may stand
# for when nothing names the class: a factory's alternatives, not a name
# every module of a large project reuses.
MAX_ALTERNATIVES = 8


def looped_train_methods(indexes: list[ModuleIndex], lookup: Lookup) -> set[tuple[str, str, str]]:
    """(path, qualname, via) of train-step methods that some Python loop
    calls as `obj.name(...)`: the one class's of that name, the class the
    object held there is of, or the class the attribute names; else each of
    a few. `via` is the method of its class the loop calls, which calls the
    step ("" when the loop calls the step itself)."""
    candidates: dict[str, list[tuple[str, str, str]]] = {}
    for index in indexes:
        if any(is_gradient_tape(callee) for callee in index.loop_calls):
            # A tape opened in a loop (the module's minibatch loop): the
            # method holding it is a training loop, not a step (TFR303's case).
            continue
        steps: dict[str, str] = {}  # qualified name -> qualname
        for qualname, info in index.functions.items():
            if not (info.class_name and info.trains):
                continue
            class_qualname, _, name = qualname.rpartition(".")
            if class_qualname != info.class_name and not class_qualname.endswith(
                "." + info.class_name
            ):
                continue
            if fit_calls(info):
                continue  # Keras traces it (`train_step(self, data)`)
            candidates.setdefault(name, []).append((index.path, qualname, ""))
            steps[index.qualify(qualname)] = qualname
        for qualname, info in index.functions.items():
            # A method of the class that trains nothing itself but calls its
            # steps (SAC's `train` calling `update_critic`, `update_actor`):
            # a loop calling it runs each of them per batch.
            if info.class_name and not info.trains:
                driven = [(index.path, steps[c], qualname) for c in info.calls if c in steps]
                if driven:
                    name = qualname.rpartition(".")[2]
                    candidates.setdefault(name, []).extend(driven)
    found: set[tuple[str, str, str]] = set()
    # Loops of modules not in `indexes` (a fix round re-indexes one module):
    # the method names they call, as the project recorded them.
    called_here = {c.rpartition(".")[2] for index in indexes for c in index.loop_calls}
    for index in indexes:
        for name in index.loop_method_names.keys() - called_here:
            found.update(t for t in candidates.get(name, []) if t[0] == index.path)
    qualified = {index.path: index for index in indexes}
    for index in indexes:
        passed = _parameter_classes(index)
        for callee in index.loop_calls:
            head, _, name = callee.rpartition(".")
            given = passed.get(head)
            if given:
                # `gan.train_d(x)` for a parameter every call site fills with
                # an object of a project class: those classes' methods.
                found.update(
                    t
                    for t in candidates.get(name, [])
                    if qualified[t[0]].qualify(_class_qualname(t[1])) in given
                )
                continue
            targets = _nearest(index.path, candidates.get(name, []))
            if len(targets) > 1:
                # `self.actor.train(...)` with `Actor.train` and `Critic.train`:
                # the attribute that names the class. With no such name
                # (`model.train_step(...)` for a model a factory picks among
                # a few classes), the loop calls whichever it was given.
                owner = head.rpartition(".")[2].replace("_", "").lower()
                held = {(i.path, q) for i, q in lookup.held_method(callee)}
                named = [t for t in targets if _class_of(t[1]).lower() == owner]
                if held:  # `self.net = Actor()`: the class of the object held
                    named = [t for t in targets if t[:2] in held]
                elif not named and len(targets) <= MAX_ALTERNATIVES:
                    named = targets
                targets = named
            if head:
                found.update(targets)
    return found


def _nearest(path: str, targets: list[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    """The candidates in the calling file, else in its folder (`main.py` beside
    `agent.py`), else all: unrelated scripts in one project reuse class names."""
    if not targets:  # most loop calls name no train-step method
        return targets
    folder = PurePath(path).parent
    for near in (
        [t for t in targets if t[0] == path],
        [t for t in targets if PurePath(t[0]).parent == folder],
    ):
        if near:
            return near
    return targets


def _class_of(qualname: str) -> str:
    return qualname.rsplit(".", 2)[-2]


def _class_qualname(method_qualname: str) -> str:
    return method_qualname.rpartition(".")[0]


def _parameter_classes(index: ModuleIndex) -> dict[str, set[str]]:
    """The parameters of the module's functions that every call site fills
    with objects of project classes (`ModuleIndex.param_classes`), by name,
    with those classes (qualified); a name two functions use is left out
    unless they agree."""
    found: dict[str, set[str]] = {}
    clashing: set[str] = set()
    for params in index.param_classes.values():
        for param, classes in params.items():
            known = found.setdefault(param, set(classes))
            if known != set(classes):
                clashing.add(param)
    return {param: classes for param, classes in found.items() if param not in clashing}


def record_loop_method_names(indexes: list[ModuleIndex]) -> None:
    """Each module learns which of its methods' names a Python loop of the
    project calls through an attribute (`ModuleIndex.loop_method_names`)."""
    called: dict[str, bool] = {}
    for index in indexes:
        for callee, short in index.loop_calls.items():
            head, _, name = callee.rpartition(".")
            if head:
                called[name] = called.get(name, False) or short
    for index in indexes:
        for qualname, info in index.functions.items():
            name = qualname.rpartition(".")[2]
            if info.class_name and name in called:
                index.loop_method_names[name] = called[name]


def record_looped_train_methods(
    indexes: list[ModuleIndex], found: set[tuple[str, str, str]]
) -> None:
    """Each heuristic train-step method (`looped_train_methods`) learns, in
    its own module, that a loop calls it, and that the loop's call names it
    (or the method of its class that calls it) by its name alone."""
    by_path = {index.path: index for index in indexes}
    for path, qualname, via in found:
        by_path[path].looped_functions.setdefault(qualname, False)
        by_path[path].matched_by_name.setdefault(qualname, via)


def train_step_modules(indexes: list[ModuleIndex]) -> set[str]:
    """Last components of the module names that define a train step (a
    function or method that opens a `GradientTape` and applies gradients).

    The script that drives such a step (`from agent import Agent` ... a loop
    calling `agent.learn()`) often names no TensorFlow at all, so pass 1 puts
    it aside; a file put aside that names one of these modules is indexed,
    so the loop that calls the step is seen."""
    found: set[str] = set()
    for index in indexes:
        if not index.module:
            continue
        if any(info.trains for info in index.functions.values()):
            found.add(index.module.rpartition(".")[2])
    return found


def train_step_methods(indexes: list[ModuleIndex]) -> set[str]:
    """Names of the methods that are train steps (`Agent.step` opens a
    `GradientTape` and applies gradients), but not those Keras traces.

    The loop that calls one may sit in a file that neither names TensorFlow
    nor imports the step's module: `training(agent, dataset)` calls
    `agent.step(...)` on the object it is handed. Such a file is indexed when
    it calls a method of one of these names (`calls_method`)."""
    found: set[str] = set()
    for index in indexes:
        for qualname, info in index.functions.items():
            if info.class_name and info.trains and not fit_calls(info):
                found.add(qualname.rpartition(".")[2])
    return found


def calls_method(data: bytes, names: set[str]) -> bool:
    """A cheap byte test: `data` calls a method of one of `names`
    (`.step(`, with no space, as code is written)."""
    return any(b"." + name.encode() + b"(" in data for name in names)


def mentions_module(data: bytes, modules: set[str]) -> bool:
    """A cheap byte test: `data` imports something and names one of `modules`
    as a word (the caller of a train step, before it is parsed)."""
    if b"import" not in data:
        return False
    for module in modules:
        word = module.encode()
        start = data.find(word)
        while start >= 0:
            end = start + len(word)
            before = data[start - 1 : start] if start else b" "
            after = data[end : end + 1]
            if not (before.isalnum() or before == b"_") and not (after.isalnum() or after == b"_"):
                return True
            start = data.find(word, end)
    return False
