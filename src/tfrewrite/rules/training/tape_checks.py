"""TFR304: a model called in a train step's `GradientTape` block without
`training=True`."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial

import libcst as cst

from tfrewrite.facts.blockers import line_name_of
from tfrewrite.facts.call_context import TRAINING, UnflaggedLayerCall, unflagged_layer_calls
from tfrewrite.facts.context import FunctionScope, RuleContext
from tfrewrite.facts.keras_names import builds_keras_model, is_keras_model_class
from tfrewrite.facts.models import (
    differentiates_watched_only,
    guarded_by_training_check,
    input_variables,
    is_plain_function,
    passes_training_positionally,
    trained_keras_objects,
    trained_models,
)
from tfrewrite.facts.names import dotted_name
from tfrewrite.facts.tape_callers import TapeEntry, tape_entries
from tfrewrite.facts.training import (
    applies_gradients,
    is_keras_train_step_override,
    stopped_tapes,
    tape_name,
    tape_names,
)
from tfrewrite.facts.training_effects import (
    TrainsByDefault,
    ignores_training,
    names_training,
    training_keyword_refused,
)
from tfrewrite.facts.walk import iter_nodes, iter_with_ancestors
from tfrewrite.findings import Applicability
from tfrewrite.rewrite.fixes import CstFix, NodeEdit, Violation
from tfrewrite.rules.base import Invalid, Rule, Valid
from tfrewrite.rules.training.held_model_calls import held_model_calls
from tfrewrite.rules.training.tape_scopes import scope_body, scopes
from tfrewrite.workspace.line_names import line_name

# Names people give models; used only when no assignment says what the name is.
_MODEL_NAME = re.compile(
    r"^(model|net|network|generator|discriminator|encoder|decoder|classifier)$|_model$|^model_"
)


def _train_step_tapes(ctx: RuleContext, root: cst.CSTNode) -> list[cst.With]:
    """Tape blocks of a train step: in a function that applies gradients, or,
    at module level, in a loop whose body applies them."""
    body = scope_body(root)
    if isinstance(root, cst.Module):
        regions = [
            loop.body
            for loop in iter_nodes(root, into_functions=False)
            if isinstance(loop, (cst.For, cst.While)) and applies_gradients(loop.body)
        ]
    else:
        # It applies the gradients, hands them back to callers that do, or
        # hands its tape to a helper that does
        # (`self._minimize(strategy, tape, optimizer, loss, variables)`).
        trains = applies_gradients(body) or _hands_gradients_back(ctx, root)
        regions = [body] if trains or _hands_tape_to_update(ctx, root) else []
    tapes: dict[int, cst.With] = {}
    for region in regions:
        for node in iter_nodes(region, into_functions=False):
            if isinstance(node, cst.With) and tape_name(ctx, node) is not None:
                tapes[id(node)] = node
    return list(tapes.values())


def _hands_gradients_back(ctx: RuleContext, root: cst.CSTNode) -> bool:
    """`FunctionInfo.hands_gradients_back` of the function `root`."""
    scope = ctx.scope_of(root) if isinstance(root, cst.FunctionDef) else None
    info = ctx.index.functions.get(scope.qualname) if scope is not None else None
    return info is not None and info.hands_gradients_back


def _hands_tape_to_update(ctx: RuleContext, root: cst.CSTNode) -> bool:
    """Whether the function `root` hands a tape it opens to a function of
    this file that applies gradients: a method of its class
    (`self._minimize(strategy, tape, optimizer, loss, variables)`) or a
    module function. (A library helper given the tape, an adversarial
    attack's `gen_adv_neighbor(..., gradient_tape=tape)`, trains nothing.)"""
    if not isinstance(root, cst.FunctionDef):
        return False
    scope = ctx.scope_of(root)
    if scope is None:
        return False
    tapes = {
        name
        for node in iter_nodes(root.body, into_functions=False)
        if isinstance(node, cst.With) and (name := tape_name(ctx, node)) is not None
    }
    if not tapes:
        return False
    for node in iter_nodes(root.body, into_functions=False):
        if not isinstance(node, cst.Call) or not any(
            isinstance(a.value, cst.Name) and a.value.value in tapes for a in node.args
        ):
            continue
        name = dotted_name(node.func) or ""
        info = ctx.index.functions.get(ctx.index.own_method_called(scope.qualname, name) or name)
        if info is not None and info.applies_gradients:
            return True
    return False


def _model_names(ctx: RuleContext) -> set[str]:
    """Names assigned a Keras model anywhere in the file: `keras.Sequential(...)`,
    `tf.keras.Model(...)`, `keras.applications.X(...)`, a class of this
    file deriving from `Model`, a project function (of any module) that
    builds and returns one. (An object of a Keras class of any module
    is a model when the step trains it: `trained_keras_objects`.)"""
    model_classes = {
        name for name, info in ctx.index.classes.items() if is_keras_model_class(info.bases)
    }
    builders = {q for q, info in ctx.index.functions.items() if info.returns_model}
    project = ctx.index.model_builders  # of any module, as pass 1 names them
    names = set()
    for node, owner in _assignments(ctx.module, bool(builders)):
        if not isinstance(node.value, cst.Call):
            continue
        callee = node.value.func
        local = dotted_name(callee) or ""
        is_model = (
            builds_keras_model(ctx.names.qualified_name(callee))
            or local in model_classes
            or local in builders
            or (bool(project) and any(n in project for n in ctx.pass1_names(callee)))
            # `self.encoder = self.get_encoder()`: a method building one.
            or (owner is not None and f"{owner}.{local.removeprefix('self.')}" in builders)
        )
        if is_model:
            for target in node.targets:
                # `actor, critic = build(...)`: a builder may return several.
                bound = target.target
                parts = bound.elements if isinstance(bound, cst.Tuple) else ()
                for name in map(dotted_name, [e.value for e in parts] or [bound]):
                    if name:
                        names.add(name)
    # `agent.critic`, where every caller passes `agent` an object whose
    # class keeps a model there.
    for models in ctx.index.parameter_models.values():
        names.update(models)
    # `enc = parts.encoder`, where the class of `parts` keeps a model there.
    held = ctx.index.held_models
    if held:
        for info in ctx.index.functions.values():
            names.update(n for n, ref in info.attribute_aliases.items() if ref in held)
    return names


def _assignments(module: cst.Module, with_classes: bool) -> Iterator[tuple[cst.Assign, str | None]]:
    """Every assignment of the file, with the top-level class whose method
    holds it when `with_classes` (else None: most files build no model in
    a method, and need no class)."""
    for statement in module.body:
        owner = statement.name.value if isinstance(statement, cst.ClassDef) else None
        for node in iter_nodes(statement):
            if isinstance(node, cst.Assign):
                yield node, owner if with_classes else None


def _is_model_call(
    ctx: RuleContext,
    call: cst.Call,
    models: set[str],
    in_method: bool,
    trained: set[str] | None = None,
) -> bool:
    """A call of a model: `self` in a method, a name known or named as one, or
    one of `trained`, the objects the step trains that are known Keras
    objects (`trained_keras_objects`: `self.mini_vgg(images)` in a Keras
    `train_step` with `tape.gradient(loss, self.mini_vgg.trainable_variables)`,
    `g(x)` with `tape.gradient(loss, g.trainable_weights)`, `sen_cnn(x)`
    of a Keras class of another module), whatever it is called."""
    name = dotted_name(call.func)
    first = call.args[0].keyword if call.args else None
    # Keras passes a layer's input as `inputs` (`model(inputs=x)`); any other
    # keyword first (`loss(y_true=..., y_pred=...)`) is no model call.
    if name is None or not call.args or (first is not None and first.value != "inputs"):
        return False
    if name == "self":
        return in_method
    if ctx.names.qualified_name(call.func) or name in ctx.index.functions:
        return False
    if is_plain_function(ctx, name):
        return False
    if trained is not None and name in trained:
        return True
    return name in models or bool(_MODEL_NAME.search(name.rsplit(".", 1)[-1]))


def _trained_or_part(name: str, trained: set[str], keras_step: bool = False) -> bool:
    """`name`, a model call (`_is_model_call`), is of a model the step
    trains, or of a part of one (`ae.encoder` of a trained `ae`: its
    variables are among the model's; a frozen teacher is no part of the
    trained model), called outside that model's own methods (there,
    `self.encoder(x)` runs in the call context Keras gives `self(x)`: the
    own-call finding covers it). `keras_step`: the scope is a Keras model's
    own `train_step`, which `fit` runs outside any call context, so a
    layer it holds (`self.encoder(x)`) gets `training` only from the call."""
    return any(
        name == model or ((model != "self" or keras_step) and name.startswith(f"{model}."))
        for model in trained
    )


# A model's forward pass run as `model.call(x)` in the tape (a Keras
# `train_step`'s `self.call(x)`): the finding, and its words when the
# model's layers ignore `training`.
_CALL_BYPASS = (
    "`{model}.call(...)` in the tape bypasses Keras's `__call__`: no call context carries "
    "`training` to the layers it calls"
)
_BYPASSED_CALL = (
    f"{_CALL_BYPASS}, so any dropout or batch normalization in them runs in inference "
    "mode, and `training=True` given to `call` reaches only the layers `call` passes it to "
    "(no fix: call the model itself, `{model}(x, training=True)`, which also converts and "
    "masks its inputs)"
)
_BYPASSED_CALL_UNCHANGED = (
    f"{_CALL_BYPASS}; nothing changes today, since {{reason}}, but a dropout or batch "
    "normalization layer added later would run in inference mode (no fix: call the model "
    "itself, `{model}(x, training=True)`)"
)


def _bypassed_call(call: cst.Call) -> str | None:
    """`model` for `model.call(...)` (`self.call(...)`, `self.critic.call(...)`,
    `critic.call(...)`) with no `training` argument; None for any other call."""
    func = call.func
    if not (isinstance(func, cst.Attribute) and func.attr.value == "call"):
        return None
    if any(a.keyword is not None and a.keyword.value == "training" for a in call.args):
        return None
    return dotted_name(func.value)


class MissingTrainingFlag(Rule):
    code = "TFR304"
    name = "model-call-without-training"
    summary = (
        "A model called in a train step's tape without `training=True` "
        "runs dropout and batch norm in inference mode"
    )
    fix_applicability = Applicability.UNSAFE
    needs_traced_code = False
    explanation = """
        ## What it does
        Finds `model(x)` called without `training=True` inside a train step's
        `tf.GradientTape` block, and passes `training=True`.

        ## Why is this bad?
        Without `training=True` the model runs in inference mode: dropout is off and
        batch normalization uses (and never updates) its moving statistics.
        `fit` passes `training=True`; a custom loop must do it itself. Nothing
        fails: the model just trains differently from `fit`.

        ## What counts as a train step and a model
        A train step is a function, or a loop body, that opens a tape and applies
        gradients; a model is a name assigned from `keras.Sequential`/`Model`/
        `keras.applications`/a `Model` subclass, a name such as `model` or
        `*_model`, `self` in a `Model.train_step`, or any object whose
        variables the step differentiates, whatever its name or wherever its
        class lives, in a `Model.train_step` (`self.mini_vgg`), when the
        module uses it as a Keras object (`tape.gradient(loss,
        g.trainable_weights)`, `g.summary()`; not in a module importing
        TensorLayer or Sonnet, whose models take `is_train`/`is_training`),
        or when it is built from a class of the project, in any module,
        deriving from Keras' `Layer` or `Model` (`sen_cnn =
        TextNet(classes=2)` with `from model.net import TextNet`).
        Only models the step trains are reported: when the step names the
        variables it differentiates (`tape.gradient(loss,
        model.trainable_variables)`), a frozen teacher or target network
        called in the same tape stays in inference mode, as meant; with a
        tape per network (a GAN's, SAC's), each tape trains the networks its
        own `gradient` call names. A call under `with
        tape.stop_recording():` is not recorded by that tape, and a gradient
        penalty's tape that differentiates only the inputs it watches
        (`penalty_tape.watch(mix)`, `penalty_tape.gradient(d, [mix])`)
        trains nothing: a critic called there alone is not reported. A
        model called in a function that runs in the step's tape (`loss =
        critic_loss(real, fake)`, through any functions of the file) is
        reported there when `training=True`
        changes what it computes; the fix goes to that
        function only when every call of it in the file runs in a train
        step's tape, since `training=True` there also changes an eval
        function that calls it (then it is reported without a fix). So is
        a network a method of a held object runs, in any module: an agent
        whose tape calls `self._model.q1(s, a)` (directly or in its own
        loss method) and differentiates `self._model.q1_variables` (a
        property returning `self._q1_model.trainable_variables`) trains
        `self._q1_model`, and `self._q1_model(x)` in `q1` is reported there,
        without a fix (the method also runs for acting and for target
        networks, `self._target.q1(...)`, which the step does not train:
        give it a `training` argument the step passes). An
        explicit `training=False` (a frozen backbone) is left alone, as is a
        training flag of the model's own (`is_training=True`) or one
        passed in the place its `call` gives `training`
        (`transformer(inp, tar, True, mask)`) or, when the model's class is
        not known, second, where Keras' own models take it (`generator(z,
        True)`), and so
        is a call in a branch that tests for a `training` argument (`if
        self._call_has_training_arg:`). A model whose project class (in
        this module or another) has a `call` without `training` and builds
        no layer that reads it, or a `Sequential` whose layers all ignore it
        (no dropout, batch normalization or noise), computes the same either
        way: it is not reported (a layer added later that reads `training`
        makes it a finding then). Nor is a model whose class's `call`
        (in this module or another) defaults `training` to True (Keras uses
        that default when no caller or call context says otherwise: it
        trains already), or an object of
        the project that is no Keras layer or model (a `tf.Module` whose own
        `__call__` takes no `training`, or swallows it in `**kwargs`, and
        runs no layer that reads it). A layer a class builds and never
        runs (`self.norm = BatchNormalization()` no method calls) reads
        nothing; a list of layers the class fills (`self.hidden.append(
        Dense(...))`, or a local name bound to one: `conv = Conv2D(...)`,
        `self.outs.append(conv)`) is judged by what it appends, and a layer
        built from a class every call site hands the constructor
        (`Head(3, Plain)`, then `self.backbone = backbone()`) by that class;
        a functional model by the layers its builder and the block functions
        it calls build, a `Lambda` wrapping a project function by what that
        function calls. A name a branch binds
        to one model or another (`model = Plain() if flat else Normed()`)
        is reported unless every one of them ignores `training`. A model called with its input by
        keyword, `model(inputs=x)`, is a model call like `model(x)`. A Keras model's
        `train_step` that runs its forward pass as `self.call(x)` bypasses
        `__call__`: no call context carries `training` to the layers inside
        (measured: a batch normalization's statistics do not move in `fit`).
        So does a custom step running a model it trains as
        `critic.call(x)`, even when that `call` defaults `training` to True
        (the default reaches only the layers `call` passes it to). Both are
        reported without a fix; the remedy, `self(x, training=True)` or
        `critic(x, training=True)`, also converts and masks the inputs. For the same reason, when a
        model's `train_step`/`test_step` gives a training value to one of
        the model's own methods directly (`self.forward_pass(x, True)`,
        `self.call(x, training=True)`), a layer the model holds that the
        method calls without `training` (`self.dropout(h)`) gets none: it
        runs with its own default, inference mode for Keras' `Dropout` and
        `BatchNormalization` (measured on Keras 3), training mode during
        evaluation for a project layer whose `call` defaults to
        `training=True`. That call is reported, with a fix that passes the
        method's `training` on. Layers that ignore `training` (`Dense`,
        pooling) and project layers whose `call` takes none are not.

        ## Fix safety
        The fix adds `training=True` (`training=training` in a method the
        step calls directly). Always unsafe (applied with
        `--unsafe-fixes`): it changes what the model computes on purpose
        (dropout active, batch statistics used and updated); a test that
        compares the original eagerly with the fixed step can only agree on a
        model without such layers.
    """
    examples = (
        Invalid(
            """
            import tensorflow as tf

            def train_step(x, y):
                with tf.GradientTape() as tape:
                    loss = loss_fn(y, model(x))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
            """,
            """
            import tensorflow as tf

            def train_step(x, y):
                with tf.GradientTape() as tape:
                    loss = loss_fn(y, model(x, training=True))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
            """,
            unsafe=True,
        ),
        Invalid(
            """
            import keras
            import tensorflow as tf

            class Net(keras.Model):
                def train_step(self, data):
                    x, y = data
                    with tf.GradientTape() as tape:
                        y_pred = self(x)
                        loss = self.compute_loss(y=y, y_pred=y_pred)
                    grads = tape.gradient(loss, self.trainable_variables)
                    self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
                    return {"loss": loss}
            """,
            """
            import keras
            import tensorflow as tf

            class Net(keras.Model):
                def train_step(self, data):
                    x, y = data
                    with tf.GradientTape() as tape:
                        y_pred = self(x, training=True)
                        loss = self.compute_loss(y=y, y_pred=y_pred)
                    grads = tape.gradient(loss, self.trainable_variables)
                    self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
                    return {"loss": loss}
            """,
            unsafe=True,
        ),
        Invalid(
            """
            import tensorflow as tf

            critic = tf.keras.Sequential([tf.keras.layers.Dense(8), tf.keras.layers.Dropout(0.2)])

            def critic_loss(real, fake):
                return tf.reduce_mean(critic(fake) - critic(real))

            def critic_step(real, fake):
                with tf.GradientTape() as tape:
                    loss = critic_loss(real, fake)
                grads = tape.gradient(loss, critic.trainable_variables)
                optimizer.apply_gradients(zip(grads, critic.trainable_variables))
            """,
            """
            import tensorflow as tf

            critic = tf.keras.Sequential([tf.keras.layers.Dense(8), tf.keras.layers.Dropout(0.2)])

            def critic_loss(real, fake):
                return tf.reduce_mean(critic(fake, training=True) - critic(real, training=True))

            def critic_step(real, fake):
                with tf.GradientTape() as tape:
                    loss = critic_loss(real, fake)
                grads = tape.gradient(loss, critic.trainable_variables)
                optimizer.apply_gradients(zip(grads, critic.trainable_variables))
            """,
            unsafe=True,
            findings=2,
            note="a helper that runs only in the step's tape",
        ),
        Valid(
            """
            import tensorflow as tf

            def train_step(x, y):
                with tf.GradientTape() as tape:
                    features = backbone_model(x, training=False)
                    loss = loss_fn(y, head(features, training=True))
                grads = tape.gradient(loss, head.trainable_variables)
                optimizer.apply_gradients(zip(grads, head.trainable_variables))
            """,
        ),
        Valid(
            """
            import tensorflow as tf

            def train_step(x, y):
                with tf.GradientTape() as tape:
                    student_logits = student_model(x, training=True)
                    teacher_logits = teacher_model(x)
                    loss = distill(y, student_logits, teacher_logits)
                grads = tape.gradient(loss, student_model.trainable_variables)
                optimizer.apply_gradients(zip(grads, student_model.trainable_variables))
            """,
            note="a frozen teacher stays in inference mode",
        ),
        Valid(
            """
            import tensorflow as tf

            def saliency(model, x):
                with tf.GradientTape() as tape:
                    tape.watch(x)
                    score = model(x)
                return tape.gradient(score, x)
            """,
            note="no optimizer update: inference is intended",
        ),
    )

    def check(self, ctx: RuleContext) -> Iterator[Violation]:
        models: set[str] | None = None
        steps = _Steps(ctx)
        seen: set[int] = set()
        for root, in_method, owner in scopes(ctx):
            step = steps.of(root)
            if not step.tapes:
                continue
            if models is None:
                models = _model_names(ctx)
            if step.watched_only:
                continue  # gradient ascent on an image: the model is frozen
            keras_step = id(root) in steps.overrides
            # A tape nested in another (a gradient penalty's) holds calls of both.
            for key, tape in step.tapes.items():
                trained = step.trained[key]
                recording = tape_names(ctx, tape)
                for node, ancestors in iter_with_ancestors(tape.body):
                    if (
                        recording
                        and isinstance(node, cst.Call)
                        and recording <= stopped_tapes(ancestors)
                    ):
                        continue  # under `tape.stop_recording()`: not what the tape trains
                    bypassed = _bypassed_call(node) if isinstance(node, cst.Call) else None
                    if (
                        bypassed is not None
                        and _runs_model(bypassed, root, steps, trained, step.differentiated[key])
                        and id(node) not in seen
                        # `self.call(x, y, True, mask)`: `training` given by
                        # position reaches what `call` passes it to, as written.
                        and not passes_training_positionally(ctx, node, bypassed, owner)
                    ):
                        assert isinstance(node, cst.Call)
                        seen.add(id(node))
                        unchanged = ignores_training(ctx, bypassed, owner)
                        if unchanged is None:
                            yield Violation(node, _BYPASSED_CALL.format(model=bypassed))
                        else:
                            yield Violation(
                                node,
                                _BYPASSED_CALL_UNCHANGED.format(model=bypassed, reason=unchanged),
                            )
                        continue
                    if not isinstance(node, cst.Call) or not _is_model_call(
                        ctx, node, models, in_method, step.differentiated[key]
                    ):
                        continue
                    if id(node) in seen:
                        continue
                    seen.add(id(node))
                    if any(isinstance(a, (cst.FunctionDef, cst.Lambda)) for a in ancestors):
                        continue
                    label = dotted_name(node.func) or ctx.code(node.func)
                    if trained is not None and not _trained_or_part(label, trained, keras_step):
                        continue  # a frozen teacher or target network: inference is meant
                    if _parameter_ignores_training(ctx, root, label):
                        continue
                    violation = _missing_flag(
                        ctx, node, ancestors, label, owner, _in_tape_words, scope=root
                    )
                    if violation is not None:
                        yield violation
        if models is not None and _tapes_call_local_functions(ctx, steps):
            yield from _helper_calls(ctx, steps, models, seen)
        for found in unflagged_layer_calls(ctx):
            if id(found.call) not in seen:
                seen.add(id(found.call))
                yield _unflagged_layer_call(ctx, found)
        for held in held_model_calls(ctx):
            # A model call as any tape's is one (`_is_model_call`), of a
            # model the step trains.
            if id(held.call) not in seen and _is_model_call(
                ctx, held.call, set(), True, {held.label}
            ):
                seen.add(id(held.call))
                violation = _missing_flag(
                    ctx, held.call, held.ancestors, held.label, held.owner, held.words
                )
                if violation is not None:
                    yield violation


def _runs_model(
    model: str,
    root: cst.CSTNode,
    steps: _Steps,
    trained: set[str] | None,
    keras_trained: set[str] | None,
) -> bool:
    """Whether `model.call(...)` in a tape of `root` runs the forward pass
    of a Keras model the tape trains: `self` in a Keras model's own
    `train_step`, or a model (or part of one) whose variables the tape
    differentiates and that is known to be a Keras object (a `tf.Module`
    with a `call` method has no `__call__` to bypass)."""
    if model == "self":
        return id(root) in steps.overrides and (trained is None or "self" in trained)
    return keras_trained is not None and _trained_or_part(model, keras_trained)


@dataclass
class _Step:
    """What TFR304 asks of a scope that may be a train step."""

    tapes: dict[int, cst.With]  # its train-step tape blocks, by id
    trained: dict[int, set[str] | None]  # per tape: `trained_models`
    differentiated: dict[int, set[str] | None]  # those of them known to be Keras objects
    watched_only: bool  # it only differentiates watched inputs


class _Steps:
    """`_Step` of each scope, worked out once per file."""

    def __init__(self, ctx: RuleContext) -> None:
        self.ctx = ctx
        self.overrides = {id(f.node) for f in ctx.functions if is_keras_train_step_override(ctx, f)}
        self.known: dict[int, _Step] = {}

    def of(self, root: cst.CSTNode) -> _Step:
        step = self.known.get(id(root))
        if step is None:
            ctx = self.ctx
            tapes = {id(t): t for t in _train_step_tapes(ctx, root)}
            body = scope_body(root)
            keras_step = id(root) in self.overrides
            trained = {key: trained_models(ctx, body, tape) for key, tape in tapes.items()}
            differentiated = {
                key: trained_keras_objects(ctx, body, models, keras_step)
                for key, models in trained.items()
            }
            watched_only = (
                bool(tapes)
                and trained_models(ctx, body) is None
                and differentiates_watched_only(body, inputs=input_variables(ctx, root))
            )
            step = _Step(tapes, trained, differentiated, watched_only)
            self.known[id(root)] = step
        return step


def _tapes_call_local_functions(ctx: RuleContext, steps: _Steps) -> bool:
    """Whether a train step's tape calls something named like a function of
    this file: without one, no helper runs in a tape, and the file's calls
    need not be followed."""
    defined = {function.node.name.value for function in ctx.functions}
    for step in steps.known.values():
        for tape in step.tapes.values():
            for node in iter_nodes(tape.body, into_functions=False):
                if isinstance(node, cst.Call):
                    func = node.func
                    name = func.attr if isinstance(func, cst.Attribute) else func
                    if isinstance(name, cst.Name) and name.value in defined:
                        return True
    return False


def _helper_calls(
    ctx: RuleContext, steps: _Steps, models: set[str], seen: set[int]
) -> Iterator[Violation]:
    """Model calls in a function a train step calls inside its tape
    (`loss = critic_loss(real, fake)`, and `critic(fake)` in `critic_loss`):
    they run in the step's tape as if written there. A call is reported when
    some step whose tape runs the function trains the model (`tape_entries`
    follows the calls of this file, through further helpers). The fix goes
    to the helper itself, so it is offered only when every way the helper
    runs is such a tape: a helper an eval function also calls (or that is
    handed around as a value) would switch that caller to training mode
    too; the finding then says so and offers no fix (the helper needs a
    `training` argument its callers pass). Callers in other files are not
    seen: a helper imported by an eval module keeps the fix. A model that
    computes the same either way (no dropout or normalization) is not
    reported in a helper: the step's own tape holds no call to point at,
    and a helper (a TD-error or a loss function) is as often shared with
    code that evaluates."""
    for function in ctx.functions:
        entries = tape_entries(ctx, function)
        if not any(e.tape is not None for e in entries):
            continue
        owner = ctx.class_of(function)
        owner_name = owner[0] if owner is not None else None
        for node, ancestors in iter_with_ancestors(function.node.body):
            if not isinstance(node, cst.Call) or id(node) in seen:
                continue
            if any(isinstance(a, (cst.FunctionDef, cst.Lambda, cst.ClassDef)) for a in ancestors):
                continue  # a nested function runs through its own calls
            label = dotted_name(node.func)
            if label is None or not node.args:
                continue
            training: list[tuple[TapeEntry, str]] = []  # entries that train it, its name there
            others: list[TapeEntry] = []
            keras = False
            for entry in entries:
                step = steps.of(entry.root.node if entry.root is not None else ctx.module)
                name = entry.name_in_root(function, label)
                key = id(entry.tape)
                if (
                    entry.tape is None
                    or key not in step.tapes
                    or step.watched_only
                    or name is None
                    or not _trained_or_part(name, step.trained[key] or {name})
                ):
                    others.append(entry)
                    continue
                training.append((entry, name))
                keras = keras or _trained_or_part(name, step.differentiated[key] or set())
            if not training or not _is_model_call(
                ctx, node, models, function.is_method, {label} if keras else None
            ):
                continue
            seen.add(id(node))
            entry, name = training[0]
            step_class = ctx.class_of(entry.root) if entry.root is not None else None
            violation = _missing_flag(
                ctx,
                node,
                ancestors,
                label,
                owner_name,
                partial(_helper_words, ctx, function, label, entry, others[0] if others else None),
                (name, step_class[0] if step_class is not None else None),
                function.node,
            )
            if violation is not None:
                yield violation


def _in_tape_words() -> tuple[str, str | None]:
    return "is called in a train step's tape without `training=True`", None


def _helper_words(
    ctx: RuleContext,
    function: FunctionScope,
    label: str,
    entry: TapeEntry,
    other: TapeEntry | None,
) -> tuple[str, str | None]:
    """Where a call of the model `label` in `function` runs (in the tape
    `entry` starts in), and why there is no fix when it also runs where the
    model is not trained (`other`: an eval function, a tape that trains
    another network, a use as a value)."""
    root = entry.root.qualname if entry.root is not None else "the module's loop"
    assert entry.call is not None  # a call in a tape is parsed
    called = (
        f"is called without `training=True` in `{function.qualname}`, which runs in "
        f"a train step's tape (`{root}`, {line_name_of(ctx, entry.call)})"
    )
    if other is None:
        return called, None
    if other.unparsed is not None:
        name, first = other.unparsed
        where = f"in `{name}`, {line_name(first)}"
    else:
        caller = f" in `{other.root.qualname}`" if other.root is not None else ""
        assert other.call is not None  # parsed, unless `unparsed` says so
        where = f"{line_name_of(ctx, other.call)}{caller}"
    return called, (
        f"`{function.qualname}` also runs where `{label}` is not trained ({where}), and "
        f"`training=True` would change what it computes there; give "
        f"`{function.qualname}` a `training` argument its callers pass"
    )


def _unflagged_layer_call(ctx: RuleContext, found: UnflaggedLayerCall) -> Violation:
    """A layer the step's forward-pass method calls without `training`: the
    method's own `training` parameter passed on, as a call context would."""
    method = found.method.node.name.value
    step = found.step.node.name.value
    message = (
        f"`{found.layer}(...)` gets no `training` in `{method}`, which `{step}` calls directly "
        f"({line_name_of(ctx, found.entry)}) with a training value, not through the model's "
        "`__call__`: no Keras call context carries `training` there, so any dropout or batch "
        "normalization it holds runs with its own default (inference mode for Keras' layers) "
        f"whatever `{step}` passes"
    )
    return _passing_training(
        found.call, message, TRAINING, f"Pass `{method}`'s `training` on to `{found.layer}`"
    )


def _passing_training(call: cst.Call, message: str, value: str, fix_message: str) -> Violation:
    """The finding on `call`, with the unsafe fix that appends
    `training=<value>` to its arguments."""
    previous = [*call.args[:-1]]
    if call.args:
        previous.append(call.args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT))
    training = cst.Arg(
        cst.Name(value),
        keyword=cst.Name(TRAINING),
        equal=cst.AssignEqual(
            whitespace_before=cst.SimpleWhitespace(""),
            whitespace_after=cst.SimpleWhitespace(""),
        ),
    )
    fixed = call.with_changes(args=[*previous, training])
    return Violation(
        call,
        message,
        CstFix(fix_message, (NodeEdit(call, fixed),), applicability=Applicability.UNSAFE),
    )


def _drops_training_flag(scope: cst.CSTNode | None) -> bool:
    """Whether `scope`, the function a model call is in, takes a `training`
    flag of its own: a model called there without it gets its own default,
    not what the function's caller says (`forward(x, False)` from
    `test_step`)."""
    return isinstance(scope, cst.FunctionDef) and names_training(scope)


def _parameter_ignores_training(ctx: RuleContext, root: cst.CSTNode, label: str) -> bool:
    """Whether `label` is a parameter of the step `root` that every call
    site fills with a Keras model ignoring `training`
    (`ModuleIndex.parameter_models`: `step(self, model, ...)` given
    `self.pi`, a model of `Dense` layers)."""
    scope = ctx.scope_of(root) if isinstance(root, cst.FunctionDef) else None
    if scope is None:
        return False
    return ctx.index.parameter_models.get(scope.qualname, {}).get(label) is False


def _missing_flag(
    ctx: RuleContext,
    node: cst.Call,
    ancestors: tuple[cst.CSTNode, ...],
    label: str,
    owner: str | None,
    words: Callable[[], tuple[str, str | None]],
    model: tuple[str, str | None] | None = None,
    scope: cst.CSTNode | None = None,
) -> Violation | None:
    """The finding for a call of a trained model, `label`, without
    `training=True`: `words` gives where it is called and, when there is
    to be no fix, why. None when the call already says how it trains or is
    written for models without `training`. `model`: what the model is in
    the step's names, and the step's class, when the call is in a helper.
    None too for a model that computes the same either way
    (`ignores_training`): `training=True` would change nothing; or that
    trains by default, unless `scope` (the function the call is in) takes
    a `training` flag it drops there."""
    if any(a.keyword and "train" in a.keyword.value for a in node.args):
        return None  # `training=`, or a flag of its own (`is_training=True`)
    if any(a.star == "**" for a in node.args):
        return None
    if passes_training_positionally(ctx, node, label, owner):
        return None  # `transformer(inp, tar, True, mask)`, `generator(z, True)`
    if guarded_by_training_check(ancestors, node):
        return None  # written for models whose `call` takes no `training`
    if scope is not None and _parameter_ignores_training(ctx, scope, label):
        return None  # every caller hands it a model that ignores `training`
    unchanged = ignores_training(ctx, *(model or (label, owner)))
    if unchanged is not None and not (
        isinstance(unchanged, TrainsByDefault) and _drops_training_flag(scope)
    ):
        return None
    # Asked only now: naming a line makes the module's positions known.
    called, refusal = words()
    refusal = training_keyword_refused(ctx, *(model or (label, owner))) or refusal
    what = (
        f"`{label}(...)` {called}: any dropout or batch normalization it holds runs in "
        "inference mode"
    )
    if refusal is not None:
        return Violation(node, f"{what} (no fix: {refusal})")
    return _passing_training(node, what, "True", f"Pass `training=True` to `{label}`")


RULES = (MissingTrainingFlag,)
