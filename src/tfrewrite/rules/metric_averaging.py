"""TFR306: the mean of per-batch metric values over-weights a short batch."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from tfrewrite.analysis.index import ModuleIndex
from tfrewrite.analysis.names import dotted_name
from tfrewrite.analysis.training import feeds_short_final_batch, method_name, tape_name
from tfrewrite.analysis.walk import iter_nodes
from tfrewrite.context import RuleContext
from tfrewrite.findings import Applicability
from tfrewrite.rules.base import Invalid, Rule, Valid, Violation

MEAN_FUNCTIONS = frozenset(
    {"numpy.mean", "numpy.average", "statistics.mean", "statistics.fmean", "tensorflow.reduce_mean"}
)
_BATCHY = ("batch", "dataset", "loader", "_ds", "ds")


def _scopes(ctx: RuleContext) -> Iterator[cst.CSTNode]:
    yield ctx.module
    for function in ctx.functions:
        yield function.node.body


def _is_batch_loop(ctx: RuleContext, loop: cst.For) -> bool:
    """A loop over batches: a batched dataset, a name that says so, or a body
    that trains or evaluates (a tape, a `*step` call)."""
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


def _per_batch_lists(ctx: RuleContext, scope: cst.CSTNode) -> set[str]:
    """Names appended to inside a loop over batches in this scope."""
    names = set()
    for loop in iter_nodes(scope, into_functions=False):
        if not isinstance(loop, cst.For) or not _is_batch_loop(ctx, loop):
            continue
        for node in iter_nodes(loop.body, into_functions=False):
            if isinstance(node, cst.Call) and method_name(node) == "append":
                owner = dotted_name(node.func.value)  # type: ignore[attr-defined]
                if owner:
                    names.add(owner)
    return names


class PerBatchMetricAverage(Rule):
    code = "TFR306"
    name = "per-batch-metric-average"
    summary = (
        "Averaging per-batch metrics over-weights a short final batch: use a `keras.metrics` object"
    )
    fix_applicability = Applicability.NONE
    needs_traced_code = False
    explanation = """
        Collecting one accuracy or loss per batch and averaging the list
        (`np.mean(batch_accs)`, `sum(losses) / len(losses)`) gives every batch the
        same weight. When the last batch is shorter, its examples count more than
        the others: on 1000 examples in batches of 64, a per-batch mean reported
        0.911116 where the true accuracy was 0.911000. `fit` does not do this.

        Use a `keras.metrics` object instead: `metric.update_state(y, y_pred)` per
        batch, `metric.result()` at the end, `metric.reset_state()` per epoch
        (`keras.metrics.Mean` for a loss, `SparseCategoricalAccuracy` and friends
        for accuracies). They weight by example and run inside a traced step.

        No automatic fix: the metric to use depends on what was averaged.
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
        ),
        Invalid(
            """
            def evaluate(model, batches):
                losses = []
                for x, y in batches:
                    losses.append(float(loss_fn(y, model(x))))
                return sum(losses) / len(losses)
            """,
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

    def applies_to(self, index: ModuleIndex, traced_qualnames: set[str]) -> bool:
        called = index.called_names
        averages = bool(called & MEAN_FUNCTIONS) or {"sum", "len"} <= called
        return averages and any(callee.endswith(".append") for callee in index.loop_calls)

    def check(self, ctx: RuleContext) -> Iterator[Violation]:
        for scope in _scopes(ctx):
            lists: set[str] | None = None
            for node in iter_nodes(scope, into_functions=False):
                averaged = self._averaged(ctx, node)
                if averaged is None:
                    continue
                if lists is None:
                    lists = _per_batch_lists(ctx, scope)
                if averaged in lists:
                    yield Violation(
                        node,
                        f"Averaging the per-batch values in `{averaged}` weights every batch the "
                        "same, so a short final batch is over-weighted: accumulate a "
                        "`keras.metrics` object instead (`update_state` per batch, `result()` at "
                        "the end)",
                    )

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


RULES = (PerBatchMetricAverage,)
