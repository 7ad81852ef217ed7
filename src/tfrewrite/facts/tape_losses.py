"""Tape losses in pass 1: the two-argument calls whose result a
`GradientTape` differentiates (`loss = dice(y, p)` then
`tape.gradient(loss, ...)`), recorded as `TapeLoss`es so the project facts
know those functions run in a training step.

Asked only of a file that opens a tape, after the visitor is done: it walks
the scopes that can hold a tape once more, which the visitor's single pass
does not need for anything else.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable

from tfrewrite.facts.call_evidence import EXTERNAL_ROOTS
from tfrewrite.facts.function_facts import opens_tape
from tfrewrite.facts.index_names import body_nodes, iter_statements
from tfrewrite.facts.index_records import ModuleIndex, TapeLoss
from tfrewrite.facts.tape_reach import record_trained_reads

# Calls that add up the terms they are given (`tf.add_n([l1, l2])`,
# `sum(losses.values())`, `list(...)` on the way): their arguments are
# parts of the loss.
_AGGREGATIONS = frozenset({"tensorflow.add_n", "tensorflow.math.add_n", "sum", "list", "tuple"})
# Calls that add up terms only when given several (`tf.reduce_sum([l1, l2])`);
# given one tensor (`tf.reduce_sum(h)`) they reduce an activation, which is
# no loss term.
_COLLECTION_REDUCTIONS = frozenset(
    {
        "tensorflow.reduce_sum",
        "tensorflow.math.reduce_sum",
        "tensorflow.reduce_mean",
        "tensorflow.math.reduce_mean",
        "tensorflow.stack",
    }
)
_COLLECTIONS = (ast.List, ast.Tuple, ast.ListComp, ast.GeneratorExp)
# Methods that hand on a container's entries (`losses.values()`).
_ENTRY_METHODS = frozenset({"values", "items"})
# Methods of Keras optimizers that take the loss and give it back scaled
# (mixed precision: `LossScaleOptimizer.get_scaled_loss`, Keras 3's
# `Optimizer.scale_loss`): what they return is the loss.
_LOSS_SCALING_METHODS = frozenset({"get_scaled_loss", "scale_loss"})
# TensorFlow's reductions made for a loss: the per-example loss given first
# is what they average (`tf.nn.compute_average_loss(per_example, global_batch_size=n)`).
_LOSS_REDUCTIONS = frozenset(
    {"tensorflow.nn.compute_average_loss", "tensorflow.nn.scale_regularization_loss"}
)


def _terms(
    value: ast.AST, resolve: Callable[[ast.AST], str | None]
) -> tuple[list[ast.Call], set[str]]:
    """The parts a loss value is made of: the calls whose results it adds,
    scales or aggregates (`w * mse(y, p) + reg`), and the names whose values
    it takes in whole or through their entries (`l1`, `losses['gan']`,
    `losses.values()`). Names passed to a call as its inputs (`mse(y, p)`'s
    `p`) are not parts: what a model computes is no loss term."""
    calls: list[ast.Call] = []
    names: set[str] = set()
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.BinOp):
            stack += [node.left, node.right]
        elif isinstance(node, ast.UnaryOp):
            stack.append(node.operand)
        elif isinstance(node, (ast.List, ast.Tuple)):
            stack += node.elts
        elif isinstance(node, (ast.ListComp, ast.GeneratorExp)):
            stack.append(node.elt)
            stack += [g.iter for g in node.generators]
        elif isinstance(node, ast.Subscript):
            stack.append(node.value)
        elif isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr in _ENTRY_METHODS:
                stack.append(func.value)
            elif isinstance(func, ast.Attribute) and func.attr in _LOSS_SCALING_METHODS:
                stack += node.args[:1]
            elif (resolve(func) or "") in _AGGREGATIONS:
                stack += node.args
            elif (resolve(func) or "") in _LOSS_REDUCTIONS:
                stack += node.args[:1]
            elif (resolve(func) or "") in _COLLECTION_REDUCTIONS and node.args:
                if isinstance(node.args[0], _COLLECTIONS):
                    stack.append(node.args[0])
            else:
                calls.append(node)
    return calls, names


def _target_names(targets: Iterable[ast.expr]) -> set[str]:
    """The names an assignment writes: `loss`, and `losses` for `losses['gan'] = ...`."""
    found: set[str] = set()
    for target in targets:
        while isinstance(target, ast.Subscript):
            target = target.value  # type: ignore[assignment]
        if isinstance(target, ast.Name):
            found.add(target.id)
        elif isinstance(target, (ast.Tuple, ast.List)):
            found |= _target_names(target.elts)
    return found


def _is_pair(call: ast.Call) -> bool:
    """`f(labels, predictions)`: two positional arguments, nothing else."""
    return len(call.args) == 2 and not call.keywords


def tape_scopes(tape_functions: Iterable[str]) -> set[str]:
    """The functions that open a tape (`tape_functions`, by qualname), and
    those they are nested in."""
    scopes: set[str] = set()
    for qualname in tape_functions:
        parts = qualname.split(".")
        scopes.update(".".join(parts[:n]) for n in range(1, len(parts) + 1))
    return scopes


def record_tape_losses(
    index: ModuleIndex,
    resolve: Callable[[ast.AST], str | None],
    callee_of: Callable[[ast.Call], str | None],
    body: list[ast.stmt],
    qualname: str,
    tape_scopes: set[str],
) -> None:
    """Record in `index` the calls whose result, assigned inside a
    GradientTape block, is what `tape.gradient` differentiates; recurse into
    the nested scopes that can hold a tape (`tape_scopes`, and every class).
    `resolve` names a function through the file's imports; `callee_of`
    names what a call runs as the visitor found it (`make_loss()` for a call
    of `loss_fn = make_loss(cfg)`, in the function or one around it)."""
    nodes = body_nodes(body)
    differentiated = {
        node.args[0].id
        for node in nodes
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "gradient"
        and node.args
        and isinstance(node.args[0], ast.Name)
    }
    handed = _handed_with_the_tape(nodes, resolve)
    if handed and qualname in index.functions:
        index.functions[qualname].hands_tape = True
    if qualname in index.functions:
        record_trained_reads(index.functions[qualname], nodes)
    differentiated |= handed
    for node in nodes:
        if opens_tape(node, resolve):
            for lineno, call in _differentiated_calls(node.body, differentiated, resolve):
                callee = _own_method(index, qualname, callee_of(call))
                pair = _is_pair(call)
                # A library call of other arity (`tf.reduce_sum(h)`) is no
                # loss the project defines.
                if callee and (pair or callee.split(".", 1)[0] not in EXTERNAL_ROOTS):
                    index.tape_losses.append(TapeLoss(callee, qualname, lineno, pair))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            inner = f"{qualname}.{node.name}" if qualname else node.name
            if isinstance(node, ast.ClassDef) or inner in tape_scopes:
                record_tape_losses(index, resolve, callee_of, node.body, inner, tape_scopes)


def record_minimized_losses(
    index: ModuleIndex,
    resolve: Callable[[ast.AST], str | None],
    callee_of: Callable[[ast.Call], str | None],
    body: list[ast.stmt],
    qualname: str = "",
) -> None:
    """Record in `index` the losses an optimizer's `minimize` differentiates
    (`opt.minimize(loss, var_list)`, Keras' own tape): what the callable it
    is handed returns (a function the scope defines, `def loss(): return
    value_loss(x, y)`, or a lambda), as `record_tape_losses` records the
    terms of what a `tape.gradient` differentiates."""
    nodes = body_nodes(body)
    local_functions = {
        node.name: node
        for node in nodes
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    }
    for node in nodes:
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "minimize"
            and node.args
        ):
            handed = node.args[0]
            if isinstance(handed, ast.Lambda):
                calls, _ = _terms(handed.body, resolve)
                callees = [callee_of(call) for call in calls]
            elif isinstance(handed, ast.Name) and handed.id in local_functions:
                callees = list(returned_terms(local_functions[handed.id].body, resolve))
            else:
                continue
            if qualname in index.functions:
                index.functions[qualname].minimizes_callable = True
            for callee in callees:
                if callee and callee.split(".", 1)[0] not in EXTERNAL_ROOTS:
                    own = index.function_named(callee, qualname) if "." not in callee else None
                    callee = index.qualify(own) if own else _own_method(index, qualname, callee)
                    if callee:
                        index.tape_losses.append(TapeLoss(callee, qualname, node.lineno, False))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            inner = f"{qualname}.{node.name}" if qualname else node.name
            record_minimized_losses(index, resolve, callee_of, node.body, inner)


def _handed_with_the_tape(
    nodes: list[ast.AST], resolve: Callable[[ast.AST], str | None]
) -> set[str]:
    """The names handed to a call together with a tape the scope opens
    (`self._apply(tape, total_loss)`, `self._minimize(strategy, tape, opt,
    output["loss"], variables)`: `total_loss`, `output`, `variables`, by
    name or through items of one): the helper differentiates them with it,
    as `tape.gradient` would here. A tape handed alone (`show(tape)`) hands
    nothing to differentiate."""
    tapes = {
        item.optional_vars.id
        for node in nodes
        if opens_tape(node, resolve)
        for item in node.items  # type: ignore[attr-defined]
        if isinstance(item.optional_vars, ast.Name)
    }
    if not tapes:
        return set()
    handed: set[str] = set()
    for node in nodes:
        if not isinstance(node, ast.Call):
            continue
        arguments = [*node.args, *(k.value for k in node.keywords)]
        if not any(isinstance(a, ast.Name) and a.id in tapes for a in arguments):
            continue
        for argument in arguments:
            values = (
                [argument.body, argument.orelse] if isinstance(argument, ast.IfExp) else [argument]
            )
            for value in values:
                while isinstance(value, ast.Subscript):
                    value = value.value
                if isinstance(value, ast.Name) and value.id not in tapes:
                    handed.add(value.id)
    return handed


def returned_terms(body: list[ast.stmt], resolve: Callable[[ast.AST], str | None]) -> list[str]:
    """The functions whose results a function returns as its own, or as
    terms of what it returns (`return self.ll(...)`; `total = w * rec_loss
    + perc_loss` with `rec_loss = self.reconstruction_loss(...)`, then
    `return total, rec_loss`), as `resolve` names them: differentiating the
    function differentiates them."""
    # Statements only (returns and assignments are statements): cheap
    # enough for every function of a project.
    statements = list(iter_statements(body, into_definitions=False))
    returned = [s.value for s in statements if isinstance(s, ast.Return) and s.value is not None]
    if not returned:
        return []
    calls: list[ast.Call] = []
    names: set[str] = set()
    for value in returned:
        found, named = _terms(value, resolve)
        calls += found
        names |= named
    if names:
        calls += [call for _, call in _term_calls(statements, names, resolve)]
    return list(dict.fromkeys(name for call in calls if (name := resolve(call.func))))


def _own_method(index: ModuleIndex, qualname: str, callee: str | None) -> str | None:
    """`self.calc_loss` in a method of `Agent`: the class's method by its
    qualified name (`module.Agent.calc_loss`), which the project facts
    resolve to the method `Agent` defines or inherits; any other callee as
    it is."""
    method = index.own_method_called(qualname, callee or "")
    return callee if method is None else index.qualify(method)


def _differentiated_calls(
    body: list[ast.stmt], differentiated: set[str], resolve: Callable[[ast.AST], str | None]
) -> list[tuple[int, ast.Call]]:
    """The calls in a tape block whose results are terms of what the tape
    differentiates: assigned to it (`loss = w * mse(y, p) + reg`), or to a
    name or container whose value becomes part of it (`l1 = mse(y, p)`;
    `losses['gan'] = adv(d_real, d_fake)` then `loss = tf.add_n(list(
    losses.values()))`), followed back to a fixed point."""
    return _term_calls(body_nodes(body), differentiated, resolve)


def _term_calls(
    statements: Iterable[ast.AST], parts: set[str], resolve: Callable[[ast.AST], str | None]
) -> list[tuple[int, ast.Call]]:
    """`_differentiated_calls` over the given statements of a scope."""
    assignments = []
    for stmt in statements:
        if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and stmt.value is not None:
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            calls, names = _terms(stmt.value, resolve)
            assignments.append((stmt.lineno, _target_names(targets), calls, names))
    parts = set(parts)
    changed = True
    while changed:
        changed = False
        for _, targets, _, names in assignments:
            if targets & parts and not names <= parts:
                parts |= names
                changed = True
    return [
        (lineno, call)
        for lineno, targets, calls, _ in assignments
        if targets & parts
        for call in calls
    ]
