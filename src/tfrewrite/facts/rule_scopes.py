"""Where each rule can fire, decided from pass-1 facts alone.

Most files of a project have nothing any rule could report, and parsing
them with LibCST is the cost of a run. Each rule code has here a cheap test
on the file's `ModuleIndex` and its traced functions: a file for which no
selected rule's test passes is settled without a parse. The tests live
apart from the rules, which import LibCST, so that the main process can
settle a file (in a run where only that file changed, the whole run) without
loading LibCST at all. A test may say yes where the rule then finds
nothing; it must never say no where the rule would report.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING

from tfrewrite.facts.index import TF_FUNCTION_NAMES, ModuleIndex
from tfrewrite.facts.prefilters import traced_callees
from tfrewrite.facts.vocabulary import (
    HOST_CONVERSIONS,
    MEAN_FUNCTIONS,
    NUMPY_GENERATORS,
    SHAPE_ARGUMENTS,
    creates_variables,
    is_setup_method,
    is_test_path,
)

if TYPE_CHECKING:
    from tfrewrite.facts.project import TracedFunction

# A file's traced functions by qualname, with what the project knows of each
# (pass-1 facts): what the tests decide from. Iterating it gives the qualnames.
TracedFacts = Mapping[str, "TracedFunction"]

Scope = Callable[[ModuleIndex, TracedFacts], bool]


def _tensor_if(index: ModuleIndex, traced: TracedFacts) -> bool:
    """TFR101: a branch in some traced function or a conditional expression
    in a traced lambda: a condition that may be a tensor, or one that is a
    Python value only while parameters such as `training` are, when the
    project proves one of them a tensor (an `input_signature`, a
    `Dataset.map`, a call site passing one)."""
    from tfrewrite.facts.project import tensor_arguments

    if any(lam.conditional for lam in index.traced_lambdas):
        return True
    for qualname, facts in traced.items():
        info = index.functions.get(qualname)
        if info is None:
            continue
        if info.branches:
            return True
        if info.condition_params and not info.condition_params.isdisjoint(
            tensor_arguments(info, facts)
        ):
            return True
    return False


def _calls_into(prefix: str) -> Scope:
    """TFR102/TFR106: traced code (nested functions included) calls a
    function of the module `prefix` names (`numpy.random`, `random`)."""
    dotted = prefix + "."

    def scope(index: ModuleIndex, traced: TracedFacts) -> bool:
        return any(name.startswith(dotted) for name in traced_callees(index, traced))

    return scope


def _numpy_random(index: ModuleIndex, traced: TracedFacts) -> bool:
    """TFR102: traced code calls `numpy.random`, or there is traced code and
    a NumPy generator created anywhere (a draw from it is a method call,
    which pass 1 does not resolve)."""
    if _calls_into("numpy.random")(index, traced):
        return True
    return bool(traced) and not NUMPY_GENERATORS.isdisjoint(
        (*index.called_names, *index.default_calls)
    )


def _print(index: ModuleIndex, traced: TracedFacts) -> bool:
    """TFR103: some traced function calls `print`."""
    return any(
        (info := index.functions.get(q)) is not None
        and any(name == "print" or name.endswith(".print") for name in info.calls)
        for q in traced
    )


def _numpy_math(index: ModuleIndex, traced: TracedFacts) -> bool:
    """TFR104: traced code (nested functions included) calls a NumPy
    function, or `max`/`min`."""
    return any(
        name.startswith("numpy.") or name in ("max", "min")
        for name in traced_callees(index, traced)
    )


def _host_conversion(index: ModuleIndex, traced: TracedFacts) -> bool:
    """TFR105: a traced function calls `.numpy()`, `.item()` or a host
    conversion builtin (calls are recorded by name)."""
    for qualname in traced:
        info = index.functions.get(qualname)
        if info is not None and (
            not info.method_calls.isdisjoint(("numpy", "item"))
            or not HOST_CONVERSIONS.isdisjoint(info.calls)
        ):
            return True
    return False


def _static_shape(index: ModuleIndex, traced: TracedFacts) -> bool:
    """TFR107: traced code, and a call of an op taking a shape."""
    return bool(traced) and not index.called_names.isdisjoint(SHAPE_ARGUMENTS)


def _module_state(index: ModuleIndex, traced: TracedFacts) -> bool:
    """TFR201: some state can change: a rebound module name, items of a
    module name assigned, an attribute of an imported module the project
    rebinds or this file writes, an attribute of a class of the file
    assigned through its name, a traced method reading a `self` attribute
    its class writes outside set-up methods, or a traced function nested in
    an untraced one."""
    if not traced:
        return False
    if index.rebound_module_names or (index.item_writes & index.module_names):
        return True
    if index.held_state or index.rebound_imports or index.foreign_writes:
        return True  # `cfg.SCALE` rebound by the project, or written here
    if not index.named_attribute_writes.isdisjoint(index.classes):
        return True  # `Schedule.margin = ...`: a class attribute rebound
    for qualname in traced:
        info = index.functions.get(qualname)
        if info is None:
            continue
        parent = qualname.rpartition(".")[0]
        if info.class_name is not None:
            prefix = info.class_name + "."
            if any(
                not other.self_writes.isdisjoint(info.self_reads)
                and not is_setup_method(other.qualname.rpartition(".")[2])
                for name, other in index.functions.items()
                if name.startswith(prefix)
            ):
                return True
        elif parent in index.functions and parent not in traced:
            return True
    return False


def _side_effects(index: ModuleIndex, traced: TracedFacts) -> bool:
    """TFR202: a traced function writes state or mutates a container that
    may not be its own, or one of its own in a loop that may be a graph
    loop."""
    for qualname in traced:
        info = index.functions.get(qualname)
        if info is not None and (info.writes_state or info.mutates_outside):
            return True
    return False


def _decorated(index: ModuleIndex, traced: TracedFacts) -> bool:
    """TFR203: a function decorated with `tf.function`."""
    return any(
        any(d in TF_FUNCTION_NAMES for d in info.decorators) for info in index.functions.values()
    )


def _variable_creation(index: ModuleIndex, traced: TracedFacts) -> bool:
    """TFR204: traced code calls something that may create variables."""
    for qualname in traced:
        info = index.functions.get(qualname)
        if info is not None and any(creates_variables(c) for c in info.calls):
            return True
    return False


def _logging(index: ModuleIndex, traced: TracedFacts) -> bool:
    """TFR205: traced code, and `logging` imported or `tf.get_logger` called."""
    if not traced:
        return False
    return (
        any(
            target in ("logging", "absl.logging") or target.startswith("logging.")
            for target in index.imports.values()
        )
        or "tensorflow.get_logger" in index.called_names
    )


def _loss_decorator(index: ModuleIndex, traced: TracedFacts) -> bool:
    """TFR301: something wrapped in or decorated with `tf.function`."""
    return any(s.reason.startswith("wrapped in tf.function") for s in index.traced_sites) or any(
        d.endswith(".function") for info in index.functions.values() for d in info.decorators
    )


def _train_step(index: ModuleIndex, traced: TracedFacts) -> bool:
    """TFR302: a function that opens a tape and applies gradients."""
    return any(f.opens_gradient_tape and f.applies_gradients for f in index.functions.values())


def _gradient_tape(index: ModuleIndex, traced: TracedFacts) -> bool:
    """TFR303/TFR304/TFR305: a `GradientTape` opened anywhere."""
    return index.opens_gradient_tape


def _averaging(index: ModuleIndex, traced: TracedFacts) -> bool:
    """TFR306: a name or a comprehension averaged (`np.mean(accs)`), a
    `sum(...)` divided, or a name divided that the file adds to with `+=`
    (`total / n_batches`): what every finding starts from."""
    averages = not index.averaged_callees.isdisjoint(MEAN_FUNCTIONS)
    return averages or index.divides_sum or index.divides_running_sum


def _eager_switch(index: ModuleIndex, traced: TracedFacts) -> bool:
    """TFR307: `run_functions_eagerly` called outside tests."""
    return index.calls_run_functions_eagerly and not is_test_path(index.path)


SCOPES: dict[str, Scope] = {
    "TFR101": _tensor_if,
    "TFR102": _numpy_random,
    "TFR103": _print,
    "TFR104": _numpy_math,
    "TFR105": _host_conversion,
    "TFR106": _calls_into("random"),
    "TFR107": _static_shape,
    "TFR201": _module_state,
    "TFR202": _side_effects,
    "TFR203": _decorated,
    "TFR204": _variable_creation,
    "TFR205": _logging,
    "TFR301": _loss_decorator,
    "TFR302": _train_step,
    "TFR303": _gradient_tape,
    "TFR304": _gradient_tape,
    "TFR305": _gradient_tape,
    "TFR306": _averaging,
    "TFR307": _eager_switch,
}


def can_fire(code: str, index: ModuleIndex, traced: TracedFacts) -> bool:
    """Whether the rule `code` can report anything in this file. A code
    without a test here (a rule added without one) is always run."""
    scope = SCOPES.get(code)
    return True if scope is None else scope(index, traced)


def codes_that_can_fire(codes: Iterable[str], index: ModuleIndex, traced: TracedFacts) -> list[str]:
    """The codes, in order, whose rule can report anything in this file."""
    return [code for code in codes if can_fire(code, index, traced)]
