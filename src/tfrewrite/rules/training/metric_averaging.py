"""TFR306: the mean of per-batch metric values over-weights a short batch."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst

from tfrewrite.facts.context import RuleContext
from tfrewrite.facts.name_use import mentioned_names
from tfrewrite.facts.names import dotted_name
from tfrewrite.facts.python_counters import counts_iterations, iteration_index
from tfrewrite.facts.training import (
    drops_remainder,
    feeds_short_final_batch,
    method_name,
    tape_name,
)
from tfrewrite.facts.vocabulary import MEAN_FUNCTIONS
from tfrewrite.facts.walk import iter_nodes, iter_with_ancestors
from tfrewrite.findings import Applicability
from tfrewrite.rewrite.fixes import CstFix, NodeEdit, Violation
from tfrewrite.rules.base import Invalid, Rule, Valid

_NUMPY_MEANS = frozenset({"numpy.mean", "numpy.average"})
_BATCHY = ("batch", "dataset", "loader", "_ds", "ds")
# Values whose per-batch mean is what is wanted: time per batch, not per
# example; and what reinforcement learning collects per episode (a reward, a
# return), where each episode, not each example, is meant to weigh the same.
_EQUALLY_WEIGHTED = (
    "time",
    "duration",
    "latency",
    "elapsed",
    "second",
    "fps",
    "speed",
    "reward",
    "return",
    "episode",
)
# Divisors that count batches: `n_batches`, `num_steps`, `len(loader)`, `step + 1`.
_BATCH_COUNTS = ("batch", "step", "iter", "loader", "dataset", "_ds")


def _scopes(ctx: RuleContext) -> Iterator[cst.CSTNode]:
    yield ctx.module
    for function in ctx.functions:
        yield function.node.body


def _is_batch_loop(ctx: RuleContext, loop: cst.For) -> bool:
    """A loop over batches of varying size: a batched dataset without
    `drop_remainder=True`, a name that says batches, or a body that trains or
    evaluates (a tape, a `*step` call)."""
    if drops_remainder(ctx, loop):
        return False  # every batch has the same size: the mean is exact
    if feeds_short_final_batch(ctx, loop):
        return True
    for node in iter_nodes(loop.iter):
        name = node.value if isinstance(node, cst.Name) else None
        if name and any(part in name.lower() for part in _BATCHY):
            return True
    for node in iter_nodes(loop.body):
        if isinstance(node, cst.With) and tape_name(ctx, node) is not None:
            return True
        if isinstance(node, cst.Call) and (dotted_name(node.func) or "").lower().endswith("step"):
            return True
    return False


def _batch_input(loop: cst.For) -> str | None:
    """The name holding a batch's inputs: `x` in `for x, y in ...` or
    `for step, (x, y) in enumerate(...)`."""
    target = loop.target
    if isinstance(loop.iter, cst.Call) and dotted_name(loop.iter.func) == "enumerate":
        if not isinstance(target, (cst.Tuple, cst.List)) or len(target.elements) != 2:
            return None
        target = target.elements[1].value
    if isinstance(target, (cst.Tuple, cst.List)) and target.elements:
        first = target.elements[0].value
        return first.value if isinstance(first, cst.Name) else None
    return None


@dataclass
class _PerBatch:
    """A list filled once per batch: where it starts empty, where it grows."""

    loop: cst.For
    appends: list[cst.SimpleStatementLine]
    start: cst.SimpleStatementLine | None = None  # `name = []` in the same scope


@dataclass
class _Accumulated:
    """A running sum of per-batch values and the batch counters beside it:
    `n_batches += 1`, or the loop's own index (`for i, x in enumerate(...)`,
    counted as `i + 1`)."""

    loop: cst.For
    counters: set[str]
    index: str | None = None


def _statement_of(ancestors: tuple[cst.CSTNode, ...]) -> cst.SimpleStatementLine | None:
    for parent in reversed(ancestors):
        if isinstance(parent, cst.SimpleStatementLine):
            return parent
    return None


def _per_batch_values(
    ctx: RuleContext, scope: cst.CSTNode
) -> tuple[dict[str, _PerBatch], dict[str, _Accumulated]]:
    """Lists appended to and sums accumulated in loops over batches."""
    lists: dict[str, _PerBatch] = {}
    sums: dict[str, _Accumulated] = {}
    for loop in iter_nodes(scope, into_functions=False):
        if not isinstance(loop, cst.For) or not _is_batch_loop(ctx, loop):
            continue
        counters: set[str] = set()
        accumulated: list[str] = []
        for node, ancestors in iter_with_ancestors(loop.body):
            if isinstance(node, (cst.FunctionDef, cst.Lambda)):
                continue
            if isinstance(node, cst.Call) and method_name(node) == "append":
                owner = dotted_name(node.func.value)  # type: ignore[attr-defined]
                line = _statement_of(ancestors)
                if owner and line is not None:
                    # Loops come outermost first: the innermost batch loop wins.
                    found = lists.setdefault(owner, _PerBatch(loop, []))
                    found.loop = loop
                    if not any(a is line for a in found.appends):
                        found.appends.append(line)
            if isinstance(node, cst.AugAssign) and isinstance(node.operator, cst.AddAssign):
                if not isinstance(node.target, cst.Name):
                    continue
                value = node.value
                if _is_one(value):
                    counters.add(node.target.value)
                elif not _weighted(value):
                    accumulated.append(node.target.value)
        index = iteration_index(loop, ctx)
        for name in accumulated:
            sums[name] = _Accumulated(loop, counters, index)
    for node in iter_nodes(scope, into_functions=False):
        if isinstance(node, cst.SimpleStatementLine) and len(node.body) == 1:
            for name in _empty_lists_bound(node.body[0]):
                if name in lists:
                    lists[name].start = node
    return lists, sums


def _is_one(value: cst.BaseExpression) -> bool:
    """The literal one a counter adds per pass: `n += 1` or `n += 1.0`."""
    if isinstance(value, (cst.Integer, cst.Float)):
        return value.evaluated_value == 1
    return False


def _over_batches(candidate: cst.BaseExpression) -> bool:
    """A list comprehension or generator over something named for batches
    (`[f(b) for b in test_batches]`, `(acc(y, m(x)) for x, y in loader)`),
    also wrapped in `list(...)` or `tuple(...)`."""
    if (
        isinstance(candidate, cst.Call)
        and dotted_name(candidate.func) in ("list", "tuple")
        and len(candidate.args) == 1
    ):
        candidate = candidate.args[0].value
    if not isinstance(candidate, (cst.ListComp, cst.GeneratorExp)):
        return False
    names = [n.lower() for n in mentioned_names(candidate.for_in.iter)]
    return any(part in name for name in names for part in _BATCHY)


def _comprehension_lists(scope: cst.CSTNode) -> set[str]:
    """Names bound to a comprehension over batches: `accs = [acc(y, m(x))
    for x, y in loader]`, averaged on a later line."""
    names: set[str] = set()
    for node in iter_nodes(scope, into_functions=False):
        if isinstance(node, cst.Assign) and _over_batches(node.value):
            names.update(t.target.value for t in node.targets if isinstance(t.target, cst.Name))
    return names


def _empty_lists_bound(small: cst.BaseSmallStatement) -> list[str]:
    """Names `small` binds to a new empty list: `a = []`, `a, b = [], []`."""
    if not isinstance(small, cst.Assign) or len(small.targets) != 1:
        return []
    target, value = small.targets[0].target, small.value
    pairs: list[tuple[cst.BaseExpression, cst.BaseExpression]] = [(target, value)]
    if isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List)):
        if len(target.elements) != len(value.elements):
            return []
        pairs = [(t.value, v.value) for t, v in zip(target.elements, value.elements, strict=True)]
    return [
        t.value
        for t, v in pairs
        if isinstance(t, cst.Name) and isinstance(v, cst.List) and not v.elements
    ]


def _weighted(value: cst.BaseExpression) -> bool:
    """`acc * len(y)`, `loss * x.shape[0]`, `n * batch_size`: already weighted
    by the batch size (or a count of examples)."""
    if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Multiply):
        return True
    return any(
        (isinstance(n, cst.Call) and dotted_name(n.func) == "len")
        or (isinstance(n, cst.Attribute) and n.attr.value == "shape")
        for n in iter_nodes(value)
    )


def _weighted_sum(summed: cst.BaseExpression, divisor: cst.BaseExpression) -> bool:
    """`sum(v * n for v, n in zip(accs, batch_sizes)) / sum(batch_sizes)`:
    each value weighted, divided by the sum of the weights (what this rule's
    fix writes): a weighted average, whatever the names say."""
    return (
        isinstance(summed, (cst.GeneratorExp, cst.ListComp))
        and _weighted(summed.elt)
        and isinstance(divisor, cst.Call)
        and dotted_name(divisor.func) == "sum"
    )


def _counts_batches(expr: cst.BaseExpression, accumulated: _Accumulated) -> bool:
    """A divisor that counts batches rather than examples: a counter the
    loop adds 1 to, the loop's index (`i + 1`), or a name that says so."""
    names = [n.lower() for n in mentioned_names(expr)]
    if isinstance(expr, cst.Name) and expr.value in accumulated.counters:
        return True
    if accumulated.index is not None and counts_iterations(expr, accumulated.index):
        return True
    if any(_weighted(n) for n in iter_nodes(expr) if isinstance(n, cst.BaseExpression)):
        # `len(loader)` counts batches; `len(x)` or `x.shape[0]` examples.
        return isinstance(expr, cst.Call) and any(part in names[-1] for part in _BATCH_COUNTS)
    return any(part in name for name in names for part in _BATCH_COUNTS)


class PerBatchMetricAverage(Rule):
    code = "TFR306"
    name = "per-batch-metric-average"
    summary = (
        "Averaging per-batch metrics over-weights a short final batch: use a `keras.metrics` object"
    )
    fix_applicability = Applicability.UNSAFE
    needs_traced_code = False
    explanation = """
        ## What it does
        Finds one accuracy or loss collected per batch and averaged over the
        batches: `np.mean(batch_accs)`, `sum(losses) / len(losses)`,
        `statistics.mean`, `np.mean([evaluate(b) for b in batches])`, or a
        running `total += acc` divided by the number of batches (a counter
        the loop adds 1 to, or the loop's own index: `total / (i + 1)` after
        `for i, (x, y) in enumerate(...)`).

        ## Why is this bad?
        Averaging per-batch values gives every batch the same weight.
        When the last batch is shorter, its examples count more than the
        others. Measured (`benchmarks/tfr306_figures.py`): 2,000 examples in
        batches of 512, 512, 512 and 464, with 1,397 of the first 1,536 and
        425 of the last 464 classified right: the mean of the four batch
        accuracies is 0.911116, the true accuracy 0.911000. `fit` does not
        do this. A dataset batched with `drop_remainder=True` has batches of
        one size, and the mean is exact: no finding there.

        ## How to fix it
        The fix applies where the batch sizes are known to the code: a list
        appended to once per batch in `for x, y in ...` keeps the batch sizes
        beside it and becomes a weighted average,
        `np.average(batch_accs, weights=batch_sizes)` with
        `batch_sizes.append(len(x))` per batch.

        The other way, and the one that also runs inside a traced step, is a
        `keras.metrics` object: `update_state` per batch, `result()` at the
        end, `reset_state()` per epoch (`keras.metrics.Mean` for a loss,
        `SparseCategoricalAccuracy` and friends for accuracies); they weight by
        example:

        ```python
        accuracy = keras.metrics.SparseCategoricalAccuracy()
        for x, y in dataset.batch(64):
            accuracy.update_state(y, model(x))
        print("accuracy", float(accuracy.result()))
        ```

        ## When it is not reported
        Values meant to weigh the same whatever the batch size are not
        reported: times per batch, and rewards or returns collected once per
        episode.

        ## Fix safety
        Always unsafe (applied with `--unsafe-fixes`): the reported number
        changes, to the right one. The weights rest on two readings of the
        code that are likely, not proven: each collected value is a mean over
        its batch (an accuracy, a mean loss), and `len(x)` of the loop's batch
        is its number of examples. A comprehension, a running sum, or a list
        filled elsewhere is reported without a fix: the batch sizes are not at
        hand there.
    """
    examples = (
        Invalid(
            """
            import numpy as np

            batch_accs = []
            for x, y in dataset.batch(64):
                batch_accs.append(accuracy(y, model(x)))
            print("accuracy", np.mean(batch_accs))
            """,
            """
            import numpy as np

            batch_accs = []
            batch_sizes = []
            for x, y in dataset.batch(64):
                batch_accs.append(accuracy(y, model(x)))
                batch_sizes.append(len(x))
            print("accuracy", np.average(batch_accs, weights=batch_sizes))
            """,
            unsafe=True,
        ),
        Invalid(
            """
            def evaluate(model, batches):
                losses = []
                for x, y in batches:
                    losses.append(float(loss_fn(y, model(x))))
                return sum(losses) / len(losses)
            """,
            """
            def evaluate(model, batches):
                losses = []
                batch_sizes = []
                for x, y in batches:
                    losses.append(float(loss_fn(y, model(x))))
                    batch_sizes.append(len(x))
                return sum(v * n for v, n in zip(losses, batch_sizes)) / sum(batch_sizes)
            """,
            unsafe=True,
        ),
        Invalid(
            """
            import numpy as np

            print(np.mean([evaluate(model, b) for b in test_batches]))
            """,
            note="a comprehension over batches: no fix",
        ),
        Invalid(
            """
            import numpy as np

            accs = [accuracy(y, model(x)) for x, y in test_loader]
            print(np.mean(accs))
            """,
            note="a list built by a comprehension over batches, averaged later: no fix",
        ),
        Invalid(
            """
            total, n_batches = 0.0, 0
            for x, y in test_loader:
                total += float(accuracy(y, model(x)))
                n_batches += 1
            print(total / n_batches)
            """,
            note="a running sum divided by the number of batches: no fix",
        ),
        Invalid(
            """
            total = 0.0
            for i, (x, y) in enumerate(dataset.batch(64)):
                total += float(accuracy(y, model(x)))
            print(total / (i + 1))
            """,
            note="a running sum divided by the loop's index plus one: no fix",
        ),
        Valid(
            """
            import keras

            accuracy = keras.metrics.SparseCategoricalAccuracy()
            for x, y in dataset.batch(64):
                accuracy.update_state(y, model(x))
            print("accuracy", float(accuracy.result()))
            """,
        ),
        Valid(
            """
            import numpy as np

            accs = []
            for x, y in dataset.batch(64, drop_remainder=True):
                accs.append(accuracy(y, model(x)))
            print(np.mean(accs))
            """,
            note="batches of one size: the mean is exact",
        ),
        Valid(
            """
            total, seen = 0.0, 0
            for x, y in test_loader:
                total += float(accuracy(y, model(x))) * len(y)
                seen += len(y)
            print(total / seen)
            """,
            note="weighted by batch size",
        ),
        Valid(
            """
            def evaluate(model, batches):
                losses, batch_sizes = [], []
                for x, y in batches:
                    losses.append(float(loss_fn(y, model(x))))
                    batch_sizes.append(len(x))
                return sum(v * n for v, n in zip(losses, batch_sizes)) / sum(batch_sizes)
            """,
            note="weighted by batch size: what the fix writes",
        ),
        Valid(
            """
            import collections
            import statistics

            episodes_reward = collections.deque(maxlen=100)
            for episode in range(1000):
                episode_reward = int(train_step(env.reset(), model, optimizer))
                episodes_reward.append(episode_reward)
                running_reward = statistics.mean(episodes_reward)
            """,
            note="one reward per episode: every episode is meant to weigh the same",
        ),
        Valid(
            """
            import numpy as np
            import time

            times = []
            for epoch in range(3):
                start = time.perf_counter()
                run_epoch()
                times.append(time.perf_counter() - start)
            print(np.mean(times))
            """,
            note="not a loop over batches",
        ),
    )

    def check(self, ctx: RuleContext) -> Iterator[Violation]:
        # Names given to new lists of sizes this round: two loops fixed in one
        # round must not both fill `batch_sizes`.
        self._named: set[str] = set()
        for scope in _scopes(ctx):
            per_batch: tuple[dict[str, _PerBatch], dict[str, _Accumulated]] | None = None
            comprehended: set[str] | None = None
            reported: set[str] = set()
            self._creating: set[int] = set()  # loops given a new list of sizes this round
            for node in iter_nodes(scope, into_functions=False):
                if not isinstance(node, (cst.Call, cst.BinaryOperation)):
                    continue  # what every finding starts from: a mean or a division
                comprehension = self._comprehension_mean(ctx, node)
                if comprehension is not None:
                    yield Violation(
                        node,
                        "Averaging one value per batch weights every batch the same, so a short "
                        "final batch is over-weighted: weight by batch size, or accumulate a "
                        "`keras.metrics` object (`update_state` per batch, `result()` at the end)",
                    )
                    continue
                averaged = self._averaged(ctx, node)
                divided = self._divided_sum(node)
                if averaged is None and divided is None:
                    continue
                name = averaged or divided[0]  # type: ignore[index]
                if name in reported or any(t in name.lower() for t in _EQUALLY_WEIGHTED):
                    continue
                if per_batch is None:
                    per_batch = _per_batch_values(ctx, scope)
                lists, sums = per_batch
                if averaged is not None and averaged not in lists:
                    if comprehended is None:
                        comprehended = _comprehension_lists(scope)
                    if averaged in comprehended:
                        reported.add(averaged)
                        yield Violation(
                            node,
                            f"Averaging `{averaged}`, one value per batch, weights every batch "
                            "the same, so a short final batch is over-weighted: weight by batch "
                            "size, or accumulate a `keras.metrics` object (`update_state` per "
                            "batch, `result()` at the end)",
                        )
                        continue
                if averaged is not None and averaged in lists:
                    reported.add(averaged)
                    yield Violation(
                        node,
                        f"Averaging the per-batch values in `{averaged}` weights every batch the "
                        "same, so a short final batch is over-weighted: weight by batch size, or "
                        "accumulate a `keras.metrics` object instead (`update_state` per batch, "
                        "`result()` at the end)",
                        self._weighting_fix(ctx, node, averaged, lists[averaged]),
                    )
                elif divided is not None and divided[0] in sums:
                    total, divisor = divided
                    if _counts_batches(divisor, sums[total]):
                        reported.add(total)
                        yield Violation(
                            node,
                            f"`{total}` sums one value per batch and is divided by the number of "
                            "batches: every batch weighs the same, so a short final batch is "
                            "over-weighted. Weight each value by its batch size and divide by "
                            "the number of examples, or use a `keras.metrics` object",
                        )

    def _comprehension_mean(self, ctx: RuleContext, node: cst.CSTNode) -> bool | None:
        """`np.mean([f(b) for b in batches])`, `statistics.mean(f(b) for b in
        loader)`, `sum(f(b) for b in batches) / len(batches)`."""
        candidate = None
        if isinstance(node, cst.Call) and ctx.names.qualified_name(node.func) in MEAN_FUNCTIONS:
            if len(node.args) == 1:
                candidate = node.args[0].value
        elif isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Divide):
            left = node.left
            if isinstance(left, cst.Call) and dotted_name(left.func) == "sum" and left.args:
                candidate = left.args[0].value
                if _weighted_sum(candidate, node.right):
                    return None
        return True if _over_batches(candidate) else None

    def _averaged(self, ctx: RuleContext, node: cst.CSTNode) -> str | None:
        """The list name `node` averages, if it is a mean of a plain name."""
        if isinstance(node, cst.Call) and ctx.names.qualified_name(node.func) in MEAN_FUNCTIONS:
            if len(node.args) == 1 and isinstance(node.args[0].value, cst.Name):
                return node.args[0].value.value
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Divide):
            left, right = node.left, node.right
            if (
                isinstance(left, cst.Call)
                and isinstance(right, cst.Call)
                and dotted_name(left.func) == "sum"
                and dotted_name(right.func) == "len"
                and len(left.args) == 1
                and len(right.args) == 1
                and isinstance(left.args[0].value, cst.Name)
                and isinstance(right.args[0].value, cst.Name)
                and left.args[0].value.value == right.args[0].value.value
            ):
                return left.args[0].value.value
        return None

    def _divided_sum(self, node: cst.CSTNode) -> tuple[str, cst.BaseExpression] | None:
        """`total / n_batches`: the running sum's name and the divisor."""
        if (
            isinstance(node, cst.BinaryOperation)
            and isinstance(node.operator, cst.Divide)
            and isinstance(node.left, cst.Name)
        ):
            return node.left.value, node.right
        return None

    def _weighting_fix(
        self, ctx: RuleContext, node: cst.CSTNode, name: str, per_batch: _PerBatch
    ) -> CstFix | None:
        """Keep the batch sizes beside the list and average with them as
        weights; None when the batch, the list's start or its one append
        cannot be pinned down."""
        batch = _batch_input(per_batch.loop)
        if batch is None or per_batch.start is None or len(per_batch.appends) != 1:
            return None
        loop = per_batch.loop
        if any(n is node for n in iter_nodes(loop)):
            return None  # a running mean inside the loop
        start = per_batch.start
        append = per_batch.appends[0]
        sizes = _sizes_kept(ctx, loop, batch)
        edits: list[NodeEdit] = []
        if sizes is None:
            # One list of sizes per loop: a second list averaged from the same
            # loop gets its fix in the next round, reusing this one.
            if id(loop) in self._creating:
                return None
            self._creating.add(id(loop))
            sizes = _fresh(ctx, "batch_sizes", self._named)
            self._named.add(sizes)
            new_append = cst.parse_statement(f"{sizes}.append(len({batch}))")
            new_loop = loop.deep_replace(append, cst.FlattenSentinel([append, new_append]))
            new_start = cst.parse_statement(f"{sizes} = []")
            edits += [
                NodeEdit(start, cst.FlattenSentinel([start, new_start])),
                NodeEdit(loop, new_loop),
            ]
        if isinstance(node, cst.Call) and ctx.names.qualified_name(node.func) in _NUMPY_MEANS:
            replacement = node.with_changes(
                func=cst.Attribute(node.func.value, cst.Name("average"))
                if isinstance(node.func, cst.Attribute)
                else node.func,
                args=[
                    node.args[0].with_changes(comma=cst.MaybeSentinel.DEFAULT),
                    cst.Arg(
                        cst.Name(sizes),
                        keyword=cst.Name("weights"),
                        equal=cst.AssignEqual(
                            whitespace_before=cst.SimpleWhitespace(""),
                            whitespace_after=cst.SimpleWhitespace(""),
                        ),
                    ),
                ],
            )
            if not isinstance(node.func, cst.Attribute):
                return None  # `from numpy import mean`: no `average` name to reuse
        else:
            replacement = cst.parse_expression(
                f"sum(v * n for v, n in zip({name}, {sizes})) / sum({sizes})"
            )
        return CstFix(
            f"Weight the per-batch values in `{name}` by batch size",
            (*edits, NodeEdit(node, replacement)),
            applicability=Applicability.UNSAFE,
        )


def _sizes_kept(ctx: RuleContext, loop: cst.For, batch: str) -> str | None:
    """A list the loop already fills with `len(<batch>)`: the batch sizes."""
    for node in iter_nodes(loop.body, into_functions=False):
        if (
            isinstance(node, cst.Call)
            and method_name(node) == "append"
            and len(node.args) == 1
            and ctx.code(node.args[0].value) == f"len({batch})"
        ):
            return dotted_name(node.func.value)  # type: ignore[attr-defined]
    return None


def _fresh(ctx: RuleContext, base: str, taken: set[str]) -> str:
    """`base`, or `base_2`, ...: a name neither the module nor this round's
    other fixes (`taken`) use."""
    used = {n.value for n in iter_nodes(ctx.module) if isinstance(n, cst.Name)} | taken
    suffix = 2
    name = base
    while name in used:
        name = f"{base}_{suffix}"
        suffix += 1
    return name


RULES = (PerBatchMetricAverage,)
