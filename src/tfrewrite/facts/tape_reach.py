"""What a train step's tape runs through the objects its class holds, and
which of their models it trains, across modules.

Reinforcement-learning code often keeps its networks in a wrapper class of
another module (`TD3Model` holding `self._q1_model`, a Keras model, with
`q1(s, a)` calling it) and its train steps in an agent that holds one
wrapper per role (`self._model` trained, `self._target` for the targets):

    with tf.GradientTape() as tape:
        q = self._model.q1(states, actions)      # runs TD3Model.q1 in the tape
        q_target = self._target.q1(next_states, pi)
    variables = self._model.q1_variables         # a property of TD3Model
    grads = tape.gradient(loss, variables)

`TD3Model.q1` then runs in `train_q`'s tape for the object `self._model`,
whose `_q1_model` the step trains (the property returns
`self._q1_model.trainable_variables`), and for `self._target`, whose
models it does not: `self._q1_model(x)` without `training=True` in `q1`
runs the trained network in inference mode. Pass 1 records, per function,
what its tape blocks call and what its gradients are taken with respect to
(`record_trained_reads`, from `tape_losses`' walk); the project facts link them (`link_tape_reach`)
into `TracedFunction.tapes` of the wrapper's methods, which TFR304 reads.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from tfrewrite.facts.function_facts import gradient_sources
from tfrewrite.facts.index_names import dotted, iter_statements
from tfrewrite.facts.index_records import FunctionInfo, ModuleIndex
from tfrewrite.facts.keras_list_properties import VARIABLE_LISTS
from tfrewrite.facts.traced_function import TapeUse
from tfrewrite.workspace.line_names import path_line

if TYPE_CHECKING:
    from tfrewrite.facts.project_lookup import ProjectLookup

# How deep calls of the step's own methods are followed from its tape
# (`loss = self._q_loss(...)`, then `self._model.q1(...)` in `_q_loss`).
_OWN_METHOD_DEPTH = 3


# -- pass 1 -------------------------------------------------------------------------------------


def record_trained_reads(info: FunctionInfo, nodes: list[ast.AST]) -> None:
    """Fill `tape_trains` of a function whose tape calls something (the
    visitor fills `tape_calls`), from the nodes of its body (`tape_losses`
    walks each scope with a tape once, for both): for a method, reads
    through the objects `self` holds; for a function, reads through the
    names it does not bind (a script's `chatbot.get_train_vars()`), which
    the project facts match with the module's objects."""
    if not info.tape_calls:
        return
    if info.class_name is not None:
        info.tape_trains = tuple(dict.fromkeys(_trained_reads(nodes)))
    else:
        info.tape_trains = tuple(dict.fromkeys(_object_reads(nodes)))


def variable_owners(function: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[str, ...]:
    """`("_q1_model", "_q2_model")` when every `return` gives the variables
    of `self` attributes only (`self._q1_model.trainable_variables +
    self._q2_model.trainable_variables`); () otherwise."""
    owners: list[str] = []
    statements = iter_statements(function.body, into_definitions=False)
    returns = [s for s in statements if isinstance(s, ast.Return)]
    if not returns:
        return ()
    for node in returns:
        found = _self_variable_lists(node.value)
        if not found:
            return ()
        owners += found
    return tuple(dict.fromkeys(owners))


def _self_variable_lists(value: ast.expr | None) -> list[str]:
    """The attributes `a` of `self.a.trainable_variables` terms `value`
    adds up (or lists); [] when anything else is in it."""
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
        left, right = _self_variable_lists(value.left), _self_variable_lists(value.right)
        return left + right if left and right else []
    if isinstance(value, (ast.List, ast.Tuple)) and value.elts:
        parts = [_self_variable_lists(e) for e in value.elts]
        return [a for p in parts for a in p] if all(parts) else []
    name = dotted(value) if isinstance(value, ast.Attribute) else None
    parts = name.split(".") if name else []
    if len(parts) == 3 and parts[0] == "self" and parts[2] in VARIABLE_LISTS:
        return [parts[1]]
    return []


def _object_reads(nodes: list[ast.AST]) -> Iterator[str]:
    """What a function's gradients are taken with respect to, read through
    a name it does not bind: `"chatbot.get_train_vars"` for
    `chatbot.get_train_vars()` (a method returning an object's variables),
    `"agent.critic"` for `agent.critic.trainable_variables`, directly or
    through a name the function binds once."""
    for pieces, bound in _gradient_reads(nodes):
        if len(pieces) >= 2 and pieces[0] not in bound and pieces[1] not in VARIABLE_LISTS:
            yield f"{pieces[0]}.{pieces[1]}"


def _trained_reads(nodes: list[ast.AST]) -> Iterator[str]:
    """What the scope's gradients are taken with respect to, read through
    a held object: `"_model.q1_variables"` for `self._model.q1_variables`
    (a property or a model attribute of the object `self._model`), directly
    or through a name the scope binds once (`variables = ...`)."""
    for pieces, _ in _gradient_reads(nodes):
        if len(pieces) >= 3 and pieces[0] == "self" and pieces[2] not in VARIABLE_LISTS:
            yield f"{pieces[1]}.{pieces[2]}"


def _gradient_reads(nodes: list[ast.AST]) -> Iterator[tuple[list[str], set[str]]]:
    """The dotted names (split) of the attributes read in what the scope's
    `tape.gradient` calls differentiate with respect to (a method called
    there read as the method: `chatbot.get_train_vars()`), through a name
    the scope binds once; with the names the scope binds."""
    bound: dict[str, list[ast.expr]] = {}
    for node in nodes:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name):
                bound.setdefault(target.id, []).append(node.value)
    names = set(bound)
    for node in nodes:
        sources = gradient_sources(node)
        if sources is None:
            continue
        if isinstance(sources, ast.Name) and len(bound.get(sources.id, ())) == 1:
            sources = bound[sources.id][0]
        for part in ast.walk(sources):
            if isinstance(part, ast.Call) and isinstance(part.func, ast.Attribute):
                part = part.func
            name = dotted(part) if isinstance(part, ast.Attribute) else None
            if name:
                yield name.split("."), names


# -- project facts ------------------------------------------------------------------------------


def link_tape_reach(
    indexes: list[ModuleIndex], lookup: ProjectLookup
) -> dict[tuple[str, str], list[TapeUse]]:
    """(path, qualname) of each method of a held object that a train step's
    tape runs -> how (`TapeUse`), when the step trains some model of that
    object."""
    from tfrewrite.facts.project_lookup import held_class

    found: dict[tuple[str, str], list[TapeUse]] = {}
    for index in indexes:
        for info in index.functions.values():
            if not (info.tape_calls and info.trains):
                continue
            if not info.class_name:
                _link_module_objects(index, info, lookup, found)
                continue
            where = path_line(index.path, info.lineno, index.cell_starts)
            for callee in _reached(index, info):
                owner, _, rest = callee.rpartition(".")
                owner_class, _, attr = owner.rpartition(".")
                trained = _trained_attributes(index, info, attr, lookup, held_class)
                if not trained:
                    continue
                for target_index, target in lookup.held_method(callee):
                    use = TapeUse(info.qualname, where, f"self.{attr}.{rest}", trained)
                    found.setdefault((target_index.path, target), []).append(use)
    return found


def _link_module_objects(
    index: ModuleIndex,
    step: FunctionInfo,
    lookup: ProjectLookup,
    found: dict[tuple[str, str], list[TapeUse]],
) -> None:
    """A function's tape running an object the module binds once (`chatbot
    = ChatbotModel(...)`, then `chatbot(x, y)` or `chatbot.loss(x)` in the
    tape) while its gradients are taken through that object (`chatbot.
    get_train_vars()`, returning `self.encoder.trainable_variables + ...`):
    the object's methods the tape runs train those models."""
    from tfrewrite.facts.project_lookup import held_class

    where = path_line(index.path, step.lineno, index.cell_starts)
    for name, made_by in index.module_instances.items():
        reads = [r.partition(".")[2] for r in step.tape_trains if r.partition(".")[0] == name]
        target = held_class(index, made_by, lookup) if reads else None
        if target is None:
            continue
        target_index, class_qualname = target
        trained: set[str] = set()
        for read in reads:
            method = target_index.functions.get(f"{class_qualname}.{read}")
            trained.update(method.returns_variables_of if method is not None else (read,))
        if not trained:
            continue
        # Calling a Keras layer or model runs its `call` in a call context
        # that hands `training` on to the layers it calls: the call in the
        # tape is what passes it (TFR304 there). An own `__call__` does not.
        called = lookup.call_method(*target) if f"{made_by}()" in step.tape_calls else []
        methods = [(i, q) for i, q in called if q.rpartition(".")[2] == "__call__"]
        for call in step.tape_calls:
            method = f"{class_qualname}.{call.partition('.')[2]}"
            if call.partition(".")[0] == name and method in target_index.functions:
                methods.append((target_index, method))
        for method_index, method in methods:
            use = TapeUse(step.qualname, where, name, frozenset(trained))
            found.setdefault((method_index.path, method), []).append(use)


def _reached(index: ModuleIndex, step: FunctionInfo) -> list[str]:
    """What the step's tape calls, and what the step's own methods called
    there call in turn: the calls of held objects' methods among them
    (`mod.Agent._model.q1`)."""
    own_prefix = f"{index.module}.{step.class_name}." if index.module else f"{step.class_name}."
    seen: set[str] = set()
    reached: list[str] = []
    frontier = list(step.tape_calls)
    for _ in range(_OWN_METHOD_DEPTH + 1):
        following: list[str] = []
        for callee in frontier:
            if callee in seen or not callee.startswith(own_prefix):
                continue
            seen.add(callee)
            rest = callee[len(own_prefix) :]
            if "." in rest:
                reached.append(callee)  # `self._model.q1`: a held object's method
                continue
            method = index.functions.get(f"{step.class_name}.{rest}")
            if method is not None:
                following += method.calls
        frontier = following
    return reached


def _trained_attributes(
    index: ModuleIndex,
    step: FunctionInfo,
    attr: str,
    lookup: ProjectLookup,
    held_class: Callable[..., tuple[ModuleIndex, str] | None],
) -> frozenset[str]:
    """The attributes of the object `self.<attr>` whose models the step
    trains: `_q1_model` for `tape.gradient(loss, self._model.q1_variables)`
    when `TD3Model.q1_variables` returns `self._q1_model.trainable_variables`,
    or a model attribute read directly (`self._model._q1_model.variables`)."""
    reads = [r.partition(".")[2] for r in step.tape_trains if r.partition(".")[0] == attr]
    if not reads:
        return frozenset()
    owner = index.classes.get(step.class_name or "")
    held = owner.held_objects.get(attr) if owner is not None else None
    target = held_class(index, held, lookup) if held else None
    trained: set[str] = set()
    for read in reads:
        method = target[0].functions.get(f"{target[1]}.{read}") if target else None
        if method is not None:
            trained.update(method.returns_variables_of)
        else:
            trained.add(read)
    return frozenset(trained)
