"""Training-loop facts shared by the TFR3xx rules (and the engine's fix
rounds): `@tf.function` decorators and their options, `GradientTape` blocks,
train steps, the loops that drive them, Python side effects, and which names
a block reads and writes. The rules differ in what they report; what a train
step *is* is decided here, once.
"""

from __future__ import annotations

from collections.abc import Container, Iterator
from dataclasses import dataclass, field

import libcst as cst

from tfrewrite.facts.context import FunctionScope, RuleContext
from tfrewrite.facts.index import TF_FUNCTION_NAMES
from tfrewrite.facts.names import dotted_name
from tfrewrite.facts.walk import child_nodes, iter_nodes
from tfrewrite.rewrite.fixes import CstFix, NodeEdit, Violation

# Options of a loss's `tf.function` that describe how the whole step should be
# compiled; a step that takes over the decorator takes these over too.
CARRIED_OPTIONS = ("jit_compile", "reduce_retracing")
APPLY_METHODS = ("apply_gradients", "minimize")
# Calls that are Python side effects: they run once under tracing, or fail.
SIDE_EFFECT_CALLS = frozenset({"print", "float", "int", "input", "open"})
SIDE_EFFECT_METHODS = frozenset({"numpy", "item", "tolist", "append", "extend", "insert"})
SIDE_EFFECT_MODULES = ("numpy.", "time.", "logging.", "random.", "tqdm.")
# Side effects that are fine in traced code when the container is local (a
# Python-unrolled loop collecting tensors); rules on traced code report the
# ones that mutate state outside the step.
CONTAINER_METHODS = frozenset({"append", "extend", "insert"})
# Findings that do not stop a step from taking a plain `@tf.function`, fixed
# or not: AutoGraph (on by default) converts a Python `if` on a tensor the way
# the original ran it; the finding stays, for code that must not need AutoGraph.
AUTOGRAPH_CONVERTS = frozenset({"TFR101"})


# -- tf.function ----------------------------------------------------------------------


def is_tf_function(ctx: RuleContext, expr: cst.BaseExpression) -> bool:
    """`tf.function`, `tensorflow.function`, `from tensorflow import function`."""
    return ctx.names.qualified_name(expr) in TF_FUNCTION_NAMES


def tf_function_decorator(ctx: RuleContext, node: cst.FunctionDef) -> cst.Decorator | None:
    for decorator in node.decorators:
        expr = decorator.decorator
        target = expr.func if isinstance(expr, cst.Call) else expr
        if is_tf_function(ctx, target):
            return decorator
    return None


def carried_options(keywords: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in keywords.items() if k in CARRIED_OPTIONS}


def decorator_source(alias: str, options: dict[str, str]) -> str:
    """`tf.function` or `tf.function(jit_compile=True, reduce_retracing=True)`."""
    if not options:
        return f"{alias}.function"
    arguments = ", ".join(f"{k}={v}" for k, v in options.items())
    return f"{alias}.function({arguments})"


def make_decorator(alias: str, options: dict[str, str]) -> cst.Decorator:
    return cst.Decorator(decorator=cst.parse_expression(decorator_source(alias, options)))


# -- gradient tapes -------------------------------------------------------------------


def tape_name(ctx: RuleContext, node: cst.With) -> str | None:
    """The name a `with tf.GradientTape() as tape:` binds ("" when unnamed),
    or None when the block opens no tape."""
    for item in node.items:
        expr = item.item
        target = expr.func if isinstance(expr, cst.Call) else expr
        qualified = ctx.names.qualified_name(target) or dotted_name(target) or ""
        if qualified.endswith("GradientTape"):
            if item.asname is not None and isinstance(item.asname.name, cst.Name):
                return item.asname.name.value
            return ""
    return None


def tape_blocks(ctx: RuleContext, root: cst.CSTNode) -> Iterator[tuple[cst.With, str]]:
    """Every tape `with` block under `root` (not inside nested definitions)."""
    for node in iter_nodes(root, into_functions=False):
        if isinstance(node, cst.With):
            name = tape_name(ctx, node)
            if name is not None:
                yield node, name


def method_name(call: cst.Call) -> str | None:
    return call.func.attr.value if isinstance(call.func, cst.Attribute) else None


def is_update_call(call: cst.Call) -> bool:
    """A call that applies gradients: `opt.apply_gradients(...)`,
    `opt.minimize(...)`, Keras 3's `optimizer.apply(grads, variables)`, or a
    hand-written descent step `w.assign_sub(lr * dw)`."""
    method = method_name(call)
    if method in APPLY_METHODS:
        return True
    if method == "assign_sub":
        return bool(call.args) and not isinstance(call.args[0].value, (cst.Integer, cst.Float))
    if method == "apply" and len(call.args) >= 1:
        receiver = dotted_name(call.func.value) or ""  # type: ignore[attr-defined]
        return "opt" in receiver.rsplit(".", 1)[-1].lower()
    return False


def applies_gradients(root: cst.CSTNode) -> bool:
    return any(
        isinstance(n, cst.Call) and is_update_call(n)
        for n in iter_nodes(root, into_functions=False)
    )


def is_train_step(ctx: RuleContext, function: FunctionScope) -> bool:
    """Opens a tape and applies gradients: a custom train step."""
    body = function.node.body
    return any(True for _ in tape_blocks(ctx, body)) and applies_gradients(body)


def is_keras_train_step_override(ctx: RuleContext, function: FunctionScope) -> bool:
    """`Model.train_step`: Keras traces it already. A class whose base cannot
    be followed counts as a model when a base's name says `Model`."""
    if not function.is_method or function.node.name.value not in ("train_step", "test_step"):
        return False
    info = ctx.index.classes.get(function.class_name or "")
    return info is None or any("Model" in base.rsplit(".", 1)[-1] for base in info.bases)


# -- Python side effects ----------------------------------------------------------------


def side_effects(ctx: RuleContext, root: cst.CSTNode) -> Iterator[tuple[cst.CSTNode, str]]:
    """Python side effects under `root`: what runs once at trace time (or
    fails on symbolic tensors) when `root` moves into a `tf.function`."""
    for node in iter_nodes(root, into_functions=False):
        if isinstance(node, (cst.Global, cst.Nonlocal)):
            yield node, "rebinds a name outside the function"
        if not isinstance(node, cst.Call):
            continue
        if isinstance(node.func, cst.Name) and node.func.value in SIDE_EFFECT_CALLS:
            yield node, f"calls Python `{node.func.value}()`"
            continue
        method = method_name(node)
        if method in SIDE_EFFECT_METHODS:
            yield node, f"calls `.{method}()`"
            continue
        qualified = ctx.names.qualified_name(node.func) or ""
        if qualified.startswith(SIDE_EFFECT_MODULES):
            yield node, f"calls `{qualified}`"


# -- loops ------------------------------------------------------------------------------


def calls_to(root: cst.CSTNode, name: str) -> Iterator[cst.Call]:
    for node in iter_nodes(root):
        if isinstance(node, cst.Call) and dotted_name(node.func) in (name, f"self.{name}"):
            yield node


def loops_calling(ctx: RuleContext, name: str) -> list[cst.For | cst.While]:
    """Loops anywhere in the file whose body calls `name`."""
    return [
        node
        for node in iter_nodes(ctx.module)
        if isinstance(node, (cst.For, cst.While)) and any(True for _ in calls_to(node.body, name))
    ]


def _assigned_values(ctx: RuleContext, name: str) -> list[cst.BaseExpression]:
    values = []
    for node in iter_nodes(ctx.module):
        if isinstance(node, cst.Assign) and any(
            isinstance(t.target, cst.Name) and t.target.value == name for t in node.targets
        ):
            values.append(node.value)
    return values


def value_sources(
    ctx: RuleContext, expr: cst.BaseExpression, depth: int = 0
) -> list[cst.BaseExpression]:
    """`expr` and what it stands for: the values a name is assigned, the
    values a module function called without arguments returns (two levels)."""
    sources = [expr]
    if depth >= 2:
        return sources
    if isinstance(expr, cst.Name):
        for value in _assigned_values(ctx, expr.value):
            sources += value_sources(ctx, value, depth + 1)
    elif isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name):
        for function in ctx.functions:
            if (
                function.parent is None
                and not function.is_method
                and function.node.name.value == expr.func.value
            ):
                for node in iter_nodes(function.node.body, into_functions=False):
                    if isinstance(node, cst.Return) and node.value is not None:
                        sources += value_sources(ctx, node.value, depth + 1)
    return sources


def _batch_without_drop(expr: cst.BaseExpression) -> bool:
    """A `.batch(n)` (anywhere in a method chain) that keeps the remainder."""
    for node in iter_nodes(expr):
        if isinstance(node, cst.Call) and method_name(node) in ("batch", "padded_batch"):
            drop = next(
                (a.value for a in node.args if a.keyword and a.keyword.value == "drop_remainder"),
                None,
            )
            if drop is None or not (isinstance(drop, cst.Name) and drop.value == "True"):
                return True
    return False


def drops_remainder(ctx: RuleContext, loop: cst.For | cst.While) -> bool:
    """Whether every batch the loop iterates has the same size: its source is
    a dataset batched with `drop_remainder=True` (and none without)."""
    if not isinstance(loop, cst.For):
        return False
    source = loop.iter
    if isinstance(source, cst.Call) and dotted_name(source.func) in ("enumerate", "zip", "iter"):
        candidates = [a.value for a in source.args]
    else:
        candidates = [source]
    dropping = False
    for expr in candidates:
        for value in value_sources(ctx, expr):
            for node in iter_nodes(value):
                if isinstance(node, cst.Call) and method_name(node) in ("batch", "padded_batch"):
                    if _batch_without_drop(node):
                        return False
                    dropping = True
    return dropping


def feeds_short_final_batch(ctx: RuleContext, loop: cst.For | cst.While) -> bool:
    """Whether the loop may feed a last batch smaller than the others:
    `for x, y in ds.batch(64)` (no `drop_remainder=True`), a name bound to
    such a dataset, or `range(0, n, batch_size)` slicing."""
    if not isinstance(loop, cst.For):
        return False
    source = loop.iter
    if isinstance(source, cst.Call) and dotted_name(source.func) in ("enumerate", "zip", "iter"):
        candidates = [a.value for a in source.args]
    else:
        candidates = [source]
    for expr in candidates:
        if any(_batch_without_drop(v) for v in value_sources(ctx, expr)):
            return True
        if isinstance(expr, cst.Call) and dotted_name(expr.func) == "range" and len(expr.args) == 3:
            step = expr.args[2].value
            if not (isinstance(step, cst.Integer) and step.value == "1"):
                return True
    return False


# -- names read and written -------------------------------------------------------------


@dataclass
class NameUse:
    reads: list[str]  # names read before any write in the block, in order
    writes: list[str]  # names written, in order
    all_reads: set[str]


def mentioned_names(node: cst.CSTNode, skip: Container[int] = ()) -> Iterator[str]:
    """Every plain name under `node` that reads or binds a name of the
    enclosing scope, in source order, except attribute names (`x.attr`
    mentions `x`), keyword names (`f(k=v)` mentions `v`), what lies under a
    node whose `id` is in `skip`, and the names a comprehension or a lambda
    binds for itself (`v` in `sum(v * n for v, n in pairs)` is not the `v`
    of the enclosing scope)."""
    # Each node with the names local to the comprehensions and lambdas around it.
    stack: list[tuple[cst.CSTNode, frozenset[str]]] = [(node, frozenset())]
    while stack:
        current, local = stack.pop()
        if id(current) in skip:
            continue
        if isinstance(current, cst.Name):
            if current.value not in local:
                yield current.value
        elif isinstance(current, (cst.Attribute, cst.Arg)):
            stack.append((current.value, local))
        elif isinstance(current, _COMPREHENSIONS):
            bound = local | _comprehension_targets(current.for_in)
            if isinstance(current, cst.DictComp):
                results: list[cst.CSTNode] = [current.key, current.value]
            else:
                results = [current.elt]
            parts = [(result, bound) for result in results]
            comp: cst.CompFor | None = current.for_in
            while comp is not None:
                # The outermost iterable is evaluated in the enclosing scope.
                parts.append((comp.iter, local if comp is current.for_in else bound))
                parts += [(condition.test, bound) for condition in comp.ifs]
                comp = comp.inner_for_in
            stack.extend(reversed(parts))
        elif isinstance(current, cst.Lambda):
            params = current.params
            names = {
                p.name.value
                for p in [*params.posonly_params, *params.params, *params.kwonly_params]
            }
            for star in (params.star_arg, params.star_kwarg):
                if isinstance(star, cst.Param):
                    names.add(star.name.value)
            defaults = [
                p.default
                for p in [*params.posonly_params, *params.params, *params.kwonly_params]
                if p.default is not None
            ]
            stack.append((current.body, local | names))
            stack.extend((d, local) for d in reversed(defaults))
        else:
            stack.extend((child, local) for child in reversed(child_nodes(current)))


_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)


def _comprehension_targets(comp: cst.CompFor | None) -> frozenset[str]:
    """The names every `for` of a comprehension binds."""
    names: set[str] = set()
    while comp is not None:
        names.update(n.value for n in iter_nodes(comp.target) if isinstance(n, cst.Name))
        comp = comp.inner_for_in
    return frozenset(names)


def target_names(target: cst.BaseExpression) -> tuple[list[str], list[cst.CSTNode]]:
    """(names bound by an assignment target, sub-expressions it reads)."""
    if isinstance(target, cst.Name):
        return [target.value], []
    if isinstance(target, (cst.Tuple, cst.List)):
        names: list[str] = []
        reads: list[cst.CSTNode] = []
        for element in target.elements:
            n, r = target_names(element.value)
            names += n
            reads += r
        return names, reads
    if isinstance(target, cst.StarredElement):
        return target_names(target.value)
    return [], [target]  # attribute / subscript: reads its base


class _NameCollector:
    """Reads and writes of plain names in statement order (a conservative
    approximation: every `Name` in a load position counts as a read)."""

    def __init__(self) -> None:
        self.reads: list[str] = []
        self.writes: list[str] = []
        self.all_reads: set[str] = set()

    def read(self, name: str) -> None:
        self.all_reads.add(name)
        if name not in self.writes and name not in self.reads:
            self.reads.append(name)

    def write(self, name: str) -> None:
        if name not in self.writes:
            self.writes.append(name)

    def expression(self, node: cst.CSTNode) -> None:
        for name in mentioned_names(node):
            self.read(name)

    def assign(self, target: cst.BaseExpression) -> None:
        """An assignment target: what it reads (`d[k] = v` reads `d` and
        `k`), then the names it binds."""
        names, reads = target_names(target)
        for r in reads:
            self.expression(r)
        for n in names:
            self.write(n)

    def statement(self, node: cst.CSTNode) -> None:
        if isinstance(node, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            for small in node.body:
                self.statement(small)
        elif isinstance(node, cst.Assign):
            self.expression(node.value)
            for target in node.targets:
                self.assign(target.target)
        elif isinstance(node, cst.AnnAssign):
            if node.value is not None:
                self.expression(node.value)
            self.assign(node.target)
        elif isinstance(node, cst.AugAssign):
            self.expression(node.value)
            self.expression(node.target)
            names, _ = target_names(node.target)
            for n in names:
                self.write(n)
        elif isinstance(node, cst.With):
            for item in node.items:
                self.expression(item.item)
                if item.asname is not None:
                    self.assign(item.asname.name)
            self.block(node.body)
        elif isinstance(node, cst.For):
            self.expression(node.iter)
            names, _ = target_names(node.target)
            for n in names:
                self.write(n)
            self.block(node.body)
            if node.orelse is not None:
                self.block(node.orelse.body)
        elif isinstance(node, cst.If):
            self.expression(node.test)
            self.block(node.body)
            if node.orelse is not None:
                orelse = node.orelse
                if isinstance(orelse, cst.If):
                    self.statement(orelse)
                else:
                    self.block(orelse.body)
        elif isinstance(node, cst.While):
            self.expression(node.test)
            self.block(node.body)
        elif isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            self.write(node.name.value)
        else:
            self.expression(node)

    def block(self, suite: cst.BaseSuite) -> None:
        if isinstance(suite, cst.IndentedBlock):
            for statement in suite.body:
                self.statement(statement)
        elif isinstance(suite, cst.SimpleStatementSuite):
            self.statement(suite)


def name_use(statements: list[cst.CSTNode]) -> NameUse:
    collector = _NameCollector()
    for statement in statements:
        collector.statement(statement)
    return NameUse(collector.reads, collector.writes, collector.all_reads)


def unique_name(ctx: RuleContext, base: str) -> str:
    """`base`, or `base_2`, ... when the file already uses that name."""
    used = {n.value for n in iter_nodes(ctx.module) if isinstance(n, cst.Name)}
    if base not in used:
        return base
    suffix = 2
    while f"{base}_{suffix}" in used:
        suffix += 1
    return f"{base}_{suffix}"


def line_of(ctx: RuleContext, node: cst.CSTNode) -> int:
    """1-based line of `node`."""
    return ctx.lines([node])[0][0]


def lines_of(ctx: RuleContext, node: cst.CSTNode) -> tuple[int, int]:
    """1-based first and last line of `node`."""
    return ctx.lines([node])[0]


# -- train steps that want a decorator ----------------------------------------------------


@dataclass(frozen=True)
class Blocker:
    """Something a step does that changes meaning under tracing; a rule on
    traced code must fix it (a finding with a fix on these lines) before the
    step may be decorated."""

    first_line: int
    last_line: int
    what: str


@dataclass(frozen=True)
class StepViolation(Violation):
    """A finding whose fix decorates train steps (which the shared analysis
    marks `pending`, so rules on traced code check them in the same run). The
    engine applies the fix
    only together with fixes for everything the steps (and what they call)
    would do differently under tracing; otherwise it drops the fix (keeping
    `fallback`, a fix without the decoration) and lists every blocker."""

    steps: tuple[cst.FunctionDef, ...] = ()
    blockers: tuple[Blocker, ...] = ()
    fallback: CstFix | None = None


@dataclass
class StepPlan:
    """An undecorated train step called from a Python loop, and how to
    decorate it: the Python side effects in it are blockers that rules on
    traced code must fix in the same run."""

    function: FunctionScope
    options: dict[str, str]
    loss_callees: list[str]  # dotted names of the losses it differentiates
    blockers: list[Blocker]
    # A method that no loop in its module calls: a loop elsewhere calls
    # `obj.name(...)` and only this class has a train-step method `name`.
    by_method_name: bool = False
    # Calls of methods of held objects whose class tfrewrite cannot see
    # (`step_hazards.unseen_held_objects`): decorating is not proven safe.
    unseen_calls: list[str] = field(default_factory=list)
    # Star-imported modules the project does not hold: names the step uses
    # may come from them, so what it calls is not known.
    unseen_star_imports: list[str] = field(default_factory=list)
    # Decorators of the step whose wrapper is not known (`@timed`): the
    # `tf.function` would trace the wrapper too.
    unknown_decorators: list[str] = field(default_factory=list)

    @property
    def unproven(self) -> str | None:
        """Why decorating the step is an unsafe fix, or None when it is proven."""
        if self.by_method_name:
            return "the loop's call is matched to this method by its name only"
        if self.unknown_decorators:
            listed = ", ".join(f"`@{d}`" for d in self.unknown_decorators)
            return (
                f"the step is wrapped by {listed}: `@tf.function` would trace the wrapper too, "
                "and what it does is not known"
            )
        if self.unseen_star_imports:
            imports = ", ".join(f"`from {m} import *`" for m in self.unseen_star_imports)
            return (
                f"the file takes names from {imports}, which tfrewrite cannot see: what "
                "they are is not known"
            )
        if self.unseen_calls:
            calls = ", ".join(self.unseen_calls)
            return (
                f"it calls {calls} on an object whose class tfrewrite cannot see: a Python "
                "method would run once, at trace time"
            )
        return None


def loss_keys(ctx: RuleContext, function: FunctionScope) -> list[str]:
    """Callees (as pass 1 names them) of the losses `function`'s tape differentiates."""
    return [t.callee for t in ctx.index.tape_losses if t.function == function.qualname]


def options_from_losses(ctx: RuleContext, callees: list[str]) -> dict[str, str]:
    options: dict[str, str] = {}
    for callee in callees:
        options.update(carried_options(ctx.index.loss_decorator_options.get(callee, {})))
    return options


def undecorated_train_steps(ctx: RuleContext) -> list[StepPlan]:
    plans = []
    for function in ctx.functions:
        info = ctx.index.functions.get(function.qualname)
        if info is None or not (info.opens_gradient_tape and info.applies_gradients):
            continue
        if info.tape_in_loop:
            continue  # a training loop with its own tape loop: TFR303's case
        if function.traced is not None:
            continue
        if info.consumes_grown_lists:
            continue  # eager by design: every call sees lists of a new length
        if tf_function_decorator(ctx, function.node) is not None:
            continue
        if is_keras_train_step_override(ctx, function) or not is_train_step(ctx, function):
            continue
        if function.node.asynchronous is not None or any(
            isinstance(n, (cst.Yield, cst.Await))
            for n in iter_nodes(function.node.body, into_functions=False)
        ):
            continue  # a generator or coroutine cannot become a tf.function
        loops = loops_calling(ctx, function.node.name.value)
        looped = ctx.index.looped_functions.get(function.qualname)
        if not loops and looped is None:
            continue
        callees = loss_keys(ctx, function)
        options = options_from_losses(ctx, callees)
        from tfrewrite.facts.step_hazards import (
            decoration_blockers,
            reads_static_shape,
            step_decorators,
            unseen_held_objects,
        )

        traced_by_wrapper, unknown_decorators = step_decorators(ctx, function.node)
        if traced_by_wrapper:
            continue  # `@distributed(...)` returns a `tf.function` of its own

        short_batches = looped or any(feeds_short_final_batch(ctx, loop) for loop in loops)
        # A short last batch then costs one more trace, not a `None` batch size
        # in the step's shape arithmetic.
        if short_batches and not reads_static_shape(function):
            options.setdefault("reduce_retracing", "True")
        blockers = decoration_blockers(ctx, function, loops, options)
        by_method_name = function.is_method and not loops
        unseen = unseen_held_objects(ctx, function)
        plans.append(
            StepPlan(
                function,
                options,
                callees,
                blockers,
                by_method_name,
                unseen,
                list(ctx.index.unseen_star_imports),
                unknown_decorators,
            )
        )
    return plans


def decorated_step(ctx: RuleContext, plan: StepPlan) -> tuple[cst.FunctionDef, tuple]:
    """The step with `@tf.function(...)` added, and the imports that needs."""
    alias, imports = ctx.tensorflow()
    node = plan.function.node
    decorator = make_decorator(alias, plan.options)
    return node.with_changes(decorators=[decorator, *node.decorators]), imports


def remove_statement_edits(
    block: cst.CSTNode | None, line: cst.SimpleStatementLine, moved: bool = False
) -> tuple[NodeEdit, ...]:
    """Edits that delete a statement line: `pass` when it is alone in its
    block; otherwise the next statement inherits its comments (unless the
    statement is `moved`: its comments go with it) and the wider of the two
    blank-line gaps, so the layout around it stays as it was."""
    body = list(getattr(block, "body", ())) if block is not None else []
    if isinstance(block, cst.IndentedBlock) and len(body) == 1:
        return (NodeEdit(line, line.with_changes(body=[cst.Pass()])),)
    position = next((i for i, s in enumerate(body) if s is line), None)
    edits = [NodeEdit(line, cst.RemovalSentinel.REMOVE)]
    if position is not None and position + 1 < len(body) and line.leading_lines:
        following = body[position + 1]
        removed = [e for e in line.leading_lines if not (moved and e.comment is not None)]
        kept = list(following.leading_lines)
        if any(empty.comment is not None for empty in removed):
            merged = [*removed, *kept]
        else:  # only blank lines: keep the wider gap, not the sum
            blank = next((i for i, e in enumerate(kept) if e.comment is not None), len(kept))
            merged = [*removed[: max(0, len(removed) - blank)], *kept]
        if len(merged) != len(kept):
            edits.append(NodeEdit(following, following.with_changes(leading_lines=merged)))
    return tuple(edits)
