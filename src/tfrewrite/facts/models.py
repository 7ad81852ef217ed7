"""Which Keras models a train step trains, and where a call gives them
`training`: the facts TFR304 needs to speak only when it matters (whether
the flag changes what a model computes is `training_effects`).

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
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from tfrewrite.facts.context import RuleContext
from tfrewrite.facts.keras_classes import (
    KERAS_CLASS,
    KERAS_CLASS_IGNORING_TRAINING,
    KERAS_TRAINING_POSITION_UNKNOWN,
    call_training_position,
)
from tfrewrite.facts.name_use import mentioned_names
from tfrewrite.facts.named_calls import calls_by_name
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


def input_variables(ctx: RuleContext, root: cst.CSTNode) -> frozenset[str]:
    """Parameters of the function `root` that hold a `tf.Variable` the code
    made for its input: every call of it in this file fills the parameter
    with a name bound at module level to `tf.Variable(...)` (`image =
    tf.Variable(content)`, then `train_step(image)` in a style transfer).
    A gradient with respect to one updates that input; the model computing
    from it stays frozen. (A variable the step reads itself, `W` of a
    hand-written model, is a weight.)"""
    if not isinstance(root, cst.FunctionDef):
        return frozenset()
    made = ctx.module_fact(_made_variables, lambda module: _made_variables(ctx, module))
    calls = [call for call, _ in calls_by_name(ctx).get(root.name.value, ())]
    found: set[str] = set()
    for position, param in enumerate(p.name.value for p in root.params.params):
        given = [_positional(call, position) for call in calls]
        if given and all(isinstance(g, cst.Name) and g.value in made for g in given):
            found.add(param)
    return frozenset(found)


def _made_variables(ctx: RuleContext, module: cst.Module) -> set[str]:
    """Names the module's own statements bind to `tf.Variable(...)`."""
    names: set[str] = set()
    for node in iter_nodes(module, into_functions=False):
        if (
            isinstance(node, cst.Assign)
            and isinstance(node.value, cst.Call)
            and ctx.names.qualified_name(node.value.func) == "tensorflow.Variable"
        ):
            names |= {t.target.value for t in node.targets if isinstance(t.target, cst.Name)}
    return names


def _positional(call: cst.Call, position: int) -> cst.BaseExpression | None:
    """The argument a call passes at `position`, when it passes it so."""
    positional = [a for a in call.args if a.keyword is None and not a.star]
    return positional[position].value if position < len(positional) else None


def differentiates_watched_only(
    body: cst.CSTNode, tapes: set[str] | None = None, inputs: frozenset[str] = frozenset()
) -> bool:
    """Whether every gradient the scope takes (with `tapes`, every one those
    tapes take) is with respect to values it watches (`tape.watch(image_var)`,
    then `tape.gradient(loss, image_var)`; `tape.watch(self.z)`, then
    `tape.gradient(loss, [self.z])`): a filter visualization or an
    adversarial example updates its input, and the model it calls stays
    frozen, in inference mode; a gradient penalty's tape differentiates the
    critic with respect to the inputs it mixed, and trains nothing.
    `inputs`: variables the code made for its inputs (`input_variables`),
    which a tape watches without being told."""
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
        ((name := dotted_name(s)) in watched or name in inputs)
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


# Where Keras' own models (`Sequential`, a functional `Model`) take `training`
# among the positional arguments of a call: `model(inputs, training)`.
KERAS_TRAINING_POSITION = 1


def project_classes_of(ctx: RuleContext, model: str, owner: str | None) -> list[str]:
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


def _held_builder(ctx: RuleContext, model: str, owner: str | None) -> str:
    """What builds the object `self.<attr>` holds, in a method of `owner`
    (`ClassInfo.held_objects`: a class or a builder), "" when not known."""
    head, _, attr = model.partition(".")
    info = ctx.index.classes.get(owner or "")
    if head != "self" or not attr or "." in attr or info is None:
        return ""
    return info.held_objects.get(attr, "")


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
    built = _held_builder(ctx, model, owner)
    if built in ctx.index.class_training_positions:
        return ctx.index.class_training_positions[built]
    for callee in project_classes_of(ctx, model, owner):
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
