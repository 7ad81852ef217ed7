"""Layers a Keras model's step runs without a call context.

Keras hands `training` to every layer a model's `call` uses through its
call context, which `model(x, training=True)` opens. A model's
`train_step`/`test_step`/`predict_step` is not inside one: when it runs its
forward pass by calling one of the model's own methods directly
(`self.forward_pass(x, True)`, `self.call(x, training=True)`), the flag
reaches only what that method passes it to. A held layer the method calls
without `training` then gets none: Keras' `Dropout` and
`BatchNormalization` run in inference mode during training, and a
project layer whose `call` defaults to `training=True` runs its batch
normalization in training mode during evaluation (measured on Keras 3).
The same holds eagerly and traced; it is a training flag the step means to
give and loses.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst

from tfrewrite.facts.bindings import all_params
from tfrewrite.facts.context import FunctionScope, RuleContext
from tfrewrite.facts.keras_classes import KERAS_CLASS
from tfrewrite.facts.keras_names import (
    is_keras_model_class,
    keras_path,
    layer_reads_training,
)
from tfrewrite.facts.models import called_class_kind, passes_training_positionally
from tfrewrite.facts.names import dotted_name
from tfrewrite.facts.training_effects import TrainsByDefault, ignores_training
from tfrewrite.facts.walk import iter_nodes

# The model methods Keras runs outside any call context.
STEP_METHODS = frozenset({"train_step", "test_step", "predict_step"})
TRAINING = "training"


@dataclass(frozen=True)
class UnflaggedLayerCall:
    """`call`, a call of the held layer `layer` in `method`, gives it no
    `training`, though the step `step` calls `method` directly with a
    training value (`entry`, the call in the step)."""

    call: cst.Call
    layer: str
    method: FunctionScope
    step: FunctionScope
    entry: cst.Call


def unflagged_layer_calls(ctx: RuleContext) -> Iterator[UnflaggedLayerCall]:
    """Every held-layer call without `training` in a model method that a
    step of the same model calls directly with a training value."""
    methods = {f.qualname: f for f in ctx.functions if f.class_name is not None}
    for step in methods.values():
        if step.node.name.value not in STEP_METHODS or step.parent is not None:
            continue
        owner = step.class_name or ""
        info = ctx.index.classes.get(owner)
        if info is None or not is_keras_model_class(info.bases):
            continue
        seen: set[str] = set()
        for entry in iter_nodes(step.node.body, into_functions=False):
            method = _own_method(entry, owner, methods)
            if method is None or method.qualname in seen or not _binds_training(entry, method):
                continue
            seen.add(method.qualname)
            for call, layer in _layer_calls_without_flag(ctx, method, owner):
                yield UnflaggedLayerCall(call, layer, method, step, entry)  # type: ignore[arg-type]


def _own_method(
    node: cst.CSTNode, owner: str, methods: dict[str, FunctionScope]
) -> FunctionScope | None:
    """The method of `owner` a call `self.<method>(...)` runs directly."""
    if not isinstance(node, cst.Call) or not isinstance(node.func, cst.Attribute):
        return None
    receiver = node.func.value
    if not (isinstance(receiver, cst.Name) and receiver.value == "self"):
        return None
    method = methods.get(f"{owner}.{node.func.attr.value}")
    if method is None or method.node.name.value.startswith("__"):
        return None
    return method


def _binds_training(call: cst.Call, method: FunctionScope) -> bool:
    """Whether `call` gives `method`'s `training` parameter a value, by
    keyword or by position."""
    names = [p.name.value for p in all_params(method.node.params)]
    if TRAINING not in names:
        return False
    if any(a.keyword is not None and a.keyword.value == TRAINING for a in call.args):
        return True
    positional = [a for a in call.args if a.keyword is None and not a.star]
    return len(positional) > names.index(TRAINING) - 1  # `self` is bound already


def _layer_calls_without_flag(
    ctx: RuleContext, method: FunctionScope, owner: str
) -> Iterator[tuple[cst.Call, str]]:
    """Calls in `method` of a layer the model holds (`self.dropout(x)`, or
    one kept in a list: `self.blocks[i](x)`, `block(x)` for `block` in
    `self.blocks`) that pass no `training`, of a layer whose output may
    depend on it."""
    info = ctx.index.classes.get(owner)
    held = info.held_objects if info is not None else {}
    lists: dict[str, list[cst.Call]] | None = None
    looped: dict[str, str] | None = None
    for node in iter_nodes(method.node.body, into_functions=False):
        if not isinstance(node, cst.Call):
            continue
        if any(a.keyword is not None and "train" in a.keyword.value for a in node.args):
            continue
        if any(a.star for a in node.args):
            continue
        label = dotted_name(node.func) or ""
        head, _, attr = label.partition(".")
        if head == "self" and attr and "." not in attr and attr in held:
            if passes_training_positionally(ctx, node, label, owner):
                continue
            if not _may_depend_on_training(ctx, owner, attr, held[attr]):
                continue
            unchanged = ignores_training(ctx, label, owner)
            if unchanged is not None and not isinstance(unchanged, TrainsByDefault):
                # A layer that trains by default trains here whatever the
                # method's own `training` says: the flag is dropped.
                continue
            yield node, label
            continue
        kept = _list_attribute(node.func, looped if looped is not None else {})
        if kept is None and isinstance(node.func, cst.Name) and looped is None:
            looped = _loop_elements(ctx, method)
            kept = looped.get(node.func.value)
        if kept is None:
            continue
        if lists is None:
            lists = _held_lists(ctx, owner)
        built = lists.get(kept, [])
        positional = [a for a in node.args if a.keyword is None]
        if built and len(positional) < 2 and any(_builds_training_layer(ctx, b) for b in built):
            yield node, ctx.code(node.func)


def _list_attribute(func: cst.BaseExpression, looped: dict[str, str]) -> str | None:
    """`blocks` for `self.blocks[i]`, or for a loop variable over it."""
    if isinstance(func, cst.Subscript):
        label = dotted_name(func.value) or ""
        head, _, attr = label.partition(".")
        return attr if head == "self" and attr and "." not in attr else None
    if isinstance(func, cst.Name):
        return looped.get(func.value)
    return None


def _loop_elements(ctx: RuleContext, method: FunctionScope) -> dict[str, str]:
    """Loop variables of `method` bound to items of a `self` list: `block`
    of `for block in self.blocks`, both of `for fc, drop in
    zip(self.fcs, self.drops)` (pass 1's `FunctionInfo.loop_attributes`,
    less the names that also take other values)."""
    info = ctx.index.functions.get(method.qualname)
    found = info.loop_attributes if info is not None else None
    return {name: attr for name, attr in (found or {}).items() if attr}


def _held_lists(ctx: RuleContext, owner: str) -> dict[str, list[cst.Call]]:
    """`self.<attr>` lists the class fills with objects it builds, in any of
    its methods: `self.blocks = [Block(n) for n in sizes]`, `self.blocks =
    [Dense(4), Dropout(0.5)]`, `self.blocks.append(Dense(4))`."""
    found: dict[str, list[cst.Call]] = {}
    for function in ctx.functions:
        if function.class_name != owner:
            continue
        for node in iter_nodes(function.node.body):
            if isinstance(node, cst.Assign) and len(node.targets) == 1:
                label = dotted_name(node.targets[0].target) or ""
                head, _, attr = label.partition(".")
                value = node.value
                if head != "self" or not attr or "." in attr:
                    continue
                if isinstance(value, cst.ListComp) and isinstance(value.elt, cst.Call):
                    found.setdefault(attr, []).append(value.elt)
                elif isinstance(value, (cst.List, cst.Tuple)):
                    calls = [e.value for e in value.elements if isinstance(e.value, cst.Call)]
                    found.setdefault(attr, []).extend(calls)
            elif (
                isinstance(node, cst.Call)
                and isinstance(node.func, cst.Attribute)
                and node.func.attr.value == "append"
                and node.args
                and isinstance(node.args[0].value, cst.Call)
            ):
                label = dotted_name(node.func.value) or ""
                head, _, attr = label.partition(".")
                if head == "self" and attr and "." not in attr:
                    found.setdefault(attr, []).append(node.args[0].value)  # type: ignore[arg-type]
    return found


def _builds_training_layer(ctx: RuleContext, built: cst.Call) -> bool:
    """Whether the call builds a layer whose output may depend on
    `training`: one of Keras' own but those that ignore it, or a project
    class deriving from Keras that may (`project.KERAS_CLASS`)."""
    qualified = ctx.names.qualified_name(built.func)
    path = keras_path(qualified)
    if path is not None:
        leaf = path.rsplit(".", 1)[-1]
        keywords = (a.keyword.value for a in built.args if a.keyword)
        return path.startswith("layers.") and layer_reads_training(leaf, keywords)
    return called_class_kind(ctx, built.func) == KERAS_CLASS


def _may_depend_on_training(ctx: RuleContext, owner: str, attr: str, built: str) -> bool:
    """Whether `self.<attr>` holds a Keras layer or model whose output may
    depend on `training`: one of Keras' own but those that ignore it
    (`Dense`, `MaxPool2D`, ...), or a project class deriving from one (in
    any module) that may."""
    path = keras_path(built)
    if path is not None:
        leaf = path.rsplit(".", 1)[-1]
        if path.startswith("layers."):
            return layer_reads_training(leaf)
        return leaf in ("Sequential", "Model")
    return ctx.index.held_classes.get(f"{owner}.{attr}") == KERAS_CLASS
