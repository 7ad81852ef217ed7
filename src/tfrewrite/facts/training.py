"""Training-loop facts shared by the TFR3xx rules (and the engine's fix
rounds), on LibCST nodes: `GradientTape` blocks, gradient updates, train
steps, the loops that drive them, and Python side effects. What a tape and
an update *are* is `vocabulary`'s (pass 1 and verify ask the same questions
on `ast`); `tf_function` holds the decorator facts, `name_use` the names a
block reads and writes, `blockers` what keeps a step eager and
`step_plans` the steps that want a decorator.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence

import libcst as cst

from tfrewrite.facts.bindings import iter_assignments, local_bindings, split_target, target_names
from tfrewrite.facts.context import FunctionScope, RuleContext
from tfrewrite.facts.keras_list_properties import VARIABLE_LISTS
from tfrewrite.facts.name_use import mentioned_names
from tfrewrite.facts.names import dotted_name
from tfrewrite.facts.vocabulary import (
    LIST_GROWING_METHODS,
    is_gradient_tape,
    is_gradient_update,
    is_optimizer_update,
)
from tfrewrite.facts.walk import iter_nodes

# Calls that are Python side effects: they run once under tracing, or fail.
SIDE_EFFECT_CALLS = frozenset({"print", "float", "int", "input", "open"})
SIDE_EFFECT_METHODS = frozenset({"numpy", "item", "tolist", *LIST_GROWING_METHODS})
SIDE_EFFECT_MODULES = ("numpy.", "time.", "logging.", "random.", "tqdm.")


# -- gradient tapes -------------------------------------------------------------------


def _tape_items(ctx: RuleContext, node: cst.With) -> Iterator[cst.WithItem]:
    """The items of a `with` that open a `GradientTape`."""
    for item in node.items:
        expr = item.item
        target = expr.func if isinstance(expr, cst.Call) else expr
        if is_gradient_tape(ctx.names.qualified_name(target) or dotted_name(target)):
            yield item


def _bound_name(item: cst.WithItem) -> str:
    """The name `as` binds an item to ("" when none)."""
    if item.asname is not None and isinstance(item.asname.name, cst.Name):
        return item.asname.name.value
    return ""


def tape_name(ctx: RuleContext, node: cst.With) -> str | None:
    """The name a `with tf.GradientTape() as tape:` binds ("" when unnamed),
    or None when the block opens no tape."""
    first = next(_tape_items(ctx, node), None)
    return None if first is None else _bound_name(first)


def tape_names(ctx: RuleContext, node: cst.With) -> set[str]:
    """Every name a `with` binds to a tape it opens (`with tf.GradientTape()
    as gen_tape, tf.GradientTape() as disc_tape:`)."""
    return {name for item in _tape_items(ctx, node) if (name := _bound_name(item))}


def stopped_tapes(ancestors: Sequence[cst.CSTNode]) -> set[str]:
    """The tapes that do not record what runs under `ancestors`: those a
    `with tape.stop_recording():` among them pauses (a gradient penalty
    computed apart from the step's own tapes)."""
    stopped = set()
    for ancestor in ancestors:
        if isinstance(ancestor, cst.With):
            for item in ancestor.items:
                call = item.item
                if (
                    isinstance(call, cst.Call)
                    and isinstance(call.func, cst.Attribute)
                    and call.func.attr.value == "stop_recording"
                    and isinstance(call.func.value, cst.Name)
                ):
                    stopped.add(call.func.value.value)
    return stopped


def tape_blocks(ctx: RuleContext, root: cst.CSTNode) -> Iterator[tuple[cst.With, str]]:
    """Every tape `with` block under `root` (not inside nested definitions)."""
    for node in iter_nodes(root, into_functions=False):
        if isinstance(node, cst.With):
            name = tape_name(ctx, node)
            if name is not None:
                yield node, name


def method_name(call: cst.Call) -> str | None:
    return call.func.attr.value if isinstance(call.func, cst.Attribute) else None


def _positional(call: cst.Call) -> int:
    """How many positional arguments `call` passes (`*args` counts as one, as in `ast`)."""
    return sum(1 for arg in call.args if arg.keyword is None and arg.star != "**")


def _given_variables(call: cst.Call) -> bool:
    """Whether the second positional argument is a model's variable list
    (`sam.first_step(grads, model.trainable_variables)`)."""
    positional = [a.value for a in call.args if a.keyword is None and not a.star]
    second = positional[1] if len(positional) > 1 else None
    return isinstance(second, cst.Attribute) and second.attr.value in VARIABLE_LISTS


def is_optimizer_update_call(call: cst.Call) -> bool:
    """`opt.apply_gradients(...)`, `opt.minimize(...)`, Keras 3's
    `optimizer.apply(grads, variables)` (`vocabulary.is_optimizer_update`)."""
    method = method_name(call)
    receiver = dotted_name(call.func.value) if method else None  # type: ignore[attr-defined]
    return method is not None and is_optimizer_update(
        method, receiver, _positional(call), _given_variables(call)
    )


def is_update_call(call: cst.Call) -> bool:
    """A call that applies gradients: `opt.apply_gradients(...)`,
    `opt.minimize(...)`, Keras 3's `optimizer.apply(grads, variables)`, or a
    hand-written descent step `w.assign_sub(lr * dw)` (`vocabulary.is_gradient_update`)."""
    method = method_name(call)
    if method is None:
        return False
    receiver = dotted_name(call.func.value)  # type: ignore[attr-defined]
    first = call.args[0].value if call.args else None
    first_is_number = None if first is None else _is_number(first)
    return is_gradient_update(
        method, receiver, _positional(call), first_is_number, _given_variables(call)
    )


def _is_number(expr: cst.BaseExpression) -> bool:
    """A number literal (`1`, `0.5`): what a constant `assign_sub` takes."""
    return isinstance(expr, (cst.Integer, cst.Float))


def applies_gradients(root: cst.CSTNode) -> bool:
    return any(
        isinstance(n, cst.Call) and is_update_call(n)
        for n in iter_nodes(root, into_functions=False)
    )


def is_train_step(ctx: RuleContext, function: FunctionScope) -> bool:
    """Opens a tape and applies its gradients, or returns them for its caller
    to apply: a custom train step (`FunctionInfo.trains`)."""
    info = ctx.index.functions.get(function.qualname)
    if info is not None:
        return info.trains
    body = function.node.body
    return any(True for _ in tape_blocks(ctx, body)) and applies_gradients(body)


def is_keras_train_step_override(ctx: RuleContext, function: FunctionScope) -> bool:
    """`Model.train_step`: a method of that name of a Keras model. A class
    whose base cannot be followed counts as a model when a base's name says
    `Model`."""
    if not function.is_method or function.node.name.value not in ("train_step", "test_step"):
        return False
    info = ctx.index.classes.get(function.class_name or "")
    return info is None or any("Model" in base.rsplit(".", 1)[-1] for base in info.bases)


def traced_by_fit(ctx: RuleContext, function: FunctionScope) -> bool:
    """A Keras model's `train_step` that `fit` can call (`train_step(self,
    data)`): Keras traces it. One that takes more (`train_step(self, batch,
    optimizers)`) is the project's own step, called by hand."""
    from tfrewrite.facts.traced_function import fit_calls

    if not is_keras_train_step_override(ctx, function):
        return False
    method = ctx.index.functions.get(function.qualname)
    return method is None or fit_calls(method)


# -- Python side effects ----------------------------------------------------------------


def side_effects(ctx: RuleContext, root: cst.CSTNode) -> Iterator[tuple[cst.CSTNode, str]]:
    """Python side effects under `root`: what runs once at trace time (or
    fails on symbolic tensors) when `root` moves into a `tf.function`."""
    for node in iter_nodes(root, into_functions=False):
        if isinstance(node, (cst.Global, cst.Nonlocal)):
            yield node, "rebinds a name outside the function"
        if not isinstance(node, cst.Call):
            continue
        if isinstance(node.func, cst.Name) and node.func.value in SIDE_EFFECT_CALLS:
            yield node, f"calls Python `{node.func.value}()`"
            continue
        method = method_name(node)
        if method in SIDE_EFFECT_METHODS:
            yield node, f"calls `.{method}()`"
            continue
        qualified = ctx.names.qualified_name(node.func) or ""
        if qualified.startswith(SIDE_EFFECT_MODULES):
            yield node, f"calls `{qualified}`"


# -- loops ------------------------------------------------------------------------------


def calls_to(root: cst.CSTNode, name: str) -> Iterator[cst.Call]:
    for node in iter_nodes(root):
        if isinstance(node, cst.Call) and dotted_name(node.func) in (name, f"self.{name}"):
            yield node


def loops_calling(ctx: RuleContext, name: str) -> list[cst.For | cst.While]:
    """Loops anywhere in the file whose body calls `name`."""
    return [
        loop
        for loop, called in ctx.module_fact(loops_calling, _loops_and_their_calls)
        if name in called or f"self.{name}" in called
    ]


def _loops_and_their_calls(module: cst.Module) -> list[tuple[cst.For | cst.While, set[str]]]:
    """Every loop of the module, with the dotted names its body calls."""
    return [
        (
            node,
            {
                dotted_name(call.func)
                for call in iter_nodes(node.body)
                if isinstance(call, cst.Call)
            },
        )
        for node in iter_nodes(module)
        if isinstance(node, (cst.For, cst.While))
    ]


def _assigned_values(ctx: RuleContext, name: str) -> list[cst.BaseExpression]:
    """What `name` is assigned anywhere in the module: `name = value`, and
    element by element `net, target = Net(), Net()`."""
    return ctx.module_fact(_assigned_values, _assignments_by_name).get(name, [])


def _assignments_by_name(module: cst.Module) -> dict[str, list[cst.BaseExpression]]:
    values: dict[str, list[cst.BaseExpression]] = {}
    for node in iter_nodes(module):
        if not isinstance(node, cst.Assign):
            continue
        for target in node.targets:
            for bound, value, position in split_target(target.target, node.value):
                if value is not None and position is None:
                    values.setdefault(bound, []).append(value)
    return values


def value_sources(
    ctx: RuleContext, expr: cst.BaseExpression, depth: int = 0
) -> list[cst.BaseExpression]:
    """`expr` and what it stands for: the values a name is assigned, the
    values a module function called without arguments returns (two levels)."""
    sources = [expr]
    if depth >= 2:
        return sources
    if isinstance(expr, cst.Name):
        for value in _assigned_values(ctx, expr.value):
            sources += value_sources(ctx, value, depth + 1)
    elif isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name):
        for function in ctx.functions:
            if (
                function.parent is None
                and not function.is_method
                and function.node.name.value == expr.func.value
            ):
                for node in iter_nodes(function.node.body, into_functions=False):
                    if isinstance(node, cst.Return) and node.value is not None:
                        sources += value_sources(ctx, node.value, depth + 1)
    return sources


def _batch_without_drop(expr: cst.BaseExpression) -> bool:
    """A `.batch(n)` (anywhere in a method chain) that keeps the remainder."""
    for node in iter_nodes(expr):
        if isinstance(node, cst.Call) and method_name(node) in ("batch", "padded_batch"):
            drop = next(
                (a.value for a in node.args if a.keyword and a.keyword.value == "drop_remainder"),
                None,
            )
            if drop is None or not (isinstance(drop, cst.Name) and drop.value == "True"):
                return True
    return False


def drops_remainder(ctx: RuleContext, loop: cst.For | cst.While) -> bool:
    """Whether every batch the loop iterates has the same size: its source is
    a dataset batched with `drop_remainder=True` (and none without)."""
    if not isinstance(loop, cst.For):
        return False
    source = loop.iter
    if isinstance(source, cst.Call) and dotted_name(source.func) in ("enumerate", "zip", "iter"):
        candidates = [a.value for a in source.args]
    else:
        candidates = [source]
    dropping = False
    for expr in candidates:
        for value in value_sources(ctx, expr):
            for node in iter_nodes(value):
                if isinstance(node, cst.Call) and method_name(node) in ("batch", "padded_batch"):
                    if _batch_without_drop(node):
                        return False
                    dropping = True
    return dropping


def feeds_short_final_batch(
    ctx: RuleContext, loop: cst.For | cst.While, function: cst.FunctionDef | None = None
) -> bool:
    """Whether the loop may feed a last batch smaller than the others:
    `for x, y in ds.batch(64)` (no `drop_remainder=True`), a name bound to
    such a dataset, `range(0, n, batch_size)` slicing, or a parameter of
    `function` every call site fills with such a dataset (`evaluate(model,
    test_ds)`: `ModuleIndex.short_batch_params`)."""
    if not isinstance(loop, cst.For):
        return False
    if function is not None and _iterates_short_batch_parameter(ctx, loop, function):
        return True
    source = loop.iter
    if isinstance(source, cst.Call) and dotted_name(source.func) in ("enumerate", "zip", "iter"):
        candidates = [a.value for a in source.args]
    else:
        candidates = [source]
    for expr in candidates:
        if any(_batch_without_drop(v) for v in value_sources(ctx, expr)):
            return True
        if isinstance(expr, cst.Call) and dotted_name(expr.func) == "range" and len(expr.args) == 3:
            step = expr.args[2].value
            if not (isinstance(step, cst.Integer) and step.value == "1"):
                return True
    return False


def _iterates_short_batch_parameter(
    ctx: RuleContext, loop: cst.For, function: cst.FunctionDef
) -> bool:
    source = loop.iter
    if isinstance(source, cst.Call) and dotted_name(source.func) in ("enumerate", "tqdm", "iter"):
        source = source.args[0].value if source.args else source
    if not isinstance(source, cst.Name):
        return False
    scope = next((f for f in ctx.functions if f.node is function), None)
    if scope is None:
        return False
    fed = ctx.index.short_batch_params.get(scope.qualname, frozenset())
    return source.value in fed and source.value not in local_bindings(function)


def fresh_name(ctx: RuleContext, base: str, taken: Collection[str] = ()) -> str:
    """`base`, or `base_2`, ...: a name the file spells nowhere
    (`ModuleIndex.used_names`, of the whole file even where a check parsed
    only part of it) and this round's other fixes (`taken`) do not take."""
    used = ctx.index.used_names
    name = base
    suffix = 2
    while name in used or name in taken:
        name = f"{base}_{suffix}"
        suffix += 1
    return name


def trains_what_it_iterates(loop: cst.For) -> bool:
    """The loop picks the variables its tape differentiates from what it
    iterates (`for res in resolutions: layer = layers[res]; ...
    tape.gradient(loss, layer.trainable_variables)`): each iteration steps
    another layer once, a per-layer pass (an optimizer's slot warm-up), not
    a training loop repeating one step over batches. (A gradient with
    respect to the batch itself, `tape.gradient(loss, x)`, is no such pick.)"""
    picked = set(target_names(loop.target))
    variables: set[str] = set()

    def picked_variables(value: cst.BaseExpression) -> bool:
        """`layer.trainable_variables` of a picked object, or a name holding them."""
        if isinstance(value, cst.Attribute) and value.attr.value in VARIABLE_LISTS:
            return bool(picked & set(mentioned_names(value.value)))
        return bool(variables & set(mentioned_names(value)))

    # Names bound in the body from what the loop iterates, in source order.
    for target, value, _ in iter_assignments(loop.body):
        if value is None:
            continue
        if picked_variables(value):
            variables.update(target_names(target))
        elif picked & set(mentioned_names(value)):
            picked.update(target_names(target))
    return any(
        isinstance(node, cst.Call)
        and method_name(node) == "gradient"
        and len(node.args) >= 2
        and picked_variables(node.args[1].value)
        for node in iter_nodes(loop.body, into_functions=False)
    )
