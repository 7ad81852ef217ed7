"""Which objects a call hands `training` to that test it in Python: Keras 3
layers and models.

Keras 3 runs a layer's `call` without AutoGraph, even inside a function
AutoGraph converts, and its own layers branch on the flag in Python
(`if training and self.rate > 0:` in `Dropout`, the same in
`BatchNormalization`, the noise layers and the recurrent layers). A project
layer or model hands the flag on to such layers, or tests it itself, in code
no conversion reaches. So a tensor given as `training` to one of them works
eagerly, where a scalar tensor has a truth value, and raises
`OperatorNotAllowedInGraphError` when traced. A plain function given the
same tensor is converted by AutoGraph (its `if training:` is TFR101's); a
layer that ignores the flag (`Dense`) never tests it; Keras 2 (`tf_keras`)
chose between the two modes with `smart_cond` and took a tensor."""

from __future__ import annotations

import libcst as cst

from tfrewrite.facts.attributes import built_values
from tfrewrite.facts.context import FunctionScope, RuleContext
from tfrewrite.facts.keras_classes import KERAS_CLASS
from tfrewrite.facts.keras_names import keras_path, layer_reads_training
from tfrewrite.facts.models import is_plain_function, project_keras_class
from tfrewrite.facts.names import dotted_name
from tfrewrite.facts.training import value_sources
from tfrewrite.facts.training_effects import depends_on_training, ignores_training, layer_leaf


def training_reader(ctx: RuleContext, call: cst.Call, function: FunctionScope) -> str | None:
    """What `call` (in `function`) calls, in words, when it is a Keras 3
    layer or model that tests `training` in Python ("`self.dropout` (a
    Keras `Dropout` layer)"); None when it is not known to be one: a plain
    function, a layer that ignores the flag, an object nothing shows to be
    a Keras layer, one of the legacy `tf_keras`."""
    found = ctx.class_of(function)
    owner = found[0] if found is not None else None
    if is_super_call(call):
        base = _keras_layer_base(ctx, owner)
        return f"the `call` of Keras' `{base}` (which `{owner}` extends)" if base else None
    callee = dotted_name(call.func)
    if isinstance(call.func, cst.Call):  # `layers.Dropout(0.5)(x, training=t)`
        kind = _built_reader(ctx, call.func)
        return f"a {kind}" if kind else None
    if callee is None or ctx.names.qualified_name(call.func):
        return None
    if callee in ctx.index.functions or is_plain_function(ctx, callee):
        return None
    if ignores_training(ctx, callee, owner) is not None:
        return None
    if callee == "self":
        if owner is not None and ctx.index.derives_from_keras(owner):
            return f"`self` (a Keras model of class `{owner}`)"
        return None
    for source in _built_from(ctx, callee, owner, found[1] if found else None):
        kind = _built_reader(ctx, source)
        if kind:
            return f"`{callee}` (a {kind})"
    head, _, attr = callee.partition(".")
    if head == "self" and attr and ctx.index.held_classes.get(f"{owner}.{attr}") == KERAS_CLASS:
        held = ctx.index.classes[owner or ""].held_objects.get(attr, attr)
        return f"`{callee}` (a Keras layer of class `{held.rpartition('.')[2]}`)"
    return None


def is_super_call(call: cst.Call) -> bool:
    """`super().call(x, training)`: a layer subclass handing its flag to the
    `call` of the Keras layer it extends (second positional parameter)."""
    func = call.func
    return (
        isinstance(func, cst.Attribute)
        and func.attr.value == "call"
        and isinstance(func.value, cst.Call)
        and isinstance(func.value.func, cst.Name)
        and func.value.func.value == "super"
    )


def _keras_layer_base(ctx: RuleContext, owner: str | None) -> str | None:
    """The Keras layer depending on `training` that the class `owner`
    extends directly (`class BatchNormalization(tf.keras.layers.BatchNormalization)`)."""
    info = ctx.index.classes.get(owner or "")
    for base in info.bases if info is not None else ():
        path = keras_path(base) or ""
        leaf = path.rsplit(".", 1)[-1]
        if path.startswith("layers.") and leaf != "Layer" and layer_reads_training(leaf):
            return leaf if not base.startswith("tf_keras.") else None
    return None


def _built_from(
    ctx: RuleContext, callee: str, owner: str | None, cls: cst.ClassDef | None
) -> list[cst.Call]:
    """The calls that build what `callee` holds: what the methods of its
    class assign to a `self.<attr>`, what a name is assigned."""
    head, _, attr = callee.partition(".")
    if head == "self" and attr and "." not in attr:
        values = built_values(cls, attr) if cls is not None else []
    elif "." not in callee:
        values = value_sources(ctx, cst.Name(callee))[1:]
    else:
        values = []
    return [v for v in values if isinstance(v, cst.Call)]


def _built_reader(ctx: RuleContext, source: cst.Call) -> str | None:
    """What `source` builds, in words, when it is a Keras 3 layer or model
    that tests `training`: one of Keras' own layers that depends on it
    (`Dropout`, `BatchNormalization`, a recurrent layer), one of its models
    (`Sequential`, `Model`), a Keras class of the project."""
    qualified = ctx.names.qualified_name(source.func) or ""
    if qualified.startswith("tf_keras."):
        return None
    leaf = layer_leaf(ctx, source)
    if leaf is not None and leaf != "Input" and depends_on_training(ctx, source, leaf):
        return f"Keras `{leaf}` layer"
    if qualified.rsplit(".", 1)[-1] in ("Sequential", "Model") and "keras" in qualified:
        return f"Keras `{qualified.rsplit('.', 1)[-1]}` model"
    if project_keras_class(ctx, source.func) == KERAS_CLASS:
        return f"Keras layer of class `{dotted_name(source.func)}`"
    return None
