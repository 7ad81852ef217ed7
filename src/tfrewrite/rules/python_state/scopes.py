"""Pre-parse checks of the Python-state rules (module state, side effects,
retracing, variable creation), on pass-1 facts alone (no LibCST): see
`facts.rule_scopes`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tfrewrite.facts.rule_scopes import traced_infos

if TYPE_CHECKING:
    from tfrewrite.facts.index import ModuleIndex
    from tfrewrite.facts.rule_scopes import TracedFacts


def module_state(index: ModuleIndex, traced: TracedFacts) -> bool:
    """TFR201: some state can change: a rebound module name, items of a
    module name assigned, an attribute of an imported module the project
    rebinds or this file writes, an attribute of a class of the file
    assigned through its name, a traced method reading a `self` attribute
    its class writes outside set-up methods, code elsewhere rebinds on its
    objects in a loop, or a Keras callback sets on the model, or a traced
    function nested in an untraced one."""
    from tfrewrite.facts.vocabulary import is_setup_method

    if not traced:
        return False
    if index.rebound_module_names or (index.item_writes & index.module_names):
        return True
    if index.held_state or index.rebound_imports or index.foreign_writes:
        return True  # `cfg.SCALE` rebound by the project, or written here
    if not index.named_attribute_writes.isdisjoint(index.classes):
        return True  # `Schedule.margin = ...`: a class attribute rebound
    outside = index.outside_attribute_writes
    if outside and any(
        not info.self_reads.isdisjoint(outside.get(info.class_name or "", ()))
        for info in traced_infos(index, traced)
    ):
        return True  # `agent.noise = ...` in another module's loop
    set_by_callbacks = index.callback_model_writes
    if set_by_callbacks and any(
        not info.self_reads.isdisjoint(set_by_callbacks) for info in traced_infos(index, traced)
    ):
        return True  # `self.model.schedule = ...` in a callback `fit` runs
    for qualname in traced:
        info = index.functions.get(qualname)
        if info is None:
            continue
        parent = qualname.rpartition(".")[0]
        if info.class_name is not None:
            prefix = info.class_name + "."
            if any(
                not (other.self_writes | other.self_item_writes).isdisjoint(info.self_reads)
                and not is_setup_method(other.qualname.rpartition(".")[2])
                for name, other in index.functions.items()
                if name.startswith(prefix)
            ):
                return True
        elif parent in index.functions and parent not in traced:
            return True
    return False


def side_effects(index: ModuleIndex, traced: TracedFacts) -> bool:
    """TFR202: a traced function writes state or mutates a container that
    may not be its own, or one of its own in a loop that may be a graph
    loop, advances an iterator (`next`, `__next__`), may write a file, or
    calls a plain Python object's method for its effect (a project fact),
    reads one of Python's clocks, or keeps on `self` an attribute the
    module reads."""
    from tfrewrite.facts.file_writes import WRITER_NAMES
    from tfrewrite.rules.python_state.clock_reads import HOST_CLOCKS

    if index.plain_effect_calls:
        return True
    return any(
        info.writes_state
        or info.mutates_outside
        or "__next__" in info.method_calls
        or any(call == "next" or call in WRITER_NAMES or call in HOST_CLOCKS for call in info.calls)
        or not info.assigned_self_attrs.isdisjoint(index.attribute_reads)
        for info in traced_infos(index, traced)
    )


def decorated(index: ModuleIndex, traced: TracedFacts) -> bool:
    """TFR203: a function decorated with `tf.function`, here or in another
    module this one calls (`foreign_tf_functions`)."""
    from tfrewrite.facts.index import TF_FUNCTION_NAMES

    return bool(index.foreign_tf_functions) or any(
        any(d in TF_FUNCTION_NAMES for d in info.decorators) for info in index.functions.values()
    )


def variable_creation(index: ModuleIndex, traced: TracedFacts) -> bool:
    """TFR204: traced code calls something that may create variables."""
    from tfrewrite.facts.vocabulary import creates_variables

    return any(
        any(creates_variables(c) for c in info.calls) for info in traced_infos(index, traced)
    )


def op_names(index: ModuleIndex, traced: TracedFacts) -> bool:
    """TFR206: traced code calls a TensorFlow function that takes `name`."""
    from tfrewrite.facts.op_names import takes_op_name

    return any(any(takes_op_name(c) for c in info.calls) for info in traced_infos(index, traced))


def caught_op_errors(index: ModuleIndex, traced: TracedFacts) -> bool:
    """TFR207: some code is traced and the file names TensorFlow's errors
    module (`tf.errors.InvalidArgumentError`, or `errors_impl` imported)."""
    return bool(traced) and not index.used_names.isdisjoint(("errors", "errors_impl"))
