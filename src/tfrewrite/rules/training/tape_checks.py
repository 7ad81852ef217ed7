"""TFR304 and TFR305: what goes wrong inside (and just outside) a train
step's `GradientTape` block."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial

import libcst as cst

from tfrewrite.facts.blockers import line_name_of, line_of
from tfrewrite.facts.context import FunctionScope, RuleContext
from tfrewrite.facts.models import (
    guarded_by_training_check,
    ignores_training,
    is_plain_function,
    passes_training_positionally,
    trained_keras_objects,
    trained_models,
)
from tfrewrite.facts.name_use import mentioned_names, name_use
from tfrewrite.facts.names import dotted_name
from tfrewrite.facts.project import keras_leaf
from tfrewrite.facts.tape_callers import TapeEntry, tape_entries
from tfrewrite.facts.training import (
    applies_gradients,
    is_keras_train_step_override,
    method_name,
    side_effects,
    tape_name,
)
from tfrewrite.facts.walk import iter_nodes, iter_with_ancestors
from tfrewrite.findings import Applicability
from tfrewrite.rewrite.fixes import CstFix, NodeEdit, Violation
from tfrewrite.rules.base import Invalid, Rule, Valid
from tfrewrite.rules.training.statements import remove_statement_edits
from tfrewrite.workspace.line_names import line_name, line_names

# Names people give models; used only when no assignment says what the name is.
_MODEL_NAME = re.compile(
    r"^(model|net|network|generator|discriminator|encoder|decoder|classifier)$|_model$|^model_"
)
_MODEL_FACTORIES = ("Sequential", "Model", "Functional", "load_model", "clone_model")


def _scopes(ctx: RuleContext) -> Iterator[tuple[cst.CSTNode, bool, str | None]]:
    """(scope root, whether it is a method, the class whose `self` it sees)
    for the module and every function."""
    yield ctx.module, False, None
    for function in ctx.functions:
        owner = ctx.class_of(function)
        yield function.node, function.is_method, owner[0] if owner is not None else None


def _body(root: cst.CSTNode) -> cst.CSTNode:
    """What to walk for a scope: the module itself, or a function's body."""
    return root if isinstance(root, cst.Module) else root.body  # type: ignore[attr-defined]


def _train_step_tapes(ctx: RuleContext, root: cst.CSTNode) -> list[cst.With]:
    """Tape blocks of a train step: in a function that applies gradients, or,
    at module level, in a loop whose body applies them."""
    body = _body(root)
    if isinstance(root, cst.Module):
        regions = [
            loop.body
            for loop in iter_nodes(root, into_functions=False)
            if isinstance(loop, (cst.For, cst.While)) and applies_gradients(loop.body)
        ]
    else:
        regions = [body] if applies_gradients(body) else []
    tapes: dict[int, cst.With] = {}
    for region in regions:
        for node in iter_nodes(region, into_functions=False):
            if isinstance(node, cst.With) and tape_name(ctx, node) is not None:
                tapes[id(node)] = node
    return list(tapes.values())


def _model_names(ctx: RuleContext) -> set[str]:
    """Names assigned a Keras model anywhere in the file: `keras.Sequential(...)`,
    `tf.keras.Model(...)`, `keras.applications.X(...)`, or a project class
    deriving from `Model`."""
    model_classes = {
        name
        for name, info in ctx.index.classes.items()
        if any(keras_leaf(b) in ("Model", "Sequential") for b in info.bases)
    }
    names = set()
    for node in iter_nodes(ctx.module):
        if not (isinstance(node, cst.Assign) and isinstance(node.value, cst.Call)):
            continue
        callee = node.value.func
        qualified = ctx.names.qualified_name(callee) or ""
        local = dotted_name(callee) or ""
        is_model = (
            keras_leaf(qualified) in _MODEL_FACTORIES
            or ".applications." in qualified
            or local in model_classes
        )
        if is_model:
            for target in node.targets:
                name = dotted_name(target.target)
                if name:
                    names.add(name)
    return names


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
    `g(x)` with `tape.gradient(loss, g.trainable_weights)`), whatever it is
    called."""
    name = dotted_name(call.func)
    if name is None or not call.args or call.args[0].keyword is not None:
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


def _optimizes_watched_inputs(body: cst.CSTNode) -> bool:
    """Whether every gradient the scope takes is with respect to a value it
    watches (`tape.watch(image_var)`, then `tape.gradient(loss, image_var)`):
    a filter visualization or an adversarial example updates its input, and
    the model it calls stays frozen, in inference mode."""
    watched: set[str] = set()
    sources: list[cst.BaseExpression] = []
    for node in iter_nodes(body, into_functions=False):
        if not isinstance(node, cst.Call) or not node.args:
            continue
        method = method_name(node)
        if method == "watch":
            watched |= {n.value for n in iter_nodes(node.args[0].value) if isinstance(n, cst.Name)}
        elif method == "gradient" and len(node.args) > 1:
            sources.append(node.args[1].value)
    return bool(sources) and all(isinstance(s, cst.Name) and s.value in watched for s in sources)


def _opened(ctx: RuleContext, node: cst.With, known: dict[str, cst.With]) -> set[str]:
    """Tapes a `with` opens: `with tf.GradientTape() as tape:`, or `with tape:`
    re-entering a persistent tape opened before."""
    names = set()
    name = tape_name(ctx, node)
    if name:
        names.add(name)
    for item in node.items:
        if isinstance(item.item, cst.Name) and item.item.value in known:
            names.add(item.item.value)
    return names


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
        class lives, in a `Model.train_step` (`self.mini_vgg`) or when the
        module uses it as a Keras object (`tape.gradient(loss,
        g.trainable_weights)`, `g.summary()`; not in a module importing
        TensorLayer or Sonnet, whose models take `is_train`/`is_training`).
        Only models the step trains are reported: when the step names the
        variables it differentiates (`tape.gradient(loss,
        model.trainable_variables)`), a frozen teacher or target network
        called in the same tape stays in inference mode, as meant; with a
        tape per network (a GAN's, SAC's), each tape trains the networks its
        own `gradient` call names. A model called in a function that runs in
        the step's tape (`loss = critic_loss(real, fake)`, through any
        functions of the file) is reported there when `training=True`
        changes what it computes; the fix goes to that
        function only when every call of it in the file runs in a train
        step's tape, since `training=True` there also changes an eval
        function that calls it (then it is reported without a fix). An
        explicit `training=False` (a frozen backbone) is left alone, as is a
        training flag of the model's own (`is_training=True`) or one
        passed in the place its `call` gives `training`
        (`transformer(inp, tar, True, mask)`) or, when the model's class is
        not known, second, where Keras' own models take it (`generator(z,
        True)`), and so
        is a call in a branch that tests for a `training` argument (`if
        self._call_has_training_arg:`). A model whose project class has a `call`
        without `training`, or a `Sequential` whose layers all ignore it (no
        dropout, batch normalization or noise), computes the same either way:
        it is reported without a fix, saying so.

        ## Fix safety
        The fix adds `training=True`. Always unsafe (applied with
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
        for root, in_method, owner in _scopes(ctx):
            step = steps.of(root)
            if not step.tapes:
                continue
            if models is None:
                models = _model_names(ctx)
            if step.watched_only:
                continue  # gradient ascent on an image: the model is frozen
            # A tape nested in another (a gradient penalty's) holds calls of both.
            for key, tape in step.tapes.items():
                trained = step.trained[key]
                for node, ancestors in iter_with_ancestors(tape.body):
                    if not isinstance(node, cst.Call) or not _is_model_call(
                        ctx, node, models, in_method, step.differentiated[key]
                    ):
                        continue
                    if id(node) in seen:
                        continue
                    seen.add(id(node))
                    if any(isinstance(a, (cst.FunctionDef, cst.Lambda)) for a in ancestors):
                        continue
                    label = ctx.code(node.func)
                    if trained is not None and label not in trained:
                        continue  # a frozen teacher or target network: inference is meant
                    violation = _missing_flag(ctx, node, ancestors, label, owner, _in_tape_words)
                    if violation is not None:
                        yield violation
        if models is not None and _tapes_call_local_functions(ctx, steps):
            yield from _helper_calls(ctx, steps, models, seen)


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
            body = _body(root)
            keras_step = id(root) in self.overrides
            trained = {key: trained_models(ctx, body, tape) for key, tape in tapes.items()}
            differentiated = {
                key: trained_keras_objects(ctx, body, models, keras_step)
                for key, models in trained.items()
            }
            watched_only = (
                bool(tapes)
                and trained_models(ctx, body) is None
                and _optimizes_watched_inputs(body)
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
                    or name not in (step.trained[key] or {name})
                ):
                    others.append(entry)
                    continue
                training.append((entry, name))
                keras = keras or name in (step.differentiated[key] or ())
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
                report_unchanged=False,
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


def _missing_flag(
    ctx: RuleContext,
    node: cst.Call,
    ancestors: tuple[cst.CSTNode, ...],
    label: str,
    owner: str | None,
    words: Callable[[], tuple[str, str | None]],
    model: tuple[str, str | None] | None = None,
    *,
    report_unchanged: bool = True,
) -> Violation | None:
    """The finding for a call of a trained model, `label`, without
    `training=True`: `words` gives where it is called and, when there is
    to be no fix, why. None when the call already says how it trains or is
    written for models without `training`. `model`: what the model is in
    the step's names, and the step's class, when the call is in a helper.
    `report_unchanged`: whether to report a model that computes the same
    either way (`ignores_training`), with no fix."""
    if any(a.keyword and "train" in a.keyword.value for a in node.args):
        return None  # `training=`, or a flag of its own (`is_training=True`)
    if any(a.star == "**" for a in node.args):
        return None
    if passes_training_positionally(ctx, node, label, owner):
        return None  # `transformer(inp, tar, True, mask)`, `generator(z, True)`
    if guarded_by_training_check(ancestors, node):
        return None  # written for models whose `call` takes no `training`
    unchanged = ignores_training(ctx, *(model or (label, owner)))
    if unchanged is not None and not report_unchanged:
        return None
    # Asked only now: naming a line makes the module's positions known.
    called, refusal = words()
    if unchanged is not None:
        return Violation(
            node,
            f"`{label}(...)` {called}; nothing changes today, since {unchanged}, but a "
            "dropout or batch normalization layer added later would run in inference mode",
        )
    what = f"`{label}(...)` {called}: dropout and batch normalization run in inference mode"
    if refusal is not None:
        return Violation(node, f"{what} (no fix: {refusal})")
    training = cst.Arg(
        cst.Name("True"),
        keyword=cst.Name("training"),
        equal=cst.AssignEqual(
            whitespace_before=cst.SimpleWhitespace(""),
            whitespace_after=cst.SimpleWhitespace(""),
        ),
    )
    previous = [*node.args[:-1]]
    if node.args:
        previous.append(node.args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT))
    fixed = node.with_changes(args=[*previous, training])
    return Violation(
        node,
        what,
        CstFix(
            f"Pass `training=True` to `{label}`",
            (NodeEdit(node, fixed),),
            applicability=Applicability.UNSAFE,
        ),
    )


class LossOutsideTape(Rule):
    code = "TFR305"
    name = "loss-outside-tape"
    summary = "`tape.gradient(loss, ...)` on a loss computed after the tape closed returns `None`"
    fix_applicability = Applicability.UNSAFE
    needs_traced_code = False
    explanation = """
        ## What it does
        Finds `tape.gradient(loss, ...)` where the loss, or part of it, is
        computed after the `tf.GradientTape` block closed, and moves that
        computation into the block.

        ## Why is this bad?
        A `tf.GradientTape` records only the operations run inside its `with`
        block. When the loss (or part of it) is computed after the block closed,
        the tape never saw how it depends on the variables, and
        `tape.gradient(loss, variables)` returns `None` for every variable;
        `apply_gradients` then fails ("No gradients provided for any variable")
        or, filtered, silently trains nothing.

        ## How it fixes
        The fix moves the statements between the end of the `with` block and
        `tape.gradient(...)` that compute the differentiated value into the
        block, in their order; a loss written inside the `gradient` call is
        first bound to a name (`loss`) in the block. A plain rename after the
        block (`total = loss`) computes nothing and is not reported.

        ## Refusals (reported without a fix, with the reason)
        Refused, naming the statement that stops it, when a statement to move
        has a Python side effect (`print`, `.numpy()`, `float()`), is a
        compound statement, or reads or writes a name that a statement left
        behind also uses, or reads an object a statement left behind changes
        in place (`history.append(err)`): moving it would change what one of
        them sees.

        ## Fix safety
        Always unsafe (applied with `--unsafe-fixes`): the step now trains,
        where before its gradients were `None`. The moved statements compute
        the same values inside the block; what changes is that the tape now
        records them.
    """
    examples = (
        Invalid(
            """
            import tensorflow as tf

            def train_step(x, y):
                with tf.GradientTape() as tape:
                    logits = model(x, training=True)
                loss = loss_fn(y, logits)
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
            """,
            """
            import tensorflow as tf

            def train_step(x, y):
                with tf.GradientTape() as tape:
                    logits = model(x, training=True)
                    loss = loss_fn(y, logits)
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
            """,
            unsafe=True,
        ),
        Invalid(
            """
            import tensorflow as tf

            with tf.GradientTape() as tape:
                logits = model(x, training=True)
            grads = tape.gradient(loss_fn(y, logits), model.trainable_variables)
            """,
            """
            import tensorflow as tf

            with tf.GradientTape() as tape:
                logits = model(x, training=True)
                loss = loss_fn(y, logits)
            grads = tape.gradient(loss, model.trainable_variables)
            """,
            unsafe=True,
            note="a loss written in the gradient call is bound to a name in the block",
        ),
        Invalid(
            """
            import tensorflow as tf

            def train_step(x, y):
                with tf.GradientTape() as tape:
                    logits = model(x, training=True)
                loss = loss_fn(y, logits)
                print("loss", float(loss))
                loss = loss + 1e-4 * weight_norm(float(loss))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
            """,
            None,
            unsafe=True,
            note="refused: a statement to move calls Python `float()`",
        ),
        Valid(
            """
            import tensorflow as tf

            def train_step(x, y):
                with tf.GradientTape() as tape:
                    logits = model(x, training=True)
                    loss = loss_fn(y, logits)
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
            """,
        ),
        Valid(
            """
            import tensorflow as tf

            def train_step(x, y):
                with tf.GradientTape() as tape:
                    loss = loss_fn(y, model(x, training=True))
                total = loss
                grads = tape.gradient(total, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
            """,
            note="a rename after the block computes nothing",
        ),
    )

    def check(self, ctx: RuleContext) -> Iterator[Violation]:
        for root, _, _ in _scopes(ctx):
            yield from self._check_scope(ctx, root)

    def _check_scope(self, ctx: RuleContext, root: cst.CSTNode) -> Iterator[Violation]:
        body = _body(root)
        if not any(
            isinstance(n, cst.With) and tape_name(ctx, n)
            for n in iter_nodes(body, into_functions=False)
        ):
            return
        # Pre-order is source order for statements: the last assignment seen
        # before a `tape.gradient` call is the one it reads.
        last: dict[str, tuple[cst.CSTNode, bool, int]] = {}
        tapes_closed: dict[str, cst.With] = {}
        tape_order: dict[str, int] = {}
        for order, (node, ancestors) in enumerate(iter_with_ancestors(body)):
            if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                continue
            if any(isinstance(a, (cst.FunctionDef, cst.ClassDef, cst.Lambda)) for a in ancestors):
                continue
            open_tapes = {
                name
                for a in ancestors
                if isinstance(a, cst.With)
                for name in _opened(ctx, a, tapes_closed)
            }
            if isinstance(node, cst.With):
                name = tape_name(ctx, node)
                if name:
                    tapes_closed[name] = node
                    tape_order[name] = order
            if isinstance(node, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
                targets = (
                    [t.target for t in node.targets]
                    if isinstance(node, cst.Assign)
                    else [node.target]
                )
                for target in targets:
                    if isinstance(target, cst.Name):
                        last[target.value] = (node, bool(open_tapes), order)
            if not (isinstance(node, cst.Call) and method_name(node) == "gradient" and node.args):
                continue
            tape = dotted_name(node.func.value)  # type: ignore[attr-defined]
            if tape not in tapes_closed or tape in open_tapes:
                continue
            block = tapes_closed[tape]
            target = node.args[0].value
            move = _LossMove(ctx, root, block, node, (*ancestors, node))
            if isinstance(target, cst.Name):
                assigned = last.get(target.value)
                if assigned is None or assigned[1] or assigned[2] < tape_order[tape]:
                    continue
                if move.only_renames():
                    continue
                what = (
                    f"`{target.value}` is computed on {line_name_of(ctx, assigned[0])}, after "
                    f"the `GradientTape` block of {line_name_of(ctx, block)} closed: the tape "
                    f"did not record it, so `{tape}.gradient` returns None"
                )
            elif any(isinstance(n, (cst.Call, cst.BinaryOperation)) for n in iter_nodes(target)):
                what = (
                    f"The loss is computed on {line_name_of(ctx, node)}, in the "
                    f"`{tape}.gradient` call, after the `GradientTape` block of "
                    f"{line_name_of(ctx, block)} closed: the tape did not record it, so the "
                    "gradient is None"
                )
            else:
                continue
            fix, refusal = move.fix()
            if fix is None:
                yield Violation(
                    node.args[0], f"{what}. Compute it inside the `with` block (no fix: {refusal})"
                )
            else:
                yield Violation(node.args[0], f"{what}. Compute it inside the `with` block", fix)


_COMPUTES = (cst.Call, cst.BinaryOperation, cst.UnaryOperation, cst.Subscript, cst.Comparison)


class _LossMove:
    """Moving what a `tape.gradient` call differentiates into the tape block
    that closed before it: the statements between the block and the call that
    the differentiated value depends on (a backward slice), in their order."""

    def __init__(
        self,
        ctx: RuleContext,
        root: cst.CSTNode,
        tape: cst.With,
        call: cst.Call,
        ancestors: tuple[cst.CSTNode, ...],
    ) -> None:
        self.ctx = ctx
        self.root = root
        self.tape = tape
        self.call = call
        self.target = call.args[0].value
        self.block: cst.BaseSuite | cst.Module | None = None
        self.gap: list[cst.CSTNode] = []
        self.statement: cst.CSTNode | None = None  # the statement holding the call
        body = _body(root)
        for parent in reversed((body, *ancestors)):
            statements = getattr(parent, "body", None)
            if isinstance(parent, (cst.IndentedBlock, cst.Module)) and any(
                s is tape for s in statements
            ):
                self.block = parent
                statements = list(statements)
                start = next(i for i, s in enumerate(statements) if s is tape)
                holder = next(
                    (i for i, s in enumerate(statements) if any(s is a for a in ancestors)), None
                )
                if holder is not None and holder > start:
                    self.gap = statements[start + 1 : holder]
                    self.statement = statements[holder]
                break

    def _slice(self) -> tuple[list[cst.CSTNode], str | None]:
        """Gap statements the differentiated value depends on, or why not."""
        needed = set(mentioned_names(self.target))
        chosen: list[cst.CSTNode] = []
        for statement in reversed(self.gap):
            use = name_use([statement])
            if not set(use.writes) & needed:
                continue
            if not isinstance(statement, cst.SimpleStatementLine):
                return [], (
                    f"{line_name_of(self.ctx, statement)} is a compound statement that "
                    "assigns what is differentiated"
                )
            chosen.insert(0, statement)
            needed = (needed - set(use.writes)) | use.all_reads
        return chosen, None

    def only_renames(self) -> bool:
        """True when what is differentiated is only renamed after the block
        (`total = loss`): the tape recorded the value itself."""
        chosen, refusal = self._slice()
        if refusal is not None or self.statement is None:
            return False
        return not any(
            isinstance(n, _COMPUTES) for s in chosen for n in iter_nodes(s, into_functions=False)
        )

    def fix(self) -> tuple[CstFix | None, str | None]:
        ctx = self.ctx
        if self.block is None or self.statement is None:
            return None, "the `gradient` call is not in the block that holds the tape"
        if not isinstance(self.tape.body, cst.IndentedBlock):
            return None, "the tape block is written on one line"
        chosen, refusal = self._slice()
        if refusal is not None:
            return None, refusal
        chosen_ids = {id(s) for s in chosen}
        for statement in chosen:
            effect = next(side_effects(ctx, statement), None)
            if effect is not None:
                return None, (
                    f"{line_name_of(ctx, statement)} {effect[1]}, a Python side effect; "
                    "move the rest by hand"
                )
        # A moved statement runs before the statements it jumps over: they must
        # not read or write what it writes, nor write what it reads, nor change
        # in place (`history.append(err)`) an object it reads.
        modules = _imported_names(ctx.module)
        for position, statement in enumerate(self.gap):
            if id(statement) not in chosen_ids:
                continue
            use = name_use([statement])
            for earlier in self.gap[:position]:
                if id(earlier) in chosen_ids:
                    continue
                other = name_use([earlier])
                writes = set(use.writes)
                if set(other.writes) & (writes | use.all_reads) or other.all_reads & writes:
                    return None, (
                        f"{line_name_of(ctx, statement)} would move above "
                        f"{line_name_of(ctx, earlier)}, which uses the same names"
                    )
                changed = sorted(_mutated(earlier, modules) & use.all_reads)
                if changed:
                    return None, (
                        f"{line_name_of(ctx, statement)} reads `{changed[0]}`, which "
                        f"{line_name_of(ctx, earlier)} may change in place; moving it above "
                        "would change what it reads"
                    )
        moved = [_without_blank_lines(s) for s in chosen]
        edits: list[NodeEdit] = []
        if not isinstance(self.target, cst.Name):
            if next(side_effects(ctx, self.target), None) is not None:
                return None, "the differentiated expression has a Python side effect"
            name = _fresh_name(self.root, "loss")
            moved.append(
                cst.SimpleStatementLine(
                    [cst.Assign([cst.AssignTarget(cst.Name(name))], self.target)]
                )
            )
            edits.append(NodeEdit(self.target, cst.Name(name)))
        if not moved:
            return None, "nothing between the block and the `gradient` call computes it"
        body = self.tape.body
        new_tape = self.tape.with_changes(body=body.with_changes(body=[*body.body, *moved]))
        edits.append(NodeEdit(self.tape, new_tape))
        for statement in chosen:
            edits.extend(remove_statement_edits(self.block, statement, moved=True))
        where = f" ({line_names(line_of(ctx, s) for s in chosen)})" if chosen else ""
        return (
            CstFix(
                f"Move the loss computation{where} into the `GradientTape` block",
                tuple(edits),
                applicability=Applicability.UNSAFE,
            ),
            None,
        )


def _imported_names(module: cst.Module) -> set[str]:
    """Names bound by the module's top-level imports (`tf`, `np`): calling
    `tf.print(...)` changes nothing `tf` holds."""
    names: set[str] = set()
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(
                small.names, cst.ImportStar
            ):
                for alias in small.names:
                    bound = alias.asname.name if alias.asname else alias.name
                    while isinstance(bound, cst.Attribute):
                        bound = bound.value
                    if isinstance(bound, cst.Name):
                        names.add(bound.value)
    return names


def _root_name(node: cst.BaseExpression) -> str | None:
    while isinstance(node, (cst.Attribute, cst.Subscript)):
        node = node.value
    return node.value if isinstance(node, cst.Name) else None


def _mutated(statement: cst.CSTNode, modules: set[str]) -> set[str]:
    """Names whose object a statement may change in place: the receiver of a
    method call (`history.append(err)`, `stats["n"].add(1)`) and the base of
    an item or attribute assignment (`cache[k] = v`, `state.step += 1`)."""
    names: set[str] = set()
    for node in iter_nodes(statement, into_functions=False):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            root = _root_name(node.func.value)
            if root is not None and root not in modules:
                names.add(root)
        targets: list[cst.BaseExpression] = []
        if isinstance(node, cst.Assign):
            targets = [t.target for t in node.targets]
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign)):
            targets = [node.target]
        for target in targets:
            if isinstance(target, (cst.Attribute, cst.Subscript)):
                root = _root_name(target)
                if root is not None:
                    names.add(root)
    return names


def _without_blank_lines(statement: cst.CSTNode) -> cst.CSTNode:
    lines = [line for line in getattr(statement, "leading_lines", ()) if line.comment is not None]
    return statement.with_changes(leading_lines=lines)


def _fresh_name(root: cst.CSTNode, base: str) -> str:
    """`base` unless the scope already mentions it; then `base_value`, ..."""
    used = set(mentioned_names(root))
    for candidate in (base, f"{base}_value", f"{base}_tensor"):
        if candidate not in used:
            return candidate
    suffix = 2
    while f"{base}_{suffix}" in used:
        suffix += 1
    return f"{base}_{suffix}"


RULES = (MissingTrainingFlag, LossOutsideTape)
