"""TFR303: a `GradientTape` block written inline in a training loop."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import libcst as cst

from tfrewrite.facts.bindings import iter_assignments, iter_assignments_here
from tfrewrite.facts.blockers import line_name_of
from tfrewrite.facts.context import RuleContext
from tfrewrite.facts.liveness import Level, paths_after, read_later
from tfrewrite.facts.name_use import mentioned_names, name_use
from tfrewrite.facts.names import dotted_name
from tfrewrite.facts.numpy_arguments import (
    mixed_with_tensors,
    numpy_argument_hazard,
    numpy_arrays,
)
from tfrewrite.facts.numpy_indexing import numpy_indexed_by_argument
from tfrewrite.facts.python_counters import (
    changing_numbers,
    literal_numbers,
    python_int_loop_variable,
)
from tfrewrite.facts.static_shapes import batch_dimension_read
from tfrewrite.facts.step_hazards import failing_schedule, keras_host_loop_calls
from tfrewrite.facts.step_plans import options_from_losses
from tfrewrite.facts.tf_function import make_decorator
from tfrewrite.facts.training import (
    applies_gradients,
    feeds_short_final_batch,
    fresh_name,
    is_optimizer_update_call,
    is_update_call,
    method_name,
    side_effects,
    tape_name,
    trains_what_it_iterates,
)
from tfrewrite.facts.vocabulary import LIST_GROWING_METHODS, builds_variables
from tfrewrite.facts.walk import iter_nodes
from tfrewrite.findings import Applicability
from tfrewrite.rewrite.fixes import CstFix, NodeEdit, Violation
from tfrewrite.rules.base import Invalid, Rule, Valid
from tfrewrite.rules.training.step_reuse import same_step
from tfrewrite.workspace.line_names import line_name

_CONTROL = (cst.Break, cst.Continue, cst.Return, cst.Yield, cst.Await)


@dataclass
class _Loop:
    """A loop with a tape block in its body, in a scope: directly, or in a
    branch of an `if` there (`guard`: that `if`, as a delayed actor update
    every few iterations)."""

    loop: cst.For | cst.While
    tape: cst.With
    outermost: cst.CSTNode  # the outermost loop of the scope that contains it
    module_level: bool
    guard: cst.If | None = None
    # The loop takes the tape's gradients and sums them; the update comes
    # after it (gradient accumulation over mini-batches).
    accumulates: bool = False


def _loops(ctx: RuleContext) -> Iterator[_Loop]:
    """Loops (outside traced functions) whose body holds a tape block."""
    scopes: list[tuple[cst.CSTNode, bool]] = [(ctx.module, True)]
    # Only functions that open a tape (a pass-1 fact) can hold such a loop;
    # a step whose loops iterate what each call hands it holds none.
    scopes += [
        (f.node, False)
        for f in ctx.functions
        if f.traced is None
        and (info := ctx.index.functions.get(f.qualname)) is not None
        and info.opens_gradient_tape
        and f.qualname not in ctx.index.per_call_tape_loops
    ]
    for root, module_level in scopes:
        for outer in iter_nodes(root, into_functions=False):
            if outer is root or not isinstance(outer, (cst.For, cst.While)):
                continue
            if any(outer is not o and _contains(o, outer) for o in _loop_nodes(root)):
                continue  # not outermost
            for loop in iter_nodes(outer, into_functions=False):
                # A `for` over batches, or a `while` drawing them (`batch =
                # loader.next()`): the step is the same either way.
                if not isinstance(loop, (cst.For, cst.While)) or not isinstance(
                    loop.body, cst.IndentedBlock
                ):
                    continue
                if loop is outer and isinstance(loop, cst.For) and trains_what_it_iterates(loop):
                    continue  # one step of each layer it iterates, not a training loop
                if not applies_gradients(loop.body):
                    tape = _accumulating_tape(ctx, loop, root)
                    if tape is not None:
                        yield _Loop(loop, tape, outer, module_level, accumulates=True)
                    continue
                direct = False
                for statement in loop.body.body:
                    if isinstance(statement, cst.With) and tape_name(ctx, statement) is not None:
                        if not direct:  # the loop's step: one extraction a loop
                            yield _Loop(loop, statement, outer, module_level)
                        direct = True
                    elif isinstance(statement, cst.If):
                        for tape in _guarded_tapes(ctx, statement):
                            yield _Loop(loop, tape, outer, module_level, statement)


def _accumulating_tape(
    ctx: RuleContext, loop: cst.For | cst.While, root: cst.CSTNode
) -> cst.With | None:
    """The tape block of a loop that takes its gradients on each pass
    (`tape.gradient(loss, variables)` in the body), sums them, and leaves
    the update of that sum to the scope around it (`optimizer.
    apply_gradients(zip(total, variables))` after the loop): gradients
    accumulated over mini-batches, each pass's tape run eagerly."""
    body = loop.body
    if not isinstance(body, cst.IndentedBlock):
        return None
    # Names the scope's updates read (`zip(total, variables)`).
    applied = {
        dotted_name(n)
        for call in iter_nodes(root, into_functions=False)
        if isinstance(call, cst.Call) and is_update_call(call)
        for n in iter_nodes(call)
        if isinstance(n, cst.Name)
    }
    if not applied:
        return None
    for statement in body.body:
        if not isinstance(statement, cst.With):
            continue
        name = tape_name(ctx, statement)
        gradients = {
            target
            for node in iter_nodes(body, into_functions=False)
            if isinstance(node, cst.Assign)
            and isinstance(node.value, cst.Call)
            and method_name(node.value) == "gradient"
            and dotted_name(node.value.func.value) == name  # type: ignore[attr-defined]
            for t in node.targets
            if (target := dotted_name(t.target)) is not None
        }
        if name is not None and gradients and _sums(body, gradients) & applied:
            return statement
    return None


def _sums(body: cst.IndentedBlock, gradients: set[str]) -> set[str]:
    """The running sums the loop adds the gradients to: `total = [a + g
    for a, g in zip(total, grads)]` or `total += grads`, a name bound from
    itself and the gradients."""
    sums: set[str] = set()
    for node in iter_nodes(body, into_functions=False):
        if isinstance(node, cst.AugAssign):
            target, value = dotted_name(node.target), node.value
        elif isinstance(node, cst.Assign) and len(node.targets) == 1:
            target, value = dotted_name(node.targets[0].target), node.value
        else:
            continue
        read = {dotted_name(n) for n in iter_nodes(value) if isinstance(n, cst.Name)}
        if (
            target is not None
            and read & gradients
            and (isinstance(node, cst.AugAssign) or target in read)
        ):
            sums.add(target)
    return sums


def _guarded_tapes(ctx: RuleContext, guard: cst.If) -> Iterator[cst.With]:
    """The tape blocks of a branch of `guard` whose branch applies the
    gradients itself (`if step % k == 0:` with the actor's tape and update)."""
    branches: list[cst.BaseSuite] = [guard.body]
    orelse = guard.orelse
    while orelse is not None:
        branches.append(orelse.body)
        orelse = orelse.orelse if isinstance(orelse, cst.If) else None
    for branch in branches:
        if not isinstance(branch, cst.IndentedBlock) or not applies_gradients(branch):
            continue
        for statement in branch.body:
            if isinstance(statement, cst.With) and tape_name(ctx, statement) is not None:
                yield statement


def _loop_nodes(root: cst.CSTNode) -> list[cst.CSTNode]:
    return [
        n
        for n in iter_nodes(root, into_functions=False)
        if isinstance(n, (cst.For, cst.While)) and n is not root
    ]


def _contains(outer: cst.CSTNode, inner: cst.CSTNode) -> bool:
    return any(n is inner for n in iter_nodes(outer, into_functions=False))


def _scope_of(ctx: RuleContext, node: cst.CSTNode) -> cst.CSTNode:
    for function in reversed(ctx.functions):
        if function.traced is None and _contains(function.node.body, node):
            return function.node
    return ctx.module


def _owner(ctx: RuleContext, found: _Loop) -> str | None:
    """The class whose `self` the loop sees, when it is in a method."""
    scope = _scope_of(ctx, found.loop)
    function = ctx.scope_of(scope) if isinstance(scope, cst.FunctionDef) else None
    owner = ctx.class_of(function) if function is not None else None
    return owner[0] if owner is not None else None


class InlineTrainingLoop(Rule):
    code = "TFR303"
    name = "inline-training-loop"
    summary = (
        "A `GradientTape` block written inline in a loop runs eagerly: "
        "extract a `@tf.function` train step"
    )
    fix_applicability = Applicability.UNSAFE
    decorates_steps = True
    needs_traced_code = False
    explanation = """
        ## What it does
        Finds a `with tf.GradientTape()` block written directly in a `for`
        loop over batches, or a `while` loop drawing them (`batch =
        loader.next()`), with the gradient and optimizer update after it
        (`apply_gradients`, `minimize`, Keras 3's `optimizer.apply`, or a
        hand-written `w.assign_sub(lr * dw)`), and extracts it into a
        `@tf.function` train step. A tape block under an `if` in that loop
        whose branch applies its own update (a delayed actor update every
        few iterations) runs eagerly too: it is reported without a fix. So
        is a tape block in a loop that sums its gradients over mini-batches
        for one update after the loop (gradient accumulation: `total = [t +
        g for t, g in zip(total, grads)]`, then `apply_gradients` once).
        A function whose tape loop iterates what each call hands it (three
        generator updates over the `noises` of one batch), called by a loop
        that hands it an element of what that loop iterates, is a train
        step with loops of its own: TFR302 decorates it, and it is not
        reported.

        ## Why is this bad?
        Written inline, the step runs every op eagerly. Moved
        into a function decorated with `@tf.function`, the whole step runs as one
        graph (about 10x faster on a small model).

        ## How it fixes
        The fix extracts the tape block and the statements up to the last
        `apply_gradients`/`minimize` into a decorated step defined before the
        loop, named for the model it trains (`generator_train_step`) or
        `train_step`. Its parameters are the names the block reads that the loop
        defines (the batch, counters); it returns the names it assigns that code
        after it may read before binding them again (the loss an epoch logs, not
        the `grads` and `logits` every batch computes afresh). Loops whose tape
        blocks are identical (a training section and an evaluation section of
        one script) call one step. Every statement the loss depends on stays with the tape (a
        Python loop collecting one loss per output into a list is unrolled in
        the graph, as meant), and `del tape` goes with a persistent tape. Python
        side effects that do not feed the step (appending to a list outside it,
        `.numpy()` or `float()` for logging, `print`) stay in the loop, after
        the call, whether they were written inside the tape block or after it.
        A step extracted from a method (run per episode) becomes a method of its
        own, traced once per object instead of once per call. Options:
        `reduce_retracing=True` when the loop may feed a short final batch;
        `jit_compile` from a `tf.function` on the loss.

        The same `fix` then checks the step, and the functions it calls, as the
        traced code they now are: what a rule can fix there (a static shape,
        TFR107) is fixed in the same run, the rest reported.

        ## Refusals (reported without a fix, with the reason)
        Refused when a Python side effect feeds the step (a NumPy value used in
        the loss), the tape is used after the update, the step contains
        `break`, `continue` or `return`, or the loops around it build a new
        model or optimizer for
        it on each pass (one per ensemble member or fold): defined once before
        them, the step would create the second one's variables in a second
        trace, which raises; or the step indexes a NumPy array it closes
        over with a value it would take as an argument (`x_train[perm[:64]]`
        with the epoch's `perm = np.random.permutation(n)`): traced, that
        value is a symbolic tensor, and NumPy cannot index with one.

        ## Fix safety
        Always unsafe (applied with `--unsafe-fixes`): the step's Python code
        now runs once, at trace time, and names it closes over are read when it
        is traced. What moves into the step is chosen from the code's data flow
        (what the loss depends on, what later code reads), not proven to keep
        the loop's behaviour; review the diff, or run `tfrewrite verify`, which
        runs the loop before and after the rewrite for a few batches from the
        same initial weights.
    """
    examples = (
        Invalid(
            """
            import tensorflow as tf

            history = []
            for x, y in dataset.batch(32):
                with tf.GradientTape() as tape:
                    logits = model(x, training=True)
                    loss = loss_fn(y, logits)
                history.append(float(loss))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
            print(history[-1])
            """,
            """
            import tensorflow as tf

            history = []


            @tf.function(reduce_retracing=True)
            def train_step(x, y):
                with tf.GradientTape() as tape:
                    logits = model(x, training=True)
                    loss = loss_fn(y, logits)
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
                return loss


            for x, y in dataset.batch(32):
                loss = train_step(x, y)
                history.append(float(loss))
            print(history[-1])
            """,
            unsafe=True,
        ),
        Invalid(
            """
            import tensorflow as tf

            for step, (x, y) in enumerate(batches):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
                    print(step, loss.numpy())
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
            """,
            """
            import tensorflow as tf


            @tf.function
            def train_step(x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
                return loss


            for step, (x, y) in enumerate(batches):
                loss = train_step(x, y)
                print(step, loss.numpy())
            """,
            unsafe=True,
            note="logging inside the tape block moves out of the step",
        ),
        Invalid(
            """
            import numpy as np
            import tensorflow as tf

            def fit(model, optimizer, batches, epochs):
                for epoch in range(epochs):
                    for x, y in batches:
                        with tf.GradientTape() as tape:
                            scale = np.float32(0.5 ** epoch)
                            loss = scale * tf.reduce_mean(tf.square(model(x, training=True) - y))
                        grads = tape.gradient(loss, model.trainable_variables)
                        optimizer.apply_gradients(zip(grads, model.trainable_variables))
            """,
            None,
            unsafe=True,
            note="refused: a Python value computed in the tape block feeds the loss",
        ),
        Valid(
            """
            import tensorflow as tf

            @tf.function
            def train_step(x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
                return loss

            for x, y in batches:
                loss = train_step(x, y)
            """,
        ),
        Valid(
            """
            import tensorflow as tf

            for x in inputs:
                with tf.GradientTape() as tape:
                    tape.watch(x)
                    y = f(x)
                saliency.append(tape.gradient(y, x))
            """,
            note="no optimizer update: not a training loop",
        ),
    )

    def check(self, ctx: RuleContext) -> Iterator[Violation]:
        for found in _loops(ctx):
            message = (
                "This `GradientTape` block runs eagerly on every batch: extract it and the "
                "update into a `@tf.function` train step"
            )
            if found.accumulates:
                yield Violation(
                    found.tape,
                    "This `GradientTape` block runs eagerly on every pass of the loop, which "
                    "sums its gradients for one update after it: move the tape and its "
                    "`gradient` call into a `@tf.function` that returns the loss and the "
                    "gradients (no fix: the sum stays in the loop; extract the block by hand)",
                )
                continue
            if found.guard is not None:
                line = line_name_of(ctx, found.guard)
                yield Violation(
                    found.tape,
                    f"This `GradientTape` block runs eagerly, on the iterations the `if` on "
                    f"{line} selects: extract it and the update into a `@tf.function` train "
                    "step (no fix: the `if` stays in the loop; extract the block under it by "
                    "hand)",
                )
                continue
            fix, refusal = self._extract(ctx, found)
            if refusal is not None:
                yield Violation(found.tape, f"{message} (no fix: {refusal})")
            else:
                yield Violation(found.tape, message, fix)

    def _extract(self, ctx: RuleContext, found: _Loop) -> tuple[CstFix | None, str | None]:
        body = list(found.loop.body.body)  # type: ignore[union-attr]
        start = next(i for i, s in enumerate(body) if s is found.tape)
        end = max(i for i, s in enumerate(body) if i >= start and applies_gradients(s))
        region = body[start : end + 1]
        for statement in region:
            for node in iter_nodes(statement, into_functions=False):
                if isinstance(node, _CONTROL):
                    return None, f"{line_name_of(ctx, node)} leaves the loop body"
        tape_body = found.tape.body
        if not isinstance(tape_body, cst.IndentedBlock):
            return None, "the tape block is written on one line"
        # Statements in the order they run: the tape block's, then the rest.
        ordered = [*tape_body.body, *region[1:]]
        local = set(name_use(ordered).writes)
        moved_ids = {id(s) for s in ordered if _python_side_effect(ctx, s, local)}
        moved = [s for s in ordered if id(s) in moved_ids]
        recorded = [s for s in tape_body.body if id(s) not in moved_ids]
        if not recorded:
            return None, "the tape block holds only Python side effects"
        computing = (cst.Call, cst.Assign, cst.AugAssign, cst.AnnAssign)
        if not any(isinstance(n, computing) for s in recorded for n in iter_nodes(s)):
            # An exercise skeleton (`None` under `### START CODE HERE ###`):
            # there is no step yet, and its markers must stay where they are.
            return None, "the tape block computes nothing yet (a placeholder to fill in)"
        # A moved statement runs after the whole step: it must not feed the
        # step (every statement the loss depends on stays with the tape), nor
        # read a name the step rebinds after it.
        for position, statement in enumerate(ordered):
            if id(statement) not in moved_ids:
                continue
            use = name_use([statement])
            writes = set(use.writes) | _mutated(statement)
            later = [s for s in ordered[position + 1 :] if id(s) not in moved_ids]
            later_use = name_use(later)
            if writes & later_use.all_reads or set(use.all_reads) & (
                set(later_use.writes) | {n for s in later for n in _mutated(s)}
            ):
                return (
                    None,
                    f"{line_name_of(ctx, statement)} is a Python side effect "
                    "interleaved with the step",
                )
        new_tape = found.tape.with_changes(body=tape_body.with_changes(body=recorded))
        step = [new_tape, *(s for s in region[1:] if id(s) not in moved_ids)]
        tape = tape_name(ctx, found.tape)
        after = body[end + 1 :]
        releases = [s for s in after if _deletes(s, tape)]
        for statement in after:
            if statement in releases or tape not in set(mentioned_names(statement)):
                continue
            return None, f"{line_name_of(ctx, statement)} uses the tape after the update"
        step = [*step, *releases]
        step_use = name_use(step)
        # Parameters in the order the loops bind them (`for x, y in ...`).
        inputs = [n for n in name_use([found.outermost]).writes if n in step_use.reads]
        tapes = {tape}
        rebuilt = _rebuilt_owner(ctx, found, step, inputs)
        if rebuilt is not None:
            owner, binding = rebuilt
            return None, (
                f"{line_name_of(ctx, binding)} builds a new `{owner}` on each pass of the loop "
                "around the step, which would hand it to the same `tf.function`: its variables "
                "would be created in a second trace, and tf.function only supports singleton "
                "tf.Variables created on the first call"
            )
        home_class = _owner(ctx, found)
        host_loops = keras_host_loop_calls(ctx, step, home_class)
        if host_loops:
            call, what = host_loops[0]
            return None, f"{line_name_of(ctx, call)} {what}"
        schedule = failing_schedule(ctx, step)
        if schedule is not None:
            return None, f"{line_name(schedule.first_line)} {schedule.what}"
        indexed = numpy_indexed_by_argument(ctx, _scope_of(ctx, found.loop), step, inputs)
        if indexed is not None:
            subscript, array, argument = indexed
            return None, (
                f"{line_name_of(ctx, subscript)} indexes the NumPy array `{array}` with "
                f"`{argument}`, which the step would take as an argument: traced, it is a "
                "symbolic tensor, and NumPy cannot index with one (Cannot convert a symbolic "
                "tf.Tensor to a numpy array); index a tensor (`tf.gather`) or slice the batch "
                "before the step"
            )
        levels, anytime = _after_the_step(ctx, found, start, end)
        moved_reads = name_use(moved).all_reads
        outputs = [
            n
            for n in step_use.writes
            if n not in tapes and (n in moved_reads or read_later(n, levels, anytime))
        ]
        carried = _carried_state(found, body[:start], step, inputs, step_use.writes)
        python_values = _python_values(ctx, found) if carried else set()
        for carried_name in carried:
            if carried_name in python_values:
                # Named by a statement as written: the tape block in `step`
                # is rebuilt, and has no place in the file.
                written = [*recorded, *step[1:]]
                statement = next(s for s in written if carried_name in name_use([s]).writes)
                return None, (
                    f"{line_name_of(ctx, statement)} carries `{carried_name}` from one batch to "
                    "the next through the step: traced, it would come back as a tensor (a "
                    "Python number, or a list of variables as a list of tensors)"
                )
            if carried_name not in outputs:
                outputs.append(carried_name)  # the next batch's step reads it
        alias, imports = ctx.tensorflow()
        options = options_from_losses(ctx, _callee_keys(ctx, found.tape))
        # A short last batch costs one more trace, unless the step reads its
        # batch dimension statically: relaxed to `None`, that read would fail.
        if feeds_short_final_batch(ctx, found.loop) and not batch_dimension_read(
            ctx, step, home_class
        ):
            options.setdefault("reduce_retracing", "True")
        name = _step_name(ctx, step)
        returns = []
        if outputs:
            returns = [cst.parse_statement(f"return {', '.join(outputs)}")]
        hoist = _hoisting(ctx, found, step_use.reads, inputs)
        params = inputs if hoist is None else hoist.params
        refusal = _numpy_inputs(ctx, found, step, inputs) or _counter_inputs(
            ctx, found, step, params
        )
        if refusal is not None:
            return None, refusal
        function = cst.FunctionDef(
            name=cst.Name(name),
            params=cst.parse_expression(f"lambda {', '.join(params)}: 0").params,  # type: ignore[attr-defined]
            body=cst.IndentedBlock(body=[*_without_leading_lines(step), *returns]),
            decorators=[make_decorator(alias, options)],
        )
        arguments = [p for p in params if p != "self"]
        # A step made for batches of one size serves too when it allows others.
        variants = [function]
        if "reduce_retracing" not in options:
            retracing = make_decorator(alias, {**options, "reduce_retracing": "True"})
            variants.append(function.with_changes(decorators=[retracing]))
        siblings = _statements_around(ctx.module, found.outermost)
        same = same_step(ctx.module, siblings, found.outermost, variants) if hoist is None else None
        if same is not None:  # a step an earlier loop of the scope already calls
            name, function = same, None
        callee = name if hoist is None or not hoist.method else f"self.{name}"
        call = f"{callee}({', '.join(arguments)})"
        call_line = cst.parse_statement(f"{', '.join(outputs)} = {call}" if outputs else call)
        # The tape's comments go with it into the step; the call keeps the gap.
        blank = [line for line in found.tape.leading_lines if line.comment is None]
        call_line = call_line.with_changes(leading_lines=blank)
        rest = [s for s in body[end + 1 :] if not any(s is r for r in releases)]
        new_body = [*body[:start], call_line, *_without_leading_lines(moved), *rest]
        new_loop = found.loop.with_changes(body=found.loop.body.with_changes(body=new_body))
        outer = found.outermost
        new_outer = new_loop if outer is found.loop else outer.deep_replace(found.loop, new_loop)
        message = f"Extract the tape block into a `@tf.function` step `{name}`"
        if function is None:
            message = f"Replace the tape block by a call of the identical step `{name}`"
            edit = NodeEdit(outer, new_outer)
            return CstFix(message, (edit,), imports, Applicability.UNSAFE), None
        introduces = frozenset({f"{_placement(ctx, found, hoist)}:{name}"})
        if hoist is not None:
            edit = hoist.edit(function, outer, new_outer)
            where = "method" if hoist.method else "function"
            message += f", a {where} of its own so it is traced once, not on every call"
            return CstFix(message, (edit,), imports, Applicability.UNSAFE, introduces), None
        leading = list(outer.leading_lines)  # type: ignore[attr-defined]
        blank = 0
        while blank < len(leading) and leading[blank].comment is None:
            blank += 1
        siblings = _statements_around(ctx.module, outer)
        top_level = siblings is ctx.module.body
        gap = [cst.EmptyLine(indent=False)] * (2 if top_level else 1)
        before = leading[:blank]
        first = bool(siblings) and siblings[0] is outer
        if len(before) < len(gap) and not first:
            before = gap  # PEP 8 spacing, but no blank lines opening a file, cell or block
        function = function.with_changes(leading_lines=before)
        new_outer = new_outer.with_changes(leading_lines=[*gap, *leading[blank:]])  # type: ignore[union-attr]
        fix = CstFix(
            message,
            (NodeEdit(outer, cst.FlattenSentinel([function, new_outer])),),
            imports,
            Applicability.UNSAFE,
            introduces,
        )
        return fix, None


def _placement(ctx: RuleContext, found: _Loop, hoist: _Hoist | None) -> str:
    """The Python scope the new step is defined in: "" for the module, a
    function's or (for a hoisted method) a class's qualified name."""
    scope = hoist.scope if hoist is not None else _scope_of(ctx, found.loop)
    qualname = next((f.qualname for f in ctx.functions if f.node is scope), "")
    return qualname.rpartition(".")[0] if hoist is not None and hoist.method else qualname


def _carried_state(
    found: _Loop,
    before: list[cst.CSTNode],
    step: list[cst.CSTNode],
    inputs: list[str],
    writes: list[str],
) -> list[str]:
    """Names the step reads and rebinds for the next batch's step (a
    gradient accumulation's `count += 1`): the loops' own targets and names
    the loop body binds afresh before the step carry nothing."""
    inside = {id(n) for statement in step for n in iter_nodes(statement)}
    fresh = set(name_use(before).writes) | {
        n.value
        for loop in iter_nodes(found.outermost)
        if isinstance(loop, cst.For) and id(loop) not in inside
        for n in iter_nodes(loop.target)
        if isinstance(n, cst.Name)
    }
    return [name for name in inputs if name in writes and name not in fresh]


def _rebuilt_owner(
    ctx: RuleContext, found: _Loop, step: list[cst.CSTNode], inputs: list[str]
) -> tuple[str, cst.CSTNode] | None:
    """A model or optimizer the loops around the step bind afresh (one per
    ensemble member or fold) and the step would take as an argument: the
    step is defined once, before the outermost loop, so the second object
    meets a `tf.function` already traced, and creating its variables there
    raises. (name, binding statement), or None."""
    from tfrewrite.facts.models import trained_models

    block = cst.IndentedBlock(body=step)  # type: ignore[arg-type]
    owners = set(trained_models(ctx, block) or ())
    for node in iter_nodes(block):
        if isinstance(node, cst.Call) and is_optimizer_update_call(node):
            owner = dotted_name(node.func.value)  # type: ignore[attr-defined]
            if owner:
                owners.add(owner)
    inside = {id(n) for statement in step for n in iter_nodes(statement)}
    for node in iter_nodes(found.outermost, into_functions=False):
        if id(node) in inside:
            continue
        for target, value, _ in iter_assignments_here(node):
            if not isinstance(target, cst.Name) or target.value not in inputs:
                continue
            qualified = (
                ctx.names.qualified_name(value.func) if isinstance(value, cst.Call) else None
            )
            if target.value in owners or (qualified and builds_variables(qualified)):
                return target.value, node
    return None


def _numpy_inputs(
    ctx: RuleContext, found: _Loop, step: list[cst.CSTNode], inputs: list[str]
) -> str | None:
    """Why the step cannot take a NumPy array its scope builds and the step
    mixes with tensors (see `numpy_arguments`), or None."""
    uses = mixed_with_tensors(step, set(inputs))
    if not uses:
        return None
    arrays = numpy_arrays(ctx, _scope_of(ctx, found.loop))
    for name in inputs:
        if name in uses and name in arrays:
            operation = ctx.code(uses[name]).strip()
            return f"{line_name_of(ctx, arrays[name])} " + numpy_argument_hazard(
                name, "", operation
            )
    return None


def _counter_inputs(
    ctx: RuleContext, found: _Loop, step: list[cst.CSTNode], params: list[str]
) -> str | None:
    """Why the step cannot take a Python number the loop changes on every
    iteration (`for step in range(...)`, `batch_index += 1`): each new value
    would trace it again (TFR203), or None."""
    loops = [n for n in iter_nodes(found.outermost, into_functions=False) if isinstance(n, cst.For)]
    counters = {v for loop in loops if (v := python_int_loop_variable(loop, ctx)) is not None}
    counters |= changing_numbers(found.outermost) & literal_numbers(_scope_of(ctx, found.loop))  # type: ignore[arg-type]
    for name in params:
        if name not in counters:
            continue
        # The step opens with the tape block rebuilt without the side effects
        # that move out; the statements in it are the file's own.
        lines = [
            n
            for statement in step
            for n in iter_nodes(statement, into_functions=False)
            if isinstance(n, cst.SimpleStatementLine)
        ]
        read = next((s for s in lines if name in name_use([s]).all_reads), found.tape)
        return (
            f"{line_name_of(ctx, read)} reads `{name}`, a Python number the loop changes on every "
            "iteration: taken by a `tf.function` step, each new value traces it again (TFR203); "
            f"keep it out of the step or hand it over as a tensor (`tf.constant({name})`)"
        )
    return None


def _python_values(ctx: RuleContext, found: _Loop) -> set[str]:
    """Names the loop's scope binds to a Python number or list: traced, the
    step would return them as tensors (`assign_add` on a returned tensor
    fails where the list of variables had it)."""
    return {
        target.value
        for target, value, _ in iter_assignments(_scope_of(ctx, found.loop))
        if isinstance(target, cst.Name)
        and isinstance(value, (cst.Integer, cst.Float, cst.List, cst.ListComp, cst.Tuple))
    }


def _statements_around(module: cst.Module, statement: cst.CSTNode) -> Sequence[cst.CSTNode]:
    """The statement list holding `statement` (the module's body itself when
    it is a top-level statement; empty when it is not found)."""
    if any(s is statement for s in module.body):
        return module.body
    for node in iter_nodes(module):
        body = getattr(node, "body", None)
        if isinstance(body, cst.IndentedBlock) and any(s is statement for s in body.body):
            return body.body
    return ()


def extractable_loops(ctx: RuleContext) -> list[cst.CSTNode]:
    """The loop statements this rule's fix rewrites whole (the outermost loop
    around each tape block it can extract)."""
    rule = InlineTrainingLoop()
    return [found.outermost for found in _loops(ctx) if rule._extract(ctx, found)[0] is not None]


@dataclass
class _Hoist:
    """Where a step extracted from a method goes so that it is traced once:
    a method beside it, taking the method's parameters it reads."""

    scope: cst.FunctionDef
    params: list[str]
    method: bool = True

    def edit(self, step: cst.FunctionDef, outer: cst.CSTNode, new_outer: cst.CSTNode) -> NodeEdit:
        scope = self.scope.deep_replace(outer, new_outer)
        step = step.with_changes(leading_lines=[cst.EmptyLine(indent=False)])
        return NodeEdit(self.scope, cst.FlattenSentinel([scope, step]))


def _hoisting(ctx: RuleContext, found: _Loop, reads: list[str], inputs: list[str]) -> _Hoist | None:
    """A step extracted from a method (run per episode, per epoch) becomes a
    method of its own: defined inside, each call would make a new
    `tf.function` and trace it again; as a method it is traced once per
    object, and the variables its model and optimizer create on the first
    call belong to that object. A step extracted from a plain function stays
    nested in it: hoisted, a second call with a fresh model or optimizer (a
    new fold) would create variables in a second trace, which `tf.function`
    refuses. None when the step stays where it is."""
    node = _scope_of(ctx, found.loop)
    if not isinstance(node, cst.FunctionDef) or node.asynchronous is not None:
        return None
    scope = ctx.scope_of(node)
    if scope is None or scope.parent is not None or node.decorators or not scope.is_method:
        return None
    if not ctx.code(node.params).startswith("self"):
        return None
    params = node.params
    bound = {p.name.value for p in [*params.posonly_params, *params.params, *params.kwonly_params]}
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            bound.add(star.name.value)
    body = list(getattr(node.body, "body", ()))
    local = set(name_use(body).writes) - bound
    if any(n in local and n not in inputs for n in reads):
        return None  # reads a value the method computes: it stays beside it
    extra = [n for n in reads if n in bound and n not in inputs and n != "self"]
    return _Hoist(node, ["self", *inputs, *extra])


def _python_side_effect(ctx: RuleContext, statement: cst.CSTNode, local: set[str]) -> bool:
    """A side effect that must leave the step: appending to a list the step
    builds itself (a Python-unrolled loop collecting each output's loss) is
    not one; it runs at trace time and builds the graph, as meant."""
    for node, _ in side_effects(ctx, statement):
        if isinstance(node, cst.Call) and method_name(node) in LIST_GROWING_METHODS:
            owner = dotted_name(node.func.value)  # type: ignore[attr-defined]
            if owner in local:
                continue
        return True
    return False


def _mutated(statement: cst.CSTNode) -> set[str]:
    """Names whose objects `statement` changes in place (`losses.append(...)`)."""
    return {
        owner
        for node in iter_nodes(statement, into_functions=False)
        if isinstance(node, cst.Call) and method_name(node) in LIST_GROWING_METHODS
        if (owner := dotted_name(node.func.value))  # type: ignore[attr-defined]
    }


def _deletes(statement: cst.CSTNode, name: str) -> bool:
    """`del tape`: the release of a persistent tape, which moves with it."""
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Del)
        and isinstance(statement.body[0].target, cst.Name)
        and statement.body[0].target.value == name
    )


def _step_name(ctx: RuleContext, step: list[cst.CSTNode]) -> str:
    """Named for the model it trains (`generator_train_step`), or
    `train_step`; a numbered copy only when both are taken."""
    from tfrewrite.facts.models import trained_models

    used = {n.value for n in iter_nodes(ctx.module) if isinstance(n, cst.Name)}
    block = cst.IndentedBlock(body=step)  # type: ignore[arg-type]
    models = sorted({m.rsplit(".", 1)[-1] for m in trained_models(ctx, block) or ()})
    if len(models) == 1 and models[0] not in ("model", "self"):
        candidate = f"{models[0]}_train_step"  # two steps of a GAN read apart
        if candidate.isidentifier() and candidate not in used:
            return candidate
    return fresh_name(ctx, "train_step")


def _after_the_step(
    ctx: RuleContext, found: _Loop, start: int, end: int
) -> tuple[list[Level], list[cst.CSTNode]]:
    """Where control goes after the step replaces `body[start:end + 1]` of the
    loop (see `liveness.paths_after`)."""
    return paths_after(_scope_of(ctx, found.loop), found.loop, start, end)


def _without_leading_lines(statements: list[cst.CSTNode]) -> list[cst.CSTNode]:
    """Statements moved to a new block keep their comments, not blank lines."""
    result = []
    for statement in statements:
        lines = [
            line for line in getattr(statement, "leading_lines", ()) if line.comment is not None
        ]
        result.append(statement.with_changes(leading_lines=lines))
    return result


def _callee_keys(ctx: RuleContext, root: cst.CSTNode) -> list[str]:
    """Names of everything called in `root`, as pass 1 names them."""
    keys = []
    for node in iter_nodes(root):
        if isinstance(node, cst.Call):
            local = dotted_name(node.func)
            qualified = ctx.names.qualified_name(node.func)
            keys += [k for k in (qualified, local, local and ctx.index.qualify(local)) if k]
    return keys


RULES = (InlineTrainingLoop,)
