"""TFR301: `@tf.function` on a loss instead of on the train step."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from tfrewrite.facts.bindings import all_params
from tfrewrite.facts.context import FunctionScope, RuleContext
from tfrewrite.facts.name_use import name_use
from tfrewrite.facts.names import dotted_name
from tfrewrite.facts.project import names_a_measure
from tfrewrite.facts.step_plans import StepPlan, decorated_step, undecorated_train_steps
from tfrewrite.facts.tf_function import has_input_signature, is_tf_function, tf_function_decorator
from tfrewrite.facts.training import applies_gradients
from tfrewrite.facts.walk import iter_nodes, iter_statement_lines, iter_with_ancestors
from tfrewrite.findings import Applicability
from tfrewrite.rewrite.fixes import CstFix, NodeEdit, Violation
from tfrewrite.rewrite.step_violation import StepViolation
from tfrewrite.rules.base import Invalid, Rule, Valid
from tfrewrite.rules.training.statements import remove_statement_edits


def _loss_names(ctx: RuleContext) -> set[str]:
    """Dotted names this file uses as losses: differentiated in a tape,
    given to `compile(loss=...)`, or known project-wide as losses."""
    names = {t.callee for t in ctx.index.tape_losses}
    names.update(
        s.target for s in ctx.index.traced_sites if s.reason.startswith("given to compile(loss")
    )
    for function in ctx.functions:
        traced = function.traced
        if traced is not None and (traced.is_loss or traced.differentiated):
            names.add(ctx.index.qualify(function.qualname))
    return names


def _reference_names(ctx: RuleContext, expr: cst.BaseExpression) -> set[str]:
    """The dotted names pass 1 would give `expr` (imported or module-level)."""
    names = set(ctx.pass1_names(expr))
    local = dotted_name(expr)
    if local:
        names.add(local)  # a bare name as pass 1 records a nested function's
    return names


def _loss_by_signature(function: FunctionScope) -> bool:
    """A function whose parameters say loss (`y_true, y_pred`): a module-level
    or nested function, not a method (a metric's `_update(self, y_true,
    y_pred)` has the same parameters), and not named for a metric."""
    traced = function.traced
    if traced is None or not traced.loss_signature or function.is_method:
        return False
    return not names_a_measure(function.node.name.value)


def _called_directly_without_training(ctx: RuleContext, function: FunctionScope) -> bool:
    """A loss by its parameter names alone (`get_mse(y_true, y_pred)`),
    called at the top level of a file that trains nothing (no gradient tape,
    no gradients applied, no function given to `compile`): the file uses it
    as a plain traced function. There is no step to move the decorator to,
    and without it the calls would only run slower (unless it reads module
    state tracing freezes: the caller checks). A loss only defined here, in
    a losses module, is still reported: its callers train."""
    index = ctx.index
    keys = {function.node.name.value, index.qualify(function.qualname)}
    if not any(key in index.module_call_lines for key in keys):
        return False
    return not (
        index.opens_gradient_tape
        or any(info.applies_gradients for info in index.functions.values())
        or any(s.reason.startswith("given to compile") for s in index.traced_sites)
        or any(lam.reason.startswith("given to compile") for lam in index.traced_lambdas)
    )


def _only_differentiated_outside_training(ctx: RuleContext, function: FunctionScope) -> bool:
    """`result = add(v, 1.0)` under a tape that no optimizer update follows
    (a gradient taken to inspect it): `add` was taken for a loss only because
    its result is differentiated there."""
    keys = {function.node.name.value, ctx.index.qualify(function.qualname)}
    sites = [t for t in ctx.index.tape_losses if t.callee in keys]
    if not sites:
        return False
    for site in sites:
        if site.function == "":
            if any(
                isinstance(n, (cst.For, cst.While)) and applies_gradients(n.body)
                for n in iter_nodes(ctx.module, into_functions=False)
            ):
                return False
            continue
        info = ctx.index.functions.get(site.function)
        if info is None or info.trains:
            return False
    return True


def _called_in_eager_loop(ctx: RuleContext, function: FunctionScope) -> bool:
    """The function called in a Python loop outside traced code (an
    evaluation loop, `for x in test: total(compute_loss(model, x))`; a
    method through any object, `self.loss(...)` in an evaluation method's
    loop or `model.compute_loss(x)` in a script's): there its decorator
    does the tracing, so it is not redundant."""
    name = function.node.name.value
    traced = {id(f.node) for f in ctx.functions if f.traced is not None}
    for node, ancestors in iter_with_ancestors(ctx.module):
        if not isinstance(node, cst.Call):
            continue
        called = dotted_name(node.func)
        if called is None:
            continue
        if not (called == name or (function.is_method and called.endswith(f".{name}"))):
            continue
        if any(id(a) in traced for a in ancestors):
            continue
        loops = [a for a in ancestors if isinstance(a, (cst.For, cst.While))]
        functions = [a for a in ancestors if isinstance(a, cst.FunctionDef)]
        if loops and (not functions or _contains(functions[-1], loops[-1])):
            return True
    return False


def _contains(outer: cst.CSTNode, inner: cst.CSTNode) -> bool:
    return any(n is inner for n in iter_nodes(outer))


def _decorated_callers(ctx: RuleContext, keys: set[str]) -> list[str]:
    """Train steps in this file, already traced, that differentiate the loss
    (called by its name, or through a class attribute bound to it):
    decorated, or nested in a decorated function (the per-replica `step_fn`
    a traced step hands to `strategy.run`)."""
    steps = []
    for tape_loss in ctx.index.tape_losses:
        if tape_loss.callee not in keys and keys.isdisjoint(ctx.index.held_by(tape_loss.callee)):
            continue
        function = next((f for f in ctx.functions if f.qualname == tape_loss.function), None)
        if function is not None and (
            tf_function_decorator(ctx, function.node) is not None or function.traced is not None
        ):
            steps.append(function.node.name.value)
    return sorted(set(steps))


def _frozen_state(ctx: RuleContext, function: FunctionScope) -> list[str]:
    """Module names rebound elsewhere that the loss reads: `@tf.function`
    freezes them at the first trace."""
    rebound = ctx.index.rebound_module_names
    if not rebound:
        return []
    use = name_use(list(getattr(function.node.body, "body", ())))
    # A parameter of the same name (`def compute_loss(model, x)` in a file
    # whose loop binds `x`) is the argument, not the module's `x`.
    params = {p.name.value for p in all_params(function.node.params)}
    local = set(use.writes) | params
    return sorted(n for n in set(use.reads) if n in rebound and n not in local)


class LossDecorator(Rule):
    code = "TFR301"
    name = "tf-function-on-loss"
    summary = "`@tf.function` on a loss: the speed-up belongs on the train step"
    fix_applicability = Applicability.SAFE
    decorates_steps = True
    needs_traced_code = False
    may_untrace = True
    explanation = """
        ## What it does
        Finds `@tf.function` on a loss, or a loss wrapped with
        `loss = tf.function(loss)`. A loss is a function given to
        `compile(loss=...)`, the `call` of a `keras.losses.Loss` subclass, or a
        function called on `(labels, predictions)` inside a `tf.GradientTape`
        block whose result is differentiated (by its name, through an
        attribute bound to it or to what a factory returns, or as an item of
        a table the object holds: `self.losses["gen"](...)` for `self.losses
        = {"gen": self._make_gen_loss()}`), or one whose result the callable
        a step hands an optimizer's `minimize` returns (`opt.minimize(lambda:
        value_loss(x, y), var_list)`: the optimizer's own tape differentiates
        it).

        ## Why is this bad?
        Decorating a loss compiles only the loss: the model's forward pass, the
        gradient and the optimizer update still run eagerly, op by op, and
        every step crosses one more graph boundary. A small custom loop ran
        about 10x faster with the decorator on the step instead.

        ## How it fixes
        The fix removes the decorator. When an undecorated train step in the same
        file differentiates this loss, the fix moves the decorator onto the step,
        keeping `jit_compile` and `reduce_retracing` (TFR302 does the same for a
        step in another file). Losses given to `compile` need nothing: Keras
        traces them inside `fit`. When the step that calls the loss is already
        decorated, the loss's decorator is a nested, redundant graph boundary
        and is removed.

        ## The loss stays traced
        Without its decorator the loss still runs traced wherever it runs:
        in the train step that differentiates it (once that step is decorated
        or extracted), or in `fit`'s step when it is given to `compile`
        (Keras 3 traces that step without AutoGraph). Every other hazard in
        the loss is therefore still reported, and fixed in the same `fix`, as
        traced code: a tensor `if` becomes a `tf.cond`, `np.random` becomes
        `tf.random`. A loss whose decorator had `jit_compile=True` keeps
        running under XLA in the step the option moves to.

        ## Module state the decorator froze
        A loss that reads module state rebound elsewhere (a flag set per epoch,
        TFR201) has that state frozen at its first trace; removing the
        decorator makes each direct call read the current value, while a
        traced step that calls the loss still freezes it (the finding says so).
        When nothing else traces the loss, it runs eagerly once the decorator
        is gone, and findings about it as traced code (TFR201 on that flag)
        are fixed along with it.

        ## When it is not reported
        A decorated loss that nothing checked with it differentiates in a
        train step, hands to `compile` or calls from traced code keeps its
        decorator: no step would trace it instead (an evaluation function
        with `y_true, y_pred` parameters, a losses module checked without
        the code that trains with it; check the project together).

        A function taken for a loss by its parameter names alone (`y_true,
        y_pred`) and called directly in a file that trains nothing (no
        gradient tape, no `compile` with a function) is not reported unless
        it reads module state tracing freezes: there is no train step for
        its decorator to move to, and removing it would only slow those
        calls down.

        ## Fix safety
        Removing the decorator, or unwrapping `tf.function(loss)`, is safe:
        the loss computes the same values, traced with the step that calls it
        (Keras traces a loss given to `compile` inside `fit`) or eagerly; only
        module state it froze is now read on each direct call. A decorator
        with an `input_signature` is reported with no fix: the signature casts
        the arguments (float64 labels to float32), and the casts would go with
        it.

        Moving the decorator onto the train step is safe when the step is
        proven: it and the functions it calls are checked as traced code in the
        same run, and everything there that would change meaning is fixed
        together with the decorator by safe fixes. It is unsafe (applied with
        `--unsafe-fixes`; the fix message says why) when one of those fixes is,
        or when the step rests on what tfrewrite cannot see: the loop's call is
        matched to the step by method name only, the step is wrapped by a
        decorator whose wrapper is not known, the file star-imports a module
        the project does not hold, or the step calls a method of a held object
        whose class is not the project's. When something in the step cannot be
        fixed, the step stays eager: the fix only removes the loss's decorator,
        and the finding lists every blocker with its line.
    """
    examples = (
        Invalid(
            """
            import tensorflow as tf

            @tf.function(jit_compile=True)
            def loss_fn(labels, logits):
                return tf.reduce_mean(tf.square(labels - logits))

            def train_step(model, optimizer, x, y):
                with tf.GradientTape() as tape:
                    loss = loss_fn(y, model(x, training=True))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
                return loss

            def fit(model, optimizer, batches):
                for x, y in batches:
                    train_step(model, optimizer, x, y)
            """,
            """
            import tensorflow as tf

            def loss_fn(labels, logits):
                return tf.reduce_mean(tf.square(labels - logits))

            @tf.function(jit_compile=True)
            def train_step(model, optimizer, x, y):
                with tf.GradientTape() as tape:
                    loss = loss_fn(y, model(x, training=True))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
                return loss

            def fit(model, optimizer, batches):
                for x, y in batches:
                    train_step(model, optimizer, x, y)
            """,
            note="the decorator moves to the step, with its options",
        ),
        Invalid(
            """
            import keras
            from tensorflow import function

            def dice(y_true, y_pred):
                return 1.0 - 2.0 * keras.ops.sum(y_true * y_pred) / keras.ops.sum(y_true + y_pred)

            dice = function(dice)

            model = keras.Sequential([keras.layers.Dense(1)])
            model.compile(optimizer="adam", loss=dice)
            """,
            """
            import keras

            def dice(y_true, y_pred):
                return 1.0 - 2.0 * keras.ops.sum(y_true * y_pred) / keras.ops.sum(y_true + y_pred)

            model = keras.Sequential([keras.layers.Dense(1)])
            model.compile(optimizer="adam", loss=dice)
            """,
            note="a wrapped loss given to compile: Keras traces it already",
        ),
        Invalid(
            """
            import tensorflow as tf

            class Focal(tf.keras.losses.Loss):
                @tf.function
                def call(self, y_true, y_pred):
                    return tf.reduce_mean(tf.abs(y_true - y_pred))
            """,
            """
            import tensorflow as tf

            class Focal(tf.keras.losses.Loss):
                def call(self, y_true, y_pred):
                    return tf.reduce_mean(tf.abs(y_true - y_pred))
            """,
        ),
        Valid(
            """
            import tensorflow as tf

            def loss_fn(labels, logits):
                return tf.reduce_mean(tf.square(labels - logits))

            @tf.function
            def train_step(model, optimizer, x, y):
                with tf.GradientTape() as tape:
                    loss = loss_fn(y, model(x, training=True))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
                return loss
            """,
            note="the decorator is already on the step",
        ),
        Valid(
            """
            import tensorflow as tf

            @tf.function
            def normalize(images):
                return images / 255.0
            """,
            note="not a loss",
        ),
        Valid(
            """
            import tensorflow as tf

            @tf.function
            def get_mse(y_true, y_pred):
                return tf.reduce_mean(tf.square(y_true - y_pred))

            error = get_mse(tf.constant([1.0, 2.0]), tf.constant([1.5, 2.5]))
            """,
            note="a loss by its parameter names in a file that trains nothing: no step to move to",
        ),
    )

    def check(self, ctx: RuleContext) -> Iterator[Violation]:
        steps = undecorated_train_steps(ctx)
        for function in ctx.functions:
            decorator = tf_function_decorator(ctx, function.node)
            traced = function.traced
            if decorator is None or traced is None:
                continue
            if not (traced.is_loss or traced.differentiated or _loss_by_signature(function)):
                continue
            if traced.without_own_decorator() is None and not _frozen_state(ctx, function):
                # Nothing the project shows calls it from a train step or
                # hands it to `compile`: no step would trace it instead.
                continue
            if (
                not (traced.is_loss or traced.differentiated)
                and _called_directly_without_training(ctx, function)
                and not _frozen_state(ctx, function)
            ):
                continue
            if not _loss_by_signature(function) and _only_differentiated_outside_training(
                ctx, function
            ):
                continue
            violation = self._decorated(ctx, function, decorator, steps)
            if violation is not None:
                yield violation
        if not any(s.reason.startswith("wrapped in tf.function") for s in ctx.index.traced_sites):
            return
        losses = _loss_names(ctx)
        for line, block in iter_statement_lines(ctx.module):
            yield from self._wrapped(ctx, line, block, losses)

    def _decorated(
        self,
        ctx: RuleContext,
        function: FunctionScope,
        decorator: cst.Decorator,
        steps: list[StepPlan],
    ) -> Violation | None:
        name = function.node.name.value
        keys = {name, ctx.index.qualify(function.qualname)}
        callers = [p for p in steps if keys & set(p.loss_callees)]
        removal = NodeEdit(decorator, cst.RemovalSentinel.REMOVE)
        traced_steps = _decorated_callers(ctx, keys)
        if traced_steps and not callers and _called_in_eager_loop(ctx, function):
            return None  # its decorator traces the loop's direct calls
        if traced_steps:
            where = ", ".join(f"`{s}`" for s in traced_steps)
            several = len(traced_steps) > 1
            steps_text = (
                f"train steps {where} that call it are"
                if several
                else f"train step {where} that calls it is"
            )
            text = (
                f"`@tf.function` on the loss `{name}` is a nested, redundant graph boundary: the "
                f"{steps_text} already traced, and trace{'' if several else 's'} the loss with it"
            )
        elif function.traced is not None and function.traced.traced_callers and not callers:
            where = ", ".join(f"`{c}`" for c in function.traced.traced_callers)
            text = (
                f"`@tf.function` on the loss `{name}` is a nested, redundant graph boundary: "
                f"{where}, already traced, calls it and traces the loss with it"
            )
        elif function.is_method and name == "call" and not callers:
            # A `keras.losses.Loss` subclass: mostly given to `compile`.
            text = (
                f"`@tf.function` on the loss `{name}` is a redundant graph boundary: `fit` "
                "traces a loss given to `compile` with its train step; a custom loop that "
                "calls it eagerly compiles only the loss. Decorate the train step instead"
            )
        else:
            text = (
                f"`@tf.function` on the loss `{name}` compiles only the loss; the forward pass, "
                "gradients and update still run eagerly. Decorate the train step instead"
            )
        frozen = _frozen_state(ctx, function)
        message = f"Remove `@tf.function` from the loss `{name}`"
        if frozen:
            names = ", ".join(f"`{n}`" for n in frozen)
            text += (
                f". It also freezes the module state {names} it reads at its first trace (TFR201)"
            )
            message += (
                f": each direct call then reads the current {names}; a traced step that calls "
                "it still freezes it"
            )
        remove = CstFix(message, (removal,))
        if has_input_signature(decorator):
            return Violation(
                decorator,
                f"{text} (no fix: its `input_signature` casts the arguments, float64 labels to "
                "float32 for instance, and the casts would go with it; cast inside the loss "
                "first, then remove the decorator)",
            )
        eager_loop = function.traced is not None and function.traced.runs_in_an_eager_loop
        if not callers and eager_loop and not frozen:
            # Removed alone, the loss runs eagerly in the eager loop that
            # differentiates it until that loop's step is extracted (TFR303,
            # itself an unsafe fix): slower there, not faster.
            return Violation(
                decorator,
                text,
                CstFix(
                    f"{message} (unsafe: it runs eagerly until the loop's step is extracted "
                    "and traced, TFR303)",
                    (removal,),
                    (),
                    Applicability.UNSAFE,
                ),
            )
        if not callers:
            return Violation(decorator, text, remove)
        edits = [removal]
        imports: tuple = ()
        for plan in callers:
            new_step, imports = decorated_step(ctx, plan)
            edits.append(NodeEdit(plan.function.node, new_step))
        where = ", ".join(f"`{p.function.node.name.value}`" for p in callers)
        move = f"Move `@tf.function` from the loss `{name}` to the train step {where}"
        unproven = [p.unproven for p in callers if p.unproven is not None]
        if unproven:
            move += f" (unsafe: {unproven[0]})"
        return StepViolation(
            decorator,
            text,
            CstFix(
                move,
                tuple(edits),
                imports,
                Applicability.UNSAFE if unproven else Applicability.SAFE,
            ),
            steps=tuple(p.function.node for p in callers),
            blockers=tuple(b for p in callers for b in p.blockers),
            fallback=remove,
        )

    def _wrapped(
        self,
        ctx: RuleContext,
        line: cst.SimpleStatementLine,
        block: cst.CSTNode,
        losses: set[str],
    ) -> Iterator[Violation]:
        for small in line.body:
            for node in iter_nodes(small):
                if not (
                    isinstance(node, cst.Call) and is_tf_function(ctx, node.func) and node.args
                ):
                    continue
                wrapped = node.args[0].value
                names = _reference_names(ctx, wrapped)
                rebinding = (
                    isinstance(small, cst.Assign)
                    and small.value is node
                    and len(small.targets) == 1
                    and ctx.code(small.targets[0].target) == ctx.code(wrapped)
                )
                if isinstance(small, cst.Assign) and small.value is node:
                    for target in small.targets:
                        names |= _reference_names(ctx, target.target)
                if not names & losses:
                    continue
                label = ctx.code(wrapped)
                if rebinding and len(line.body) == 1:
                    edits = remove_statement_edits(block, line)
                elif rebinding:
                    edits = (NodeEdit(small, cst.RemovalSentinel.REMOVE),)
                else:
                    edits = (NodeEdit(node, wrapped),)
                yield Violation(
                    node,
                    f"`tf.function` wraps the loss `{label}`: only the loss is compiled, and each "
                    "call crosses a graph boundary. Decorate the train step instead",
                    CstFix(f"Unwrap the loss `{label}`", edits),
                )


RULES = (LossDecorator,)
