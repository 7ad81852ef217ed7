"""Whether `training=True` changes what a layer or model computes: Keras'
own layers that depend on the flag (`Dropout`, `BatchNormalization`, a
recurrent layer with `dropout=`), project classes whose `call` takes it or
holds such layers, the models a project function builds, and why a model
ignores it. TFR304 reports a model called in a tape without the flag only
where passing it could change something; TFR110 asks which callees test a
tensor flag in Python."""

from __future__ import annotations

import libcst as cst

from tfrewrite.facts.attributes import built_values
from tfrewrite.facts.context import RuleContext
from tfrewrite.facts.keras_classes import KERAS_CLASS, KERAS_CLASS_IGNORING_TRAINING
from tfrewrite.facts.keras_names import (
    WRAPPER_LAYERS,
    keras_path,
    lambda_reads_training,
    layer_reads_training,
    loads_saved_model,
)
from tfrewrite.facts.models import called_class_kind, project_classes_of, project_keras_class
from tfrewrite.facts.names import dotted_name
from tfrewrite.facts.training import value_sources
from tfrewrite.facts.walk import iter_nodes


def layer_leaf(ctx: RuleContext, call: cst.Call) -> str | None:
    """`Dense` for a call of `keras.layers.Dense` (under any Keras spelling),
    `Input` for `keras.Input`; None for anything else."""
    path = keras_path(ctx.names.qualified_name(call.func))
    if path == "Input":
        return "Input"
    if path is not None and path.startswith("layers."):
        return path.rsplit(".", 1)[-1]
    return None


def depends_on_training(ctx: RuleContext, call: cst.Call, leaf: str) -> bool:
    """Whether the Keras layer `call` builds (`leaf`: its class name) gives
    other outputs with `training=True`: dropout, normalization, noise, an RNN
    built with `dropout=`. A `Lambda` of a `lambda` that calls TensorFlow
    ops alone does not: an op takes no `training` (`tf.nn.dropout` drops in
    both modes). A wrapper (`Bidirectional(GRU(8))`) does as the layer it
    wraps."""
    if leaf in WRAPPER_LAYERS:
        wrapped = next(
            (a.value for a in call.args if a.keyword is None or a.keyword.value == "layer"), None
        )
        if not isinstance(wrapped, cst.Call):
            return True
        inner = layer_leaf(ctx, wrapped)
        return inner is None or depends_on_training(ctx, wrapped, inner)
    if leaf == "Lambda" and call.args and isinstance(call.args[0].value, cst.Lambda):
        return lambda_reads_training(
            ctx.names.qualified_name(node.func)
            for node in iter_nodes(call.args[0].value.body)
            if isinstance(node, cst.Call)
        )
    return layer_reads_training(leaf, (a.keyword.value for a in call.args if a.keyword))


def _builds_training_layers(ctx: RuleContext, class_name: str, depth: int = 0) -> bool:
    """Whether a method of the project class builds a Keras layer whose output
    depends on `training` (`Dropout`, `BatchNormalization`, an RNN with
    dropout), or a layer tfrewrite cannot tell (another project class, in
    this module or another, that the project facts do not show ignores
    `training`). A Keras class of this file that ignores `training` itself
    does not count, nor does a class of this file that is no Keras layer."""
    prefix = class_name + "."
    for function in ctx.functions:
        if not function.qualname.startswith(prefix):
            continue
        for node in iter_nodes(function.node.body):
            if not isinstance(node, cst.Call):
                continue
            leaf = layer_leaf(ctx, node)
            if leaf is not None and depends_on_training(ctx, node, leaf):
                return True
            built = dotted_name(node.func) or ""
            if leaf is None and ctx.index.model_builders.get(built, False):
                return True  # a project function building a model that reads it
            if leaf is None and built in ctx.index.classes:
                if built == class_name or _project_layer_may_use_training(ctx, built, depth):
                    return True
                continue
            if leaf is None and project_keras_class(ctx, node.func) == KERAS_CLASS:
                # A layer or model of another module (`self.encoder =
                # Encoder()`): its own layers may depend on `training`.
                return True
    return False


def _project_layer_may_use_training(ctx: RuleContext, built: str, depth: int) -> bool:
    """A Keras class of this file whose objects may compute otherwise with
    `training=True` (one that ignores it, followed so deep, does not; nor
    does a class that is no layer: a helper object)."""
    if not ctx.index.derives_from_keras(built):
        return False
    return depth >= _MAX_CLASS_DEPTH or _class_ignores_training(ctx, built, depth + 1) is None


def ignores_training(ctx: RuleContext, model: str, owner: str | None = None) -> str | None:
    """Why `training=True` changes nothing for `model`, or None when it may:
    a project class whose `call` takes no `training` (the class of `self`
    or of a `self.<attr>` it holds, in a method of `owner`, too; a class
    of another module as the project facts judge it, from pass 1's names:
    `project.KERAS_CLASS_IGNORING_TRAINING`), a Keras layer that ignores
    it (a linear probe's `Dense`), or a `Sequential` of such layers; a
    project class whose `call` defaults `training` to True (it trains
    already), or that is no Keras layer or model at all."""
    if "." in model or model == "self":
        reads = [m[model] for m in ctx.index.parameter_models.values() if model in m]
        if reads and not any(reads):
            return f"the model `{model}` holds is built of layers that ignore `training`"
        for callee in project_classes_of(ctx, model, owner):
            reason = _class_ignores_training(ctx, callee) or _trains_by_default(ctx, callee)
            if reason is not None:
                return reason
        return _held_class_ignores_training(ctx, model, owner) or _assigned_ignoring_training(
            ctx, model, owner
        )
    # Every object it may hold must ignore it: `ae = Small(args) if flat
    # else Normed(args)` trains the batch normalization of the second.
    reasons = [
        _built_ignoring_training(ctx, source)
        for source in value_sources(ctx, cst.Name(model))
        if isinstance(source, cst.Call)
    ]
    return reasons[0] if reasons and all(reasons) else None


def training_keyword_refused(ctx: RuleContext, model: str, owner: str | None = None) -> str | None:
    """Why `model(..., training=True)` would raise: its class (of this file)
    overrides `__call__` without a `training` parameter or `**kwargs`, so
    calling its objects runs that method, not Keras' `__call__`. None when
    the keyword can be passed, or the class is not known."""
    for callee in project_classes_of(ctx, model, owner):
        if _own_call_without_training(ctx, callee):
            return f"`{callee.rpartition('.')[2]}.__call__` takes no `training` argument"
    return None


def _own_call_without_training(ctx: RuleContext, callee: str) -> bool:
    """Whether the project class `callee` (of this file) defines a
    `__call__` that takes no `training` (by name or `**kwargs`): calling
    its objects runs that method, not Keras' `__call__`."""
    own_call = _own_method(ctx, callee, "__call__")
    return own_call is not None and not _training_parameter(own_call)[0]


def _built_ignoring_training(
    ctx: RuleContext, source: cst.Call, owner: str | None = None
) -> str | None:
    """Why the object `source` builds ignores `training`, or None: a class
    whose `call` takes none, a Keras layer that ignores it, a `Sequential`
    of such layers, a builder's model of such layers (`self.make_critic()`
    in a method of `owner`)."""
    callee = dotted_name(source.func) or ""
    reason = (
        _class_ignores_training(ctx, callee)
        or _trains_by_default(ctx, callee)
        or _trains_by_default_elsewhere(ctx, source.func)
        or _no_keras_call(ctx, source, callee)
        or _built_by_builder_ignoring_training(ctx, source, owner)
    )
    if reason is not None:
        return reason
    if project_keras_class(ctx, source.func) == KERAS_CLASS_IGNORING_TRAINING:
        return _no_training_reason(callee.rpartition(".")[2])
    leaf = layer_leaf(ctx, source)
    if leaf is not None and leaf != "Input" and not depends_on_training(ctx, source, leaf):
        return f"it is a `{leaf}` layer, which ignores `training`"
    qualified = ctx.names.qualified_name(source.func) or ""
    if qualified.rsplit(".", 1)[-1] != "Sequential" or not source.args:
        return None
    layers = source.args[0].value
    if not isinstance(layers, (cst.List, cst.Tuple)):
        return None
    for element in layers.elements:
        layer = element.value
        if not isinstance(layer, cst.Call):
            return None
        leaf = layer_leaf(ctx, layer)
        if leaf is None or depends_on_training(ctx, layer, leaf):
            return None
    return "its layers ignore `training` (no dropout, batch normalization or noise)"


def _built_by_builder_ignoring_training(
    ctx: RuleContext, source: cst.Call, owner: str | None = None
) -> str | None:
    """Why the model a project function builds ignores `training`: none of
    the layers it builds depends on it (`ModuleIndex.model_builders`)."""
    builders = ctx.index.model_builders
    names = ctx.pass1_names(source.func, owner)
    reads = next((builders[n] for n in names if n in builders), True)
    if reads:
        return None
    return (
        f"the model `{dotted_name(source.func)}` builds holds no layer that depends on `training`"
    )


def _assigned_ignoring_training(ctx: RuleContext, model: str, owner: str | None) -> str | None:
    """Why `training=True` changes nothing for `self.<attr>` in a method of
    `owner`, a class of this file, when every value its methods assign
    there is built ignoring it (`self.probe = keras.Sequential([Dense(10)])`)."""
    head, _, attr = model.partition(".")
    cls = ctx.class_node(owner or "")
    if head != "self" or not attr or "." in attr or cls is None:
        return None
    values = built_values(cls, attr)
    calls = [v for v in values if isinstance(v, cst.Call)]
    if not values or len(calls) < len(values):
        return None
    # A model loaded back (`self.critic = load_model(path)` in a `load`
    # method) is one the project built and saved: judged by the others.
    built = [c for c in calls if not loads_saved_model(ctx.names.qualified_name(c.func))]
    reasons = [_built_ignoring_training(ctx, c, owner) for c in built or calls]
    return reasons[0] if all(r is not None for r in reasons) else None


def _held_class_ignores_training(ctx: RuleContext, model: str, owner: str | None) -> str | None:
    """Why `training=True` changes nothing for `self.<attr>` in a method of
    `owner` when the object held there is of a Keras class of another
    module that ignores it (`self.critic = Critic()`, `from nets import
    Critic`), as the project facts say (`project.KERAS_CLASS_IGNORING_TRAINING`)."""
    head, _, attr = model.partition(".")
    info = ctx.index.classes.get(owner or "")
    if head != "self" or not attr or "." in attr or info is None:
        return None
    held = info.held_objects.get(attr, "")
    if ctx.index.local(held) in ctx.index.classes:
        return None  # a class of this file: `_class_ignores_training` reads it
    if ctx.index.held_classes.get(f"{owner}.{attr}") != KERAS_CLASS_IGNORING_TRAINING:
        return None
    if held:
        return _no_training_reason(held.rpartition(".")[2])
    # `self.model = model`: what every site building `owner` passes there.
    return (
        f"the models the project builds `{owner}` with keep `self.{attr}` of classes that "
        "do not read `training`"
    )


def _own_method(ctx: RuleContext, callee: str, method: str) -> cst.FunctionDef | None:
    """The method `method` the project class `callee` of this file defines."""
    found = next((f for f in ctx.functions if f.qualname == f"{callee}.{method}"), None)
    return found.node if found is not None else None


def _training_parameter(function: cst.FunctionDef) -> tuple[bool, cst.Param | None]:
    """Whether `function` takes a `training` argument (by name, or through
    `**kwargs`), and its parameter when it names one."""
    params = function.params
    for param in [*params.posonly_params, *params.params, *params.kwonly_params]:
        if param.name.value == "training":
            return True, param
    return isinstance(params.star_kwarg, cst.Param), None


def _reads_training(function: cst.FunctionDef) -> bool:
    """Whether `function` takes a `training` argument (by name, or through
    `**kwargs`) and its body reads it: `call(self, x, training=None)` that
    never names `training` again computes the same either way."""
    takes, param = _training_parameter(function)
    if not takes:
        return False
    star = function.params.star_kwarg
    name = param.name.value if param is not None else star.name.value  # type: ignore[union-attr]
    return any(
        isinstance(node, cst.Name) and node.value == name for node in iter_nodes(function.body)
    )


def names_training(function: cst.FunctionDef) -> bool:
    """Whether `function` takes a `training` parameter by that name."""
    return _training_parameter(function)[1] is not None


class TrainsByDefault(str):
    """A reason `ignores_training` gives for a model whose `call` defaults
    `training` to True: it trains without the flag, unless a caller that
    takes a `training` flag of its own drops it there (`forward(self, x,
    training)` calling `self.block(x)`: the block trains in evaluation too)."""


def _trains_by_default(ctx: RuleContext, callee: str) -> str | None:
    """Why a model of the project class `callee` (of this file) trains
    when called without `training`: its `call` (or `__call__`) defaults
    `training` to True, which Keras uses when neither the caller nor a call
    context says otherwise."""
    for method in ("call", "__call__"):
        function = _own_method(ctx, callee, method)
        if function is None:
            continue
        _, param = _training_parameter(function)
        default = param.default if param is not None else None
        if isinstance(default, cst.Name) and default.value == "True":
            name = callee.rpartition(".")[2]
            return TrainsByDefault(f"the `{method}` of `{name}` defaults `training` to True")
        return None
    return None


def _trains_by_default_elsewhere(ctx: RuleContext, func: cst.BaseExpression) -> str | None:
    """`_trains_by_default` of a Keras class another module of the project
    defines, as the project facts judge it (`classes_training_by_default`)."""
    if not any(n in ctx.index.classes_training_by_default for n in ctx.pass1_names(func)):
        return None
    name = (dotted_name(func) or "").rpartition(".")[2]
    return TrainsByDefault(f"the `call` of `{name}` defaults `training` to True")


def _no_keras_call(ctx: RuleContext, source: cst.Call, callee: str) -> str | None:
    """Why an object of the project class `source` builds is no Keras layer
    or model, whose calls `training` could change: plain Python, or a class
    of this file on another framework base (`tf.Module`) whose own
    `__call__` takes no `training`."""
    kind = called_class_kind(ctx, source.func)
    name = callee.rpartition(".")[2]
    if kind == "python":
        return f"`{name}` is plain Python, no Keras layer or model"
    if kind != "framework" or callee not in ctx.index.classes:
        return None
    if not _own_call_without_training(ctx, callee):
        return None
    return f"`{name}` is no Keras layer or model, and its `__call__` takes no `training`"


def _no_training_reason(class_name: str) -> str:
    return f"`{class_name}` and the layers it builds do not read `training`"


_MAX_CLASS_DEPTH = 4  # project layers inside project layers followed this deep


def _class_ignores_training(ctx: RuleContext, callee: str, depth: int = 0) -> str | None:
    """Why a model of the project class `callee` computes the same with
    `training=True`: its `call` takes no `training` and it builds no layer
    that depends on it; or, a `Sequential` of its own without a `call`,
    the layers it builds ignore it. None when it may, or when the class is
    not this file's."""
    if callee not in ctx.index.classes:
        return None
    own_call = _own_method(ctx, callee, "__call__")
    if own_call is not None and not names_training(own_call):
        # Calling its objects runs this `__call__`, not Keras' (which would
        # hand `training` on through the call context): it takes none (or
        # swallows it in `**kwargs`), and its layers run as their own
        # defaults say.
        if _builds_training_layers(ctx, callee, depth):
            return None
        name = callee.rpartition(".")[2]
        return f"`{name}.__call__` uses no `training`, and its layers ignore it"
    call = _own_method(ctx, callee, "call")
    if call is None:
        if ctx.index.derives_from_keras(callee, {"Sequential"}) and not _builds_training_layers(
            ctx, callee, depth
        ):
            return f"the layers `{callee}` stacks ignore `training` (no dropout or normalization)"
        return None
    if not _reads_training(call) and not _builds_training_layers(ctx, callee, depth):
        # Keras hands `training` to the layers a `call` uses through its
        # call context, whether `call` names it or not: only a class
        # holding no dropout or normalization, whose `call` does nothing
        # with a `training` of its own, ignores it.
        return _no_training_reason(callee)
    return None
