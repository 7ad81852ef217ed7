"""Which Keras models a train step trains, and whether `training=True` changes
what they compute: the facts TFR304 needs to speak only when it matters.

- A step trains the models whose variables it differentiates or updates
  (`tape.gradient(loss, model.trainable_variables)`, `apply_gradients(zip(g,
  model.trainable_variables))`); a frozen teacher or a target network called in
  the same tape is not trained, and must stay in inference mode.
- A call under `if self._call_has_training_arg:` (or any test of a `training`
  flag) is written for models that may not take `training`.
- A model whose class in the project has a `call` without `training`, or that
  is built from Keras layers that all ignore `training` (no dropout, no batch
  normalization, no noise or augmentation), computes the same either way.
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from tfrewrite.facts.context import RuleContext
from tfrewrite.facts.keras_names import keras_path
from tfrewrite.facts.name_use import mentioned_names
from tfrewrite.facts.names import dotted_name
from tfrewrite.facts.training import is_optimizer_update_call, method_name, value_sources
from tfrewrite.facts.walk import iter_nodes

VARIABLE_ATTRIBUTES = frozenset(
    {"trainable_variables", "trainable_weights", "variables", "weights", "vars"}
)
# Keras layers whose output does not depend on `training` (RNN layers only
# without `dropout=`/`recurrent_dropout=`).
_INSENSITIVE_LAYERS = frozenset(
    {
        "Input", "InputLayer", "Dense", "EinsumDense", "Flatten", "Reshape", "Permute",
        "RepeatVector", "Activation", "ReLU", "LeakyReLU", "PReLU", "ELU", "Softmax",
        "Conv1D", "Conv2D", "Conv3D", "Conv1DTranspose", "Conv2DTranspose",
        "Conv3DTranspose", "SeparableConv1D", "SeparableConv2D", "DepthwiseConv1D",
        "DepthwiseConv2D", "MaxPooling1D", "MaxPooling2D", "MaxPooling3D", "MaxPool1D",
        "MaxPool2D", "MaxPool3D", "AveragePooling1D", "AveragePooling2D", "AveragePooling3D",
        "AvgPool1D", "AvgPool2D", "AvgPool3D", "GlobalAveragePooling1D",
        "GlobalAveragePooling2D", "GlobalAveragePooling3D", "GlobalMaxPooling1D",
        "GlobalMaxPooling2D", "GlobalMaxPooling3D", "Embedding", "LayerNormalization",
        "Concatenate", "Add", "Subtract", "Multiply", "Average", "Maximum", "Minimum",
        "ZeroPadding1D", "ZeroPadding2D", "ZeroPadding3D", "UpSampling1D", "UpSampling2D",
        "UpSampling3D", "Cropping1D", "Cropping2D", "Cropping3D", "Rescaling",
        "Normalization", "LSTM", "GRU", "SimpleRNN",
    }
)  # fmt: skip
_RNN_DROPOUT = frozenset({"dropout", "recurrent_dropout"})


def _names_in(ctx: RuleContext, root: cst.CSTNode, expr: cst.CSTNode) -> list[cst.CSTNode]:
    """`expr` and, one level deep, the values of the local names it mentions."""
    found: list[cst.CSTNode] = [expr]
    names = set(mentioned_names(expr))
    for node in iter_nodes(root, into_functions=False):
        if isinstance(node, cst.Assign) and any(
            isinstance(t.target, cst.Name) and t.target.value in names for t in node.targets
        ):
            found.append(node.value)
    return found


def trained_models(ctx: RuleContext, root: cst.CSTNode) -> set[str] | None:
    """Dotted names of the models whose variables `root` differentiates or
    updates; None when the variables are not spelled `model.<variables>`."""
    models: set[str] = set()
    for node in iter_nodes(root, into_functions=False):
        if not isinstance(node, cst.Call):
            continue
        method = method_name(node)
        if method in ("gradient", "compute_gradients"):
            # `tape.gradient(loss, vars)`; `optimizer.compute_gradients(loss,
            # vars, gradient_tape=tape)` (TensorFlow Privacy's optimizers).
            args: Sequence[cst.Arg] = [
                a
                for a in node.args[1:]
                if a.keyword is None or a.keyword.value in ("sources", "var_list")
            ]
        elif is_optimizer_update_call(node):
            args = node.args
        else:
            continue
        for arg in args:
            for expr in _names_in(ctx, root, arg.value):
                for sub in iter_nodes(expr):
                    if isinstance(sub, cst.Attribute) and sub.attr.value in VARIABLE_ATTRIBUTES:
                        owner = dotted_name(sub.value)
                        if owner:
                            models.add(owner)
    return models or None


def guarded_by_training_check(ancestors: Sequence[cst.CSTNode], node: cst.CSTNode) -> bool:
    """Whether `node` sits in a branch of an `if` whose test asks about a
    `training` argument (`if self._call_has_training_arg:`)."""
    for parent in ancestors:
        if isinstance(parent, (cst.If, cst.IfExp)):
            test = parent.test
            words = [
                n.value if isinstance(n, cst.Name) else n.attr.value
                for n in iter_nodes(test)
                if isinstance(n, (cst.Name, cst.Attribute))
            ]
            if any("training" in w.lower() for w in words):
                return True
    return False


def _layer_leaf(ctx: RuleContext, call: cst.Call) -> str | None:
    """`Dense` for a call of `keras.layers.Dense` (under any Keras spelling),
    `Input` for `keras.Input`; None for anything else."""
    path = keras_path(ctx.names.qualified_name(call.func))
    if path == "Input":
        return "Input"
    if path is not None and path.startswith("layers."):
        return path.rsplit(".", 1)[-1]
    return None


def _depends_on_training(call: cst.Call, leaf: str) -> bool:
    """Whether the Keras layer `call` builds (`leaf`: its class name) gives
    other outputs with `training=True`: dropout, normalization, noise, an RNN
    built with `dropout=`."""
    return leaf not in _INSENSITIVE_LAYERS or any(
        a.keyword and a.keyword.value in _RNN_DROPOUT for a in call.args
    )


def _builds_training_layers(ctx: RuleContext, class_name: str) -> bool:
    """Whether a method of the project class builds a Keras layer whose output
    depends on `training` (`Dropout`, `BatchNormalization`, an RNN with
    dropout), or a layer tfrewrite cannot tell (another project class)."""
    prefix = class_name + "."
    for function in ctx.functions:
        if not function.qualname.startswith(prefix):
            continue
        for node in iter_nodes(function.node.body):
            if not isinstance(node, cst.Call):
                continue
            leaf = _layer_leaf(ctx, node)
            if leaf is not None and _depends_on_training(node, leaf):
                return True
            if leaf is None and (dotted_name(node.func) or "") in ctx.index.classes:
                return True
    return False


def ignores_training(ctx: RuleContext, model: str) -> str | None:
    """Why `training=True` changes nothing for `model`, or None when it may:
    a project class whose `call` takes no `training`, or a `Sequential` of
    layers that all ignore it."""
    for source in value_sources(ctx, cst.Name(model)) if "." not in model else []:
        if not isinstance(source, cst.Call):
            continue
        callee = dotted_name(source.func) or ""
        call = next((f for f in ctx.functions if f.qualname == f"{callee}.call"), None)
        if callee in ctx.index.classes and call is not None:
            params = call.node.params
            names = {p.name.value for p in [*params.params, *params.kwonly_params]}
            if (
                "training" not in names
                and not isinstance(params.star_kwarg, cst.Param)
                and not _builds_training_layers(ctx, callee)
            ):
                # Keras hands `training` to the layers a `call` uses through
                # its call context, whether `call` names it or not: only a
                # class holding no dropout or normalization ignores it.
                return f"the `call` of `{callee}` takes no `training` argument"
        qualified = ctx.names.qualified_name(source.func) or ""
        if qualified.rsplit(".", 1)[-1] != "Sequential" or not source.args:
            continue
        layers = source.args[0].value
        if not isinstance(layers, (cst.List, cst.Tuple)):
            continue
        for element in layers.elements:
            layer = element.value
            if not isinstance(layer, cst.Call):
                return None
            leaf = _layer_leaf(ctx, layer)
            if leaf is None or _depends_on_training(layer, leaf):
                return None
        return "its layers ignore `training` (no dropout, batch normalization or noise)"
    return None


# Where Keras' own models (`Sequential`, a functional `Model`) take `training`
# among the positional arguments of a call: `model(inputs, training)`.
KERAS_TRAINING_POSITION = 1


def _project_classes(ctx: RuleContext, model: str, owner: str | None) -> list[str]:
    """The classes of the project `model` may be an instance of: the class
    whose method the call is in for `self`, the class a `self.<attr>` is
    built from (`self.generator = Generator()`), the classes a name is
    assigned from."""
    if model == "self":
        return [owner] if owner in ctx.index.classes else []
    head, _, attr = model.partition(".")
    if head == "self" and attr and "." not in attr:
        info = ctx.index.classes.get(owner or "")
        held = info.held_objects.get(attr, "") if info is not None else ""
        local = held.removeprefix(f"{ctx.index.module}.")  # held names are module-qualified
        return [local] if local in ctx.index.classes else []
    if "." in model:
        return []
    return [
        callee
        for source in value_sources(ctx, cst.Name(model))
        if isinstance(source, cst.Call)
        and (callee := dotted_name(source.func) or "") in ctx.index.classes
    ]


def training_position(ctx: RuleContext, model: str, owner: str | None = None) -> int | None:
    """Where `training` stands among the positional arguments of a call of
    `model` (`self` left out), or None when no positional argument binds to
    it. For a project class with a `call` of its own, its place there
    (`def call(self, inp, tar, training, mask)`: 2), None when that `call`
    takes it by keyword only or not at all. Otherwise, Keras' own place
    (`KERAS_TRAINING_POSITION`): a `Sequential` or functional model takes it
    second, and a model whose class is not known may too (`generator(z,
    True)`). `owner`: the class whose method holds the call, what `self`
    is. A call passing more positional arguments already says whether it
    trains."""
    for callee in _project_classes(ctx, model, owner):
        call = next((f for f in ctx.functions if f.qualname == f"{callee}.call"), None)
        if call is None:
            continue
        params = call.node.params
        names = [p.name.value for p in [*params.posonly_params, *params.params]]
        if "training" in names[1:]:
            return names.index("training") - 1
        if not isinstance(params.star_arg, cst.Param):
            return None
    return KERAS_TRAINING_POSITION


def passes_training_positionally(
    ctx: RuleContext, call: cst.Call, model: str, owner: str | None = None
) -> bool:
    """Whether `call` of `model` may reach `training` with its positional
    arguments (or a `*` argument): adding `training=True` would then raise
    "got multiple values for argument 'training'"."""
    position = training_position(ctx, model, owner)
    if position is None:
        return False
    positional = [a for a in call.args if a.keyword is None and a.star != "**"]
    return len(positional) > position or any(a.star == "*" for a in positional)


def is_plain_function(ctx: RuleContext, name: str) -> bool:
    """`model = lambda x: ...`, a `def model(x)`, or `model = Model()` of a
    project class with no base (a plain Python object with `__call__`): a
    name that holds no Keras model, whatever it is called. It takes no
    `training` argument: adding one would raise a `TypeError`."""
    if "." in name:
        return False
    if any(f.parent is None and f.node.name.value == name for f in ctx.functions):
        return True
    sources = value_sources(ctx, cst.Name(name))[1:]
    return bool(sources) and all(_is_plain_callable(ctx, s) for s in sources)


def _is_plain_callable(ctx: RuleContext, value: cst.BaseExpression) -> bool:
    if isinstance(value, cst.Lambda):
        return True
    if not isinstance(value, cst.Call):
        return False
    info = ctx.index.classes.get(dotted_name(value.func) or "")
    return info is not None and all(base in ("object", "builtins.object") for base in info.bases)
