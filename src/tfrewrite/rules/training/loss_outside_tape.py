"""TFR305: `tape.gradient(loss, ...)` on a loss computed after the tape
closed."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from tfrewrite.facts.blockers import line_name_of, line_of
from tfrewrite.facts.context import RuleContext
from tfrewrite.facts.name_use import mentioned_names, name_use
from tfrewrite.facts.names import dotted_name
from tfrewrite.facts.training import (
    method_name,
    side_effects,
    tape_name,
)
from tfrewrite.facts.walk import iter_nodes, iter_with_ancestors
from tfrewrite.findings import Applicability
from tfrewrite.rewrite.fixes import CstFix, NodeEdit, Violation
from tfrewrite.rules.base import Invalid, Rule, Valid
from tfrewrite.rules.training.statements import remove_statement_edits
from tfrewrite.rules.training.tape_scopes import opened_tapes, scope_body, scopes
from tfrewrite.workspace.line_names import line_names


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
        for root, _, _ in scopes(ctx):
            yield from self._check_scope(ctx, root)

    def _check_scope(self, ctx: RuleContext, root: cst.CSTNode) -> Iterator[Violation]:
        body = scope_body(root)
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
                for name in opened_tapes(ctx, a, tapes_closed)
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
        body = scope_body(root)
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
        (`total = loss`), also as one of several values a Python condition
        picks (`if self.loss_type == "noise": loss = noise_loss`): the tape
        recorded the value itself. Every assignment after the block to a
        name the value comes from must then give another name."""
        if self.statement is None:
            return False
        needed = set(mentioned_names(self.target))
        for statement in reversed(self.gap):
            writes = set(name_use([statement]).writes) & needed
            if not writes:
                continue
            renamed: set[str] = set()
            for node in iter_nodes(statement, into_functions=False):
                if isinstance(node, (cst.AugAssign, cst.AnnAssign, cst.NamedExpr)):
                    if set(mentioned_names(node.target)) & writes:
                        return False
                elif isinstance(node, cst.Assign) and any(
                    set(mentioned_names(t.target)) & writes for t in node.targets
                ):
                    sources = _renamed_from(node, writes)
                    if sources is None:
                        return False
                    renamed |= sources
            needed = (needed - writes) | renamed
        return True

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


def _renamed_from(assign: cst.Assign, names: set[str]) -> set[str] | None:
    """The names `assign` copies into `names` (`loss = noise_loss`, `total,
    count = loss, 1`); None when it computes one of them instead."""
    if len(assign.targets) != 1:
        return None
    target, value = assign.targets[0].target, assign.value
    pairs: list[tuple[cst.BaseExpression, cst.BaseExpression]] = [(target, value)]
    if isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List)):
        if len(target.elements) != len(value.elements):
            return None
        pairs = [(t.value, v.value) for t, v in zip(target.elements, value.elements, strict=True)]
    sources: set[str] = set()
    for name, given in pairs:
        if not set(mentioned_names(name)) & names:
            continue
        if not isinstance(given, cst.Name):
            return None
        sources.add(given.value)
    return sources


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


RULES = (LossOutsideTape,)
