"""TFR306: the mean of per-batch metric values over-weights a short batch."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from tfrewrite.facts.bindings import single_values
from tfrewrite.facts.context import RuleContext
from tfrewrite.facts.names import dotted_name
from tfrewrite.facts.role_arguments import role_arguments
from tfrewrite.facts.training import fresh_name, method_name
from tfrewrite.facts.vocabulary import ARRAY_CONVERSIONS, MEAN_FUNCTIONS
from tfrewrite.facts.walk import iter_nodes
from tfrewrite.findings import Applicability
from tfrewrite.rewrite.fixes import CstFix, NodeEdit, Violation
from tfrewrite.rules.base import Invalid, Rule, Valid
from tfrewrite.rules.training.metric_counters import call_counting_metrics
from tfrewrite.rules.training.per_batch_values import (
    HELD_LISTS,
    Accumulated,
    PerBatch,
    comprehension_lists,
    converted_count,
    counts_batches,
    divided_name,
    held_list_elements,
    number_of_batches,
    over_batches,
    per_batch_values,
    running_means,
    weighted_sum,
)

_NUMPY_MEANS = frozenset({"numpy.mean", "numpy.average"})
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


def _scopes(ctx: RuleContext) -> Iterator[tuple[cst.CSTNode, cst.FunctionDef | None]]:
    """The module's code and each function's body, with that function."""
    yield ctx.module, None
    for function in ctx.functions:
        yield function.node.body, function.node


def _batch_input(loop: cst.For | cst.While) -> str | None:
    """The name holding a batch's inputs: `x` in `for x, y in ...` or
    `for step, (x, y) in enumerate(...)`; None for a `while` loop."""
    if isinstance(loop, cst.While):
        return None
    target = loop.target
    if isinstance(loop.iter, cst.Call) and dotted_name(loop.iter.func) == "enumerate":
        if not isinstance(target, (cst.Tuple, cst.List)) or len(target.elements) != 2:
            return None
        target = target.elements[1].value
    if isinstance(target, (cst.Tuple, cst.List)) and target.elements:
        first = target.elements[0].value
        return first.value if isinstance(first, cst.Name) else None
    return None


def _within(node: cst.CSTNode, loop: cst.For | cst.While, inside: dict[int, set[int]]) -> bool:
    """Whether `node` is in the body of `loop` (`inside` keeps each loop's
    nodes once walked)."""
    if id(loop) not in inside:
        inside[id(loop)] = {id(n) for n in iter_nodes(loop.body)}
    return id(node) in inside[id(loop)]


def _last_entry_checks(scope: cst.CSTNode) -> dict[str, set[int]]:
    """Per list name, the nodes under an `if` whose test reads its last
    entry (`if accs[-2].shape != accs[-1].shape: ... else: np.mean(accs)`):
    there the code tells a short last batch from the others itself."""
    guarded: dict[str, set[int]] = {}
    for node in iter_nodes(scope, into_functions=False):
        if not isinstance(node, cst.If):
            continue
        for read in iter_nodes(node.test):
            if (
                isinstance(read, cst.Subscript)
                and isinstance(read.value, cst.Name)
                and len(read.slice) == 1
                and isinstance(read.slice[0].slice, cst.Index)
                and _is_minus_one(read.slice[0].slice.value)
            ):
                guarded.setdefault(read.value.value, set()).update(
                    id(n) for n in iter_nodes(node) if n is not node.test
                )
    return guarded


def _is_minus_one(node: cst.BaseExpression) -> bool:
    return (
        isinstance(node, cst.UnaryOperation)
        and isinstance(node.operator, cst.Minus)
        and isinstance(node.expression, cst.Integer)
        and node.expression.value == "1"
    )


def _summed_divided(node: cst.AugAssign) -> tuple[str, cst.BaseExpression] | None:
    """(total, divisor) of `total += value / divisor`."""
    if not (
        isinstance(node.operator, cst.AddAssign)
        and isinstance(node.target, cst.Name)
        and isinstance(node.value, cst.BinaryOperation)
        and isinstance(node.value.operator, cst.Divide)
    ):
        return None
    if any(t in node.target.value.lower() for t in _EQUALLY_WEIGHTED):
        return None
    return node.target.value, node.value.right


def _summed_average(node: cst.CSTNode, total: str) -> Violation:
    return Violation(
        node,
        f"`{total}` sums one value per batch and is divided by the number of batches: every "
        "batch weighs the same, so a short final batch is over-weighted. Weight each value by "
        "its batch size and divide by the number of examples, or use a `keras.metrics` object",
    )


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
        `for i, (x, y) in enumerate(...)`), however the division is written:
        `total / n_batches`, `total /= n_batches` (after the loop or in its
        `else`), `np.divide(total, n_batches)`, or through a name bound once
        (`count = len(train_ds)`, then `total / count`), or by a number of
        batches computed from the number of examples (`len(x_train) //
        BATCH_SIZE`, `math.ceil(n / batch_size)`, `int(n / batch)`), or
        term by term, each value divided before it is added (`ep_loss +=
        loss / int(n / batch)`, or `loss / float(n_mb)` for `n_mb = n //
        batch_size` bound once: the same average; `loss / batch_size` is a
        mean of its own and is left alone). A counted loop over slices
        (`for idx in range(0, n, batch)`) is a loop over batches when it
        calls a train step: a function named for a step, or one of the file
        that the loop calls and that trains (`self.grad_desc(x, u)`, whose
        helper's tape gradients it applies). Each average of a list
        is reported (a figure logged mid-epoch and the one printed after
        it): the first one's fix makes the loop record the batch sizes,
        and the same `fix` then weights the others with them. Lists a dict holds, one
        per metric, each filled once per batch (`results[key].append(v)`,
        `results.setdefault(key, []).append(v)`) and averaged one by one
        (`{k: np.mean(v) for k, v in results.items()}`) are reported once,
        where they are averaged, without a fix. A sum divided both
        inside the loop (a running figure for a progress bar) and after it
        is reported where it is kept, after the loop. A loop over a
        parameter is a loop over batches where every call site of the
        function hands it a dataset batched without `drop_remainder=True`
        (`evaluate(model, test_ds)` with `test_ds = ds.batch(32)`, or
        `ds.apply(prepare)` for a `prepare` of the project that batches so;
        a script importing `pipeline` reads the `pipeline.py` beside it). A
        `keras.metrics.Metric` subclass averages per batch too when its
        `update_state` adds a value to one weight and 1 to another
        (`self.total.assign_add(1)`) and `result` divides the first by the
        second: Keras calls `update_state` once per batch. It is reported
        where the count grows, without a fix (add the batch's size there,
        and the value times it to the total, or subclass `keras.metrics.Mean`).

        ## Why is this bad?
        Averaging per-batch values gives every batch the same weight.
        When the last batch is shorter, its examples count more than the
        others. Measured (`benchmarks/tfr306_figures.py`): 2,000 examples in
        batches of 512, 512, 512 and 464, with 1,397 of the first 1,536 and
        425 of the last 464 classified right: the mean of the four batch
        accuracies is 0.911116, the true accuracy 0.911000. `fit` does not
        do this. A dataset batched with `drop_remainder=True` has batches of
        one size, and the mean is exact: no finding there. That holds where
        the dataset is built by a function of the same file too: its
        `return` values are read with its parameters bound to the call's
        arguments and defaults, so `make_ds(path, 64)` of
        `def make_ds(path, n, drop_remainder=True)` batches with
        `drop_remainder=True`, `make_ds(path, 64, False)` does not, and a
        value tfrewrite cannot see (a parameter of the caller), or one
        `return` of a dataset that keeps its remainder, keeps the finding.

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
        episode. Nor are means over batches all of one size: batched with
        `drop_remainder=True`, or of one element (`batch(1)`), wherever the
        dataset is built, followed through helpers (also of other modules),
        the datasets a helper returns in a tuple (`train_ds, test_ds =
        load(args)`), and the callers that pass it. A mean along the list of
        batches, `np.mean(values, axis=0)` (per-batch tuples of losses), is a
        per-batch mean; along another axis it is not. A list made afresh in
        each pass of the batch loop (`penalties = []` filled over a model's
        unrolled iterations on that batch) holds one batch's values, not one
        value per batch; so does a list filled by a loop in a function a
        train step calls (`for g in graphs:` in the model's forward pass, a
        loss per graph of the one batch the step trains on).

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
        Invalid(
            """
            import tensorflow as tf


            def batched(path, size, drop_remainder=True):
                return tf.data.TFRecordDataset(path).batch(size, drop_remainder=drop_remainder)


            total = 0.0
            for i, (x, y) in enumerate(batched("test.tfrecord", 64, drop_remainder=False)):
                total += float(accuracy(y, model(x)))
            print(total / (i + 1))
            """,
            note="the helper is called with `drop_remainder=False`: no fix",
        ),
        Valid(
            """
            import tensorflow as tf


            def batched(path, size, drop_remainder=True):
                return tf.data.TFRecordDataset(path).batch(size, drop_remainder=drop_remainder)


            total = 0.0
            for i, (x, y) in enumerate(batched("test.tfrecord", 64)):
                total += float(accuracy(y, model(x)))
            print(total / (i + 1))
            """,
            note="the helper's `drop_remainder` defaults to `True`: batches of one size",
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
        for scope, function in _scopes(ctx):
            per_batch: tuple[dict[str, PerBatch], dict[str, Accumulated]] | None = None
            comprehended: set[str] | None = None
            held_elements: dict[str, str] | None = None  # `item` of `results.items()`
            guarded: dict[str, set[int]] | None = None
            values: dict[str, cst.BaseExpression] | None = None  # names bound once
            reported: set[str] = set()  # names whose averages are reported once
            # The first average of each per-batch list (every one is reported):
            # its node when its fix makes the loop record the batch sizes, with
            # which the next round weights the others; None when it has none.
            first_averages: dict[str, cst.CSTNode | None] = {}
            running: dict[str, cst.CSTNode] = {}  # averages divided inside their loop
            inside_loops: dict[int, set[int]] = {}
            self._creating: set[int] = set()  # loops given a new list of sizes this round
            for node in iter_nodes(scope, into_functions=False):
                if not isinstance(node, (cst.Call, cst.BinaryOperation, cst.AugAssign)):
                    continue  # what every finding starts from: a mean or a division
                if isinstance(node, cst.AugAssign):
                    # `total += loss / n_batches`: each value divided before
                    # it is summed, the same average as `total / n_batches`.
                    summed = _summed_divided(node)
                    if summed is not None and summed[0] not in reported:
                        total, divisor = summed
                        if per_batch is None:
                            per_batch = per_batch_values(ctx, scope, function)
                        sums = per_batch[1]
                        # `loss / float(n_mb)` for `n_mb = n // batch_size`.
                        divisor = converted_count(divisor)
                        if isinstance(divisor, cst.Name) and function is not None:
                            if values is None:
                                values = single_values(function)
                            bound = values.get(divisor.value)
                        else:
                            bound = None
                        if total in sums and any(
                            number_of_batches(d, sums[total]) for d in (divisor, bound) if d
                        ):
                            reported.add(total)
                            yield _summed_average(node, total)
                            continue
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
                divided = divided_name(ctx, node)
                if averaged is None and divided is None:
                    continue
                name = averaged or divided[0]  # type: ignore[index]
                if any(t in name.lower() for t in _EQUALLY_WEIGHTED):
                    continue
                if name in reported:
                    continue
                if per_batch is None:
                    per_batch = per_batch_values(ctx, scope, function)
                lists, sums = per_batch
                if averaged is not None and averaged not in lists:
                    if held_elements is None:
                        held_elements = held_list_elements(scope)
                    held = held_elements.get(averaged)
                    if held is not None and held in lists and held not in reported:
                        reported.add(held)
                        yield Violation(
                            node,
                            f"Averaging each of the per-batch lists in "
                            f"`{held.removesuffix(HELD_LISTS)}` weights every batch the same, so a "
                            "short final batch is over-weighted: weight by batch size, or "
                            "accumulate `keras.metrics` objects instead (`update_state` per "
                            "batch, `result()` at the end)",
                        )
                        continue
                    if comprehended is None:
                        comprehended = comprehension_lists(scope)
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
                    if guarded is None:
                        guarded = _last_entry_checks(scope)
                    if id(node) in guarded.get(averaged, ()):
                        continue  # the code tells a short last batch apart itself
                    # Each average of the list is reported; the first one
                    # fixed makes the loop record the batch sizes, which the
                    # next round's fix of the others reuses.
                    first, fix = first_averages.get(averaged), None
                    if averaged not in first_averages:
                        fix = self._weighting_fix(ctx, node, averaged, lists[averaged])
                        first_averages[averaged] = node if fix is not None else None
                    yield Violation(
                        node,
                        f"Averaging the per-batch values in `{averaged}` weights every batch the "
                        "same, so a short final batch is over-weighted: weight by batch size, or "
                        "accumulate a `keras.metrics` object instead (`update_state` per batch, "
                        "`result()` at the end)",
                        fix,
                        waits_for=first,
                    )
                elif divided is not None and divided[0] in sums:
                    total, divisor = divided
                    divisor = converted_count(divisor)
                    if isinstance(divisor, cst.Name) and function is not None:
                        # `count = len(train_ds)`, then `total / count`.
                        if values is None:
                            values = single_values(function)
                        divisor = values.get(divisor.value, divisor)
                    if counts_batches(divisor, sums[total]):
                        if _within(node, sums[total].loop, inside_loops):
                            # A running figure shown while the loop goes on
                            # (a progress bar): the average kept after the
                            # loop, if there is one, is the one reported.
                            running.setdefault(total, node)
                            continue
                        reported.add(total)
                        yield _summed_average(node, total)
            for total, node in running.items():
                if total not in reported:
                    yield _summed_average(node, total)
            for node, name in running_means(ctx, scope, function):
                if name not in reported and not any(t in name.lower() for t in _EQUALLY_WEIGHTED):
                    reported.add(name)
                    yield Violation(
                        node,
                        f"`{name}` is kept as the running mean of one value per batch: every "
                        "batch weighs the same, so a short final batch is over-weighted. Weight "
                        "each value by its batch size, or use a `keras.metrics.Mean` given "
                        "the batch size as `sample_weight`",
                    )
        yield from call_counting_metrics(ctx)

    def _comprehension_mean(self, ctx: RuleContext, node: cst.CSTNode) -> bool | None:
        """`np.mean([f(b) for b in batches])`, `statistics.mean(f(b) for b in
        loader)`, `sum(f(b) for b in batches) / len(batches)`."""
        candidate = None
        if isinstance(node, cst.Call) and ctx.names.qualified_name(node.func) in MEAN_FUNCTIONS:
            candidate = _mean_over_first_axis(node)
        elif isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Divide):
            left = node.left
            if isinstance(left, cst.Call) and dotted_name(left.func) == "sum" and left.args:
                candidate = left.args[0].value
                if weighted_sum(candidate, node.right) or _totals_each_batch(ctx, candidate):
                    return None
        return True if over_batches(candidate) else None

    def _averaged(self, ctx: RuleContext, node: cst.CSTNode) -> str | None:
        """The list name `node` averages, if it is a mean of a plain name:
        by a mean function, or by a project function that averages the
        parameter it binds (`Metric.from_list(losses)` doing `np.mean(l)`)."""
        if isinstance(node, cst.Call) and ctx.names.qualified_name(node.func) in MEAN_FUNCTIONS:
            averaged = _mean_over_first_axis(node)
            # `np.mean(np.array(losses))`: the same values, as one array.
            while (
                isinstance(averaged, cst.Call)
                and ctx.names.qualified_name(averaged.func) in ARRAY_CONVERSIONS
                and len(averaged.args) == 1
            ):
                averaged = averaged.args[0].value
            if isinstance(averaged, cst.Name):
                return averaged.value
        if isinstance(node, cst.Call):
            for arg, _ in role_arguments(ctx, ctx.index.callee_averaged_params, node):
                if isinstance(arg.value, cst.Name):
                    return arg.value.value
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

    def _weighting_fix(
        self, ctx: RuleContext, node: cst.CSTNode, name: str, per_batch: PerBatch
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
            sizes = fresh_name(ctx, "batch_sizes", self._named)
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


# What adds up a batch's values: a total per batch, not an average.
_SUMS = frozenset({"sum", "numpy.sum", "tensorflow.reduce_sum", "tensorflow.math.reduce_sum"})


def _totals_each_batch(ctx: RuleContext, summed: cst.BaseExpression) -> bool:
    """`sum([sum(x) for x in per_batch]) / n_examples`: each batch's values
    added up, then divided once: the mean over examples, whatever the
    batch sizes."""
    if not isinstance(summed, (cst.ListComp, cst.GeneratorExp)):
        return False
    element = summed.elt
    if not isinstance(element, cst.Call):
        return False
    if isinstance(element.func, cst.Attribute) and element.func.attr.value == "sum":
        return not element.args  # `x.sum()`
    return (ctx.names.qualified_name(element.func) or dotted_name(element.func)) in _SUMS


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


def _mean_over_first_axis(call: cst.Call) -> cst.BaseExpression | None:
    """What a mean function averages over its first axis, the one a list of
    per-batch values runs along: `np.mean(values)`, `np.mean(a=values)`,
    `np.mean(values, axis=0)` (per-batch tuples of losses, averaged loss by
    loss). None for any other axis or argument."""

    def axis_zero(arg: cst.Arg, position: int) -> bool:
        named = arg.keyword is not None and arg.keyword.value == "axis"
        axis = named or (arg.keyword is None and position == 1)
        return axis and isinstance(arg.value, cst.Integer) and arg.value.value == "0"

    values = [a for i, a in enumerate(call.args) if not axis_zero(a, i)]
    if len(values) != 1 or values[0].star:
        return None
    return values[0].value


RULES = (PerBatchMetricAverage,)
