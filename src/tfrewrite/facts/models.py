"""Which Keras models a train step trains, and whether `training=True` changes
what they compute: the facts TFR304 needs to speak only when it matters.

- A step trains the models whose variables it differentiates or updates
  (`tape.gradient(loss, model.trainable_variables)`, `apply_gradients(zip(g,
  model.trainable_variables))`); a frozen teacher or a target network called in
  the same tape is not trained, and must stay in inference mode. With a tape
  per network, each tape trains what its own `gradient` call names.
- What a step trains is a Keras model whatever its name or the module of its
  class when the module uses it as one (`g.trainable_weights`, `g.summary()`)
  or builds it from a project class deriving from Keras' `Layer` or `Model`
  (`sen_cnn = TextNet(classes=2)`, `TextNet` in `model/net.py`): a
  `tf.Module` or a Sonnet module holds `trainable_variables` too, but its
  `__call__` takes no `training`.
- A call under `if self._call_has_training_arg:` (or any test of a `training`
  flag) is written for models that may not take `training`.
- A model whose project class (in the file, or another module as the project
  facts judge it) has a `call` without `training` and builds no layer that
  reads it (held in `self.critic` too), a Keras layer that ignores it, or a
  model built from Keras layers that all ignore `training` (no dropout, no
  batch normalization, no noise or augmentation), computes the same either
  way.
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from tfrewrite.facts.attributes import assigned_values
from tfrewrite.facts.context import RuleContext
from tfrewrite.facts.keras_classes import (
    KERAS_CLASS,
    KERAS_CLASS_IGNORING_TRAINING,
    KERAS_TRAINING_POSITION_UNKNOWN,
    TRAINING_INSENSITIVE_LAYERS,
    call_training_position,
)
from tfrewrite.facts.keras_names import keras_path
from tfrewrite.facts.name_use import mentioned_names
from tfrewrite.facts.names import dotted_name
from tfrewrite.facts.training import (
    is_optimizer_update_call,
    method_name,
    tape_names,
    value_sources,
)
from tfrewrite.facts.walk import iter_nodes

VARIABLE_ATTRIBUTES = frozenset(
    {"trainable_variables", "trainable_weights", "variables", "weights", "vars"}
)
_RNN_DROPOUT = frozenset({"dropout", "recurrent_dropout"})


def trained_models(
    ctx: RuleContext, root: cst.CSTNode, tape: cst.With | None = None
) -> set[str] | None:
    """Dotted names of the models whose variables `root` differentiates or
    updates; None when the variables are not spelled `model.<variables>`.
    With `tape`, those its own `gradient` calls differentiate: a step with a
    tape per network (SAC's critic tapes and policy tape, a GAN's `d_tape`
    and `g_tape`) trains in each only that tape's networks; the scope's when
    no `gradient` call of the tape names them (`optimizer.minimize(loss,
    variables, tape=tape)`); none for a tape whose gradients are all of
    inputs it watches (a gradient penalty's)."""
    # Kept with `root` itself: a temporary block a rule builds (a step's
    # body) must not share an id, and so an answer, with a later one.
    kept_root, calls = ctx.module_fact(
        (trained_models, id(root)), lambda _: (root, _variable_owners(root))
    )
    if kept_root is not root:
        calls = _variable_owners(root)
    if tape is not None:
        names = tape_names(ctx, tape)
        if names and differentiates_watched_only(root, names):
            return set()  # a gradient penalty's tape: it trains no model
        own = {
            o
            for receiver, owners, opened_by in calls
            if receiver in names and opened_by in (id(tape), None)
            for o in owners
        }
        if own:
            return own
    return {o for _, owners, _ in calls for o in owners} or None


def differentiates_watched_only(body: cst.CSTNode, tapes: set[str] | None = None) -> bool:
    """Whether every gradient the scope takes (with `tapes`, every one those
    tapes take) is with respect to values it watches (`tape.watch(image_var)`,
    then `tape.gradient(loss, image_var)`; `tape.watch(self.z)`, then
    `tape.gradient(loss, [self.z])`): a filter visualization or an
    adversarial example updates its input, and the model it calls stays
    frozen, in inference mode; a gradient penalty's tape differentiates the
    critic with respect to the inputs it mixed, and trains nothing."""
    watched: set[str] = set()
    sources: list[cst.BaseExpression] = []
    # Names bound to a model's variables (`params = self.model.
    # trainable_variables`): watched or not, a gradient with respect to them
    # trains the model.
    variables: set[str] = set()
    for node in iter_nodes(body, into_functions=False):
        if isinstance(node, cst.Assign) and _holds_model_variables(node.value):
            variables |= {name for t in node.targets if (name := dotted_name(t.target)) is not None}
        if not isinstance(node, cst.Call) or not node.args:
            continue
        if tapes is not None and not (
            isinstance(node.func, cst.Attribute) and dotted_name(node.func.value) in tapes
        ):
            continue
        method = method_name(node)
        if method == "watch":
            watched |= {name for name in map(dotted_name, _entries(node.args[0].value)) if name}
        elif method == "gradient" and len(node.args) > 1:
            sources += _entries(node.args[1].value)
    return bool(sources) and all(
        (name := dotted_name(s)) in watched
        and name not in variables
        and not _holds_model_variables(s)
        for s in sources
    )


def _holds_model_variables(value: cst.BaseExpression) -> bool:
    """`model.trainable_variables`, or a sum of such lists (`critic1.
    trainable_variables + critic2.trainable_variables`)."""
    if isinstance(value, cst.BinaryOperation):
        return _holds_model_variables(value.left) and _holds_model_variables(value.right)
    return isinstance(value, cst.Attribute) and value.attr.value in VARIABLE_ATTRIBUTES


def _entries(node: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The values a list or tuple display holds (`[self.z]`), or the value."""
    if isinstance(node, (cst.List, cst.Tuple)):
        return [element.value for element in node.elements]
    return [node]


def _variable_owners(root: cst.CSTNode) -> list[tuple[str | None, set[str], int | None]]:
    """For each gradient or update call under `root` (nested functions left
    out): the tape a `gradient` call is made on (None for the others), the
    owners of the variables it names, directly or through a local name
    assigned them (`variables = model.trainable_variables`), and the id of
    the `with` that last bound the tape's name before it: a step reusing
    `tape` for its critic and then its actor differentiates each in its
    own block."""
    assigned: dict[str, list[cst.BaseExpression]] = {}
    calls: list[tuple[str | None, Sequence[cst.Arg], int | None]] = []
    opened: dict[str, int] = {}  # tape name -> id of the `with` binding it last
    for node in iter_nodes(root, into_functions=False):
        if isinstance(node, cst.With):
            for item in node.items:
                if isinstance(item.asname, cst.AsName) and isinstance(item.asname.name, cst.Name):
                    opened[item.asname.name.value] = id(node)
            continue
        if isinstance(node, cst.Assign):
            for target in node.targets:
                if isinstance(target.target, cst.Name):
                    assigned.setdefault(target.target.value, []).append(node.value)
            continue
        if not isinstance(node, cst.Call):
            continue
        method = method_name(node)
        if method in ("gradient", "compute_gradients"):
            # `tape.gradient(loss, vars)`; `optimizer.compute_gradients(loss,
            # vars, gradient_tape=tape)` (TensorFlow Privacy's optimizers).
            args = [
                a
                for a in node.args[1:]
                if a.keyword is None or a.keyword.value in ("sources", "var_list")
            ]
            tape = dotted_name(node.func.value) if method == "gradient" else None  # type: ignore[attr-defined]
            calls.append((tape, args, opened.get(tape) if tape else None))
        elif is_optimizer_update_call(node):
            calls.append((None, node.args, None))
    result: list[tuple[str | None, set[str], int | None]] = []
    for tape, args, opened_by in calls:
        owners: set[str] = set()
        for arg in args:
            values = [arg.value]
            for name in set(mentioned_names(arg.value)):
                values += assigned.get(name, [])
            for expr in values:
                for sub in iter_nodes(expr):
                    if isinstance(sub, cst.Attribute) and sub.attr.value in VARIABLE_ATTRIBUTES:
                        owner = dotted_name(sub.value)
                        if owner:
                            owners.add(owner)
        result.append((tape, owners, opened_by))
    return result


# Members Keras layers and models have, and a `tf.Module`, a Sonnet module
# or a plain class holding variables has not: those have
# `trainable_variables` and `variables` too, but a `__call__` that takes no
# `training` (Sonnet's modules take `is_training`), and adding
# `training=True` to it raises a `TypeError`. Being differentiated alone
# does not make an object Keras.
KERAS_ONLY_MEMBERS = frozenset(
    {
        "trainable_weights", "non_trainable_weights", "summary", "save_weights",
        "load_weights", "get_weights", "set_weights", "count_params", "get_layer",
    }
)  # fmt: skip


def _keras_member_owners(root: cst.CSTNode) -> set[str]:
    owners: set[str] = set()
    for node in iter_nodes(root, into_functions=False):
        if isinstance(node, cst.Attribute) and node.attr.value in KERAS_ONLY_MEMBERS:
            owner = dotted_name(node.value)
            if owner:
                owners.add(owner)
    return owners


# Layer libraries other than Keras whose models hold their variables under
# Keras' names (TensorLayer's `trainable_weights`, `save_weights`) but take
# another training flag (TensorLayer's `is_train`, Sonnet's `is_training`).
_OTHER_LAYER_LIBRARIES = frozenset({"tensorlayer", "sonnet"})


def keras_objects(ctx: RuleContext, root: cst.CSTNode) -> set[str]:
    """Dotted names that `root` (a scope's body; nested functions left out)
    or the module's top level reads a Keras-only member of
    (`g.trainable_weights`, `g.summary()`, `g.save_weights(path)`): Keras
    layers or models, whatever their names and wherever their classes live.
    None in a module that imports another layer library whose objects have
    such members (`_OTHER_LAYER_LIBRARIES`): an object of a class the module
    does not define may be one of those."""
    imported = {name.partition(".")[0] for name in ctx.index.imports.values()}
    if imported & _OTHER_LAYER_LIBRARIES:
        return set()
    top = ctx.module_fact(keras_objects, _keras_member_owners)
    kept_root, owners = ctx.module_fact(
        (keras_objects, id(root)), lambda _: (root, _keras_member_owners(root))
    )
    return top | (owners if kept_root is root else _keras_member_owners(root))


def trained_keras_objects(
    ctx: RuleContext, root: cst.CSTNode, trained: set[str] | None, keras_step: bool
) -> set[str] | None:
    """The objects a step trains (`trained_models` of `root`) that are
    Keras layers or models whatever their names: all of them in a Keras
    `train_step` (`keras_step`: what it differentiates is its own model or
    a layer of it), else those `keras_objects` shows to be Keras and those
    built from a Keras class of the project that may read `training`
    (`project_keras_objects`: one that ignores it is evidence of nothing
    worth a finding). The step trains them: `training=True` matters to them
    (`tape.gradient(loss, g.trainable_weights)` makes `g(x)` a model call
    even as `g`)."""
    if trained is None:
        return None
    if keras_step:
        return trained
    built = {name for name, kind in project_keras_objects(ctx).items() if kind == KERAS_CLASS}
    return trained & (keras_objects(ctx, root) | built)


def called_class_kind(ctx: RuleContext, callee: cst.BaseExpression) -> str | None:
    """What the project facts say of the class a call of `callee` builds,
    when the project defines it, in this module or another
    (`ModuleIndex.called_classes`: "python", "framework", or a Keras kind);
    None for anything else. Pass 1 names a class of this module
    module-qualified."""
    return next(
        (
            ctx.index.called_classes[n]
            for n in ctx.pass1_names(callee)
            if n in ctx.index.called_classes
        ),
        None,
    )


def project_keras_class(ctx: RuleContext, callee: cst.BaseExpression) -> str | None:
    """What the project knows of the class a call of `callee` builds when
    it is a Keras layer or model the project defines, in this module or
    another (`from model.net import TextNet`; `project.KERAS_CLASS` or
    `KERAS_CLASS_IGNORING_TRAINING`, through its project bases); None for
    anything else."""
    kind = called_class_kind(ctx, callee)
    return kind if kind in (KERAS_CLASS, KERAS_CLASS_IGNORING_TRAINING) else None


def project_keras_objects(ctx: RuleContext) -> dict[str, str]:
    """Dotted names the module assigns an object of a Keras class of the
    project (`sen_cnn = TextNet(classes=2)`, `self.critic = Critic()`),
    with the class's kind (`project_keras_class`). Its base proves it a
    Keras layer or model, whatever it is called and wherever its class
    lives, in a module importing Sonnet or TensorLayer too: its calls take
    `training`."""
    return ctx.module_fact(
        project_keras_objects, lambda module: _project_keras_objects(ctx, module)
    )


def _project_keras_objects(ctx: RuleContext, module: cst.Module) -> dict[str, str]:
    found: dict[str, str] = {}
    for node in iter_nodes(module):
        if not (isinstance(node, cst.Assign) and isinstance(node.value, cst.Call)):
            continue
        kind = project_keras_class(ctx, node.value.func)
        if kind is None:
            continue
        for target in node.targets:
            name = dotted_name(target.target)
            if name:
                found[name] = kind
    return found


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
    both modes)."""
    if leaf == "Lambda" and call.args and isinstance(call.args[0].value, cst.Lambda):
        return not all(
            (ctx.names.qualified_name(node.func) or "").startswith("tensorflow.")
            and "keras" not in (ctx.names.qualified_name(node.func) or "")
            for node in iter_nodes(call.args[0].value.body)
            if isinstance(node, cst.Call)
        )
    return leaf not in TRAINING_INSENSITIVE_LAYERS or any(
        a.keyword and a.keyword.value in _RNN_DROPOUT for a in call.args
    )


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
        for callee in _project_classes(ctx, model, owner):
            reason = _class_ignores_training(ctx, callee) or _trains_by_default(ctx, callee)
            if reason is not None:
                return reason
        return _held_class_ignores_training(ctx, model, owner) or _assigned_ignoring_training(
            ctx, model, owner
        )
    for source in value_sources(ctx, cst.Name(model)):
        if isinstance(source, cst.Call):
            reason = _built_ignoring_training(ctx, source)
            if reason is not None:
                return reason
    return None


def _built_ignoring_training(ctx: RuleContext, source: cst.Call) -> str | None:
    """Why the object `source` builds ignores `training`, or None: a class
    whose `call` takes none, a Keras layer that ignores it, a `Sequential`
    of such layers."""
    callee = dotted_name(source.func) or ""
    reason = (
        _class_ignores_training(ctx, callee)
        or _trains_by_default(ctx, callee)
        or _no_keras_call(ctx, source, callee)
    )
    if reason is not None:
        return reason
    if (
        callee not in ctx.index.classes
        and project_keras_class(ctx, source.func) == KERAS_CLASS_IGNORING_TRAINING
    ):
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


def _assigned_ignoring_training(ctx: RuleContext, model: str, owner: str | None) -> str | None:
    """Why `training=True` changes nothing for `self.<attr>` in a method of
    `owner`, a class of this file, when every value its methods assign
    there is built ignoring it (`self.probe = keras.Sequential([Dense(10)])`)."""
    head, _, attr = model.partition(".")
    cls = ctx.class_node(owner or "")
    if head != "self" or not attr or "." in attr or cls is None:
        return None
    values = assigned_values(cls, attr)
    if not values or not all(isinstance(v, cst.Call) for v in values):
        return None
    reasons = [_built_ignoring_training(ctx, v) for v in values]  # type: ignore[arg-type]
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
    return _no_training_reason(held.rpartition(".")[2])


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
            return f"the `{method}` of `{name}` defaults `training` to True"
        return None
    return None


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
    call = _own_method(ctx, callee, "__call__")
    if call is None or _training_parameter(call)[0]:
        return None
    return f"`{name}` is no Keras layer or model, and its `__call__` takes no `training`"


def _no_training_reason(class_name: str) -> str:
    return f"the `call` of `{class_name}` takes no `training` argument"


_MAX_CLASS_DEPTH = 4  # project layers inside project layers followed this deep


def _class_ignores_training(ctx: RuleContext, callee: str, depth: int = 0) -> str | None:
    """Why a model of the project class `callee` computes the same with
    `training=True`: its `call` takes no `training` and it builds no layer
    that depends on it; or, a `Sequential` of its own without a `call`,
    the layers it builds ignore it. None when it may, or when the class is
    not this file's."""
    if callee not in ctx.index.classes:
        return None
    call = _own_method(ctx, callee, "call")
    if call is None:
        if ctx.index.derives_from_keras(callee, {"Sequential"}) and not _builds_training_layers(
            ctx, callee, depth
        ):
            return f"the layers `{callee}` stacks ignore `training` (no dropout or normalization)"
        return None
    if not _training_parameter(call)[0] and not _builds_training_layers(ctx, callee, depth):
        # Keras hands `training` to the layers a `call` uses through its
        # call context, whether `call` names it or not: only a class
        # holding no dropout or normalization ignores it.
        return _no_training_reason(callee)
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
        local = ctx.index.local(held)  # held names are module-qualified
        return [local] if local in ctx.index.classes else []
    if "." in model:
        return []
    return [
        callee
        for source in value_sources(ctx, cst.Name(model))
        if isinstance(source, cst.Call)
        and (callee := dotted_name(source.func) or "") in ctx.index.classes
    ]


def _classes_of_other_modules(ctx: RuleContext, model: str) -> list[str]:
    """The Keras classes of other modules a plain name is assigned objects
    of (`net = Net(...)` with `Net` imported), whose `training` place the
    project facts know (`ModuleIndex.class_training_positions`)."""
    known = ctx.index.class_training_positions
    if not known or "." in model:
        return []
    found = []
    for source in value_sources(ctx, cst.Name(model))[1:]:  # the name itself first
        if not isinstance(source, cst.Call):
            return []
        names = [n for n in ctx.pass1_names(source.func) if n in known]
        if not names:
            return []
        found.append(names[0])
    return found


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
    elsewhere = _classes_of_other_modules(ctx, model)
    if elsewhere:
        positions = {ctx.index.class_training_positions[c] for c in elsewhere}
        if len(positions) == 1:
            return positions.pop()
    for callee in _project_classes(ctx, model, owner):
        call = ctx.index.functions.get(f"{callee}.call")
        if call is None:
            continue
        position = call_training_position(call)
        if position != KERAS_TRAINING_POSITION_UNKNOWN:
            return position
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
    project class with no base, in any module (a plain Python object with
    `__call__`): a name that holds no Keras model, whatever it is called.
    It takes no `training` argument: adding one would raise a `TypeError`."""
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
    if info is None:  # a class of another module: what the project facts say of it
        return called_class_kind(ctx, value.func) == "python"
    return all(base in ("object", "builtins.object") for base in info.bases)
