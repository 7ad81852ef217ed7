"""TFR304 and TFR305: what goes wrong inside (and just outside) a train
step's `GradientTape` block."""

from __future__ import annotations

import re
from collections.abc import Iterator

import libcst as cst

from tfrewrite.facts.blockers import line_name_of, line_of
from tfrewrite.facts.context import RuleContext
from tfrewrite.facts.models import (
    guarded_by_training_check,
    ignores_training,
    is_plain_function,
    passes_training_positionally,
    trained_models,
)
from tfrewrite.facts.name_use import mentioned_names, name_use
from tfrewrite.facts.names import dotted_name
from tfrewrite.facts.project import keras_leaf
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
from tfrewrite.workspace.line_names import line_names

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
    one of `trained`, the objects whose variables a Keras `train_step`
    differentiates (`self.mini_vgg(images)` with `tape.gradient(loss,
    self.mini_vgg.trainable_variables)`), whatever it is called."""
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
        variables the step differentiates (`self.mini_vgg`). Only models the step
        trains are reported: when the step names the variables it differentiates
        (`tape.gradient(loss, model.trainable_variables)`), a frozen teacher or
        target network called in the same tape stays in inference mode, as
        meant. An explicit `training=False` (a frozen backbone) is left alone,
        as is a training flag of the model's own (`is_training=True`) or one
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
        overrides = {id(f.node) for f in ctx.functions if is_keras_train_step_override(ctx, f)}
        for root, in_method, owner in _scopes(ctx):
            tapes = _train_step_tapes(ctx, root)
            if not tapes:
                continue
            if models is None:
                models = _model_names(ctx)
            trained = trained_models(ctx, _body(root))
            if trained is None and _optimizes_watched_inputs(_body(root)):
                continue  # gradient ascent on an image: the model is frozen
            # In a Keras `train_step` what the step differentiates is a Keras
            # model or layer, whatever its name (`self.mini_vgg`).
            differentiated = trained if id(root) in overrides else None
            # A tape nested in another (a gradient penalty's) holds calls of both.
            seen: set[int] = set()
            for tape in tapes:
                for node, ancestors in iter_with_ancestors(tape.body):
                    if not isinstance(node, cst.Call) or not _is_model_call(
                        ctx, node, models, in_method, differentiated
                    ):
                        continue
                    if id(node) in seen:
                        continue
                    seen.add(id(node))
                    if any(isinstance(a, (cst.FunctionDef, cst.Lambda)) for a in ancestors):
                        continue
                    if any(a.keyword and "train" in a.keyword.value for a in node.args):
                        continue  # `training=`, or a flag of its own (`is_training=True`)
                    if any(a.star == "**" for a in node.args):
                        continue
                    label = ctx.code(node.func)
                    if passes_training_positionally(ctx, node, label, owner):
                        continue  # `transformer(inp, tar, True, mask)`, `generator(z, True)`
                    if trained is not None and label not in trained:
                        continue  # a frozen teacher or target network: inference is meant
                    if guarded_by_training_check(ancestors, node):
                        continue  # written for models whose `call` takes no `training`
                    unchanged = ignores_training(ctx, label)
                    if unchanged is not None:
                        yield Violation(
                            node,
                            f"`{label}(...)` is called in a train step's tape without "
                            f"`training=True`; nothing changes today, since {unchanged}, but "
                            "a dropout or batch normalization layer added later would run in "
                            "inference mode",
                        )
                        continue
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
                    yield Violation(
                        node,
                        f"`{label}(...)` is called in a train step's tape without `training=True`: "
                        "dropout and batch normalization run in inference mode",
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
