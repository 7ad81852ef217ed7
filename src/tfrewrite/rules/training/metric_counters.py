"""TFR306 in a `keras.metrics.Metric` subclass that counts calls, not
examples: `update_state` adds a value to one weight and 1 to another, and
`result` divides the first by the second. Reported where the count grows,
which is where the fix goes.

Keras calls `update_state` once per batch, so such a metric is the mean of
per-batch values: a short last batch (a validation set that does not
divide by the batch size) weighs as much as a full one. Keras' own `Mean`
adds the number of values to its count instead."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from tfrewrite.facts.context import RuleContext
from tfrewrite.facts.keras_names import keras_leaf
from tfrewrite.facts.state import self_attribute_name
from tfrewrite.facts.walk import iter_nodes
from tfrewrite.rewrite.fixes import Violation
from tfrewrite.rules.training.per_batch_values import division_operands, weighted


def call_counting_metrics(ctx: RuleContext) -> Iterator[Violation]:
    """The `result` division of each metric class that counts its calls."""
    for node in iter_nodes(ctx.module):
        if not isinstance(node, cst.ClassDef) or not _is_metric(ctx, node.name.value):
            continue
        methods = {s.name.value: s for s in node.body.body if isinstance(s, cst.FunctionDef)}
        update, result = methods.get("update_state"), methods.get("result")
        if update is None or result is None:
            continue
        added = _self_increments(update)
        counters = {attr for attr, (value, _) in added.items() if _is_one(value)}
        sums = {
            attr
            for attr, (value, _) in added.items()
            if attr not in counters and not _weighted(value)
        }
        for total, count in _divisions(ctx, result):
            if total in sums and count in counters:
                yield Violation(
                    added[count][1],
                    f"`self.{count}` counts the `update_state` calls of `{node.name.value}`, and "
                    f"`result` divides `self.{total}`, one value added per call, by it: Keras "
                    "calls `update_state` once per batch, so every batch weighs the same and a "
                    "short final batch is over-weighted. Add the batch's size to the count (and "
                    "the value times it to the total), or subclass `keras.metrics.Mean`",
                )


def _is_metric(ctx: RuleContext, name: str) -> bool:
    """A class of the file derived from a Keras `Metric` (any spelling)."""
    info = ctx.index.classes.get(name)
    return info is not None and any(keras_leaf(base) == "Metric" for base in info.bases)


def _self_increments(
    function: cst.FunctionDef,
) -> dict[str, tuple[cst.BaseExpression, cst.Call]]:
    """`self.<attr>.assign_add(<value>)` calls of the method: attr -> (value,
    the call); an attribute added to twice holds no one value: left out."""
    found: dict[str, tuple[cst.BaseExpression, cst.Call]] = {}
    twice: set[str] = set()
    for node in iter_nodes(function.body, into_functions=False):
        if not (
            isinstance(node, cst.Call)
            and isinstance(node.func, cst.Attribute)
            and node.func.attr.value == "assign_add"
            and node.args
        ):
            continue
        attr = self_attribute_name(node.func.value)
        if attr is None:
            continue
        if attr in found:
            twice.add(attr)
        found[attr] = (node.args[0].value, node)
    return {attr: added for attr, added in found.items() if attr not in twice}


def _is_one(value: cst.BaseExpression) -> bool:
    """`1` or `1.0`, as given to `assign_add` (a cast of one: `tf.cast(1, ...)`)."""
    if isinstance(value, cst.Call) and value.args:
        value = value.args[0].value
    return isinstance(value, (cst.Integer, cst.Float)) and float(value.value) == 1.0


def _weighted(value: cst.BaseExpression) -> bool:
    """A value already scaled by a count (`per_batch_values.weighted`), or
    a sum over the batch (`tf.reduce_sum(...)`), which no count of calls
    turns into a mean per batch."""
    return weighted(value) or any(
        isinstance(n, cst.Attribute) and n.attr.value == "reduce_sum" for n in iter_nodes(value)
    )


def _divisions(ctx: RuleContext, function: cst.FunctionDef) -> Iterator[tuple[str, str]]:
    """`self.total / self.count` (or `tf.math.divide_no_nan(self.total,
    self.count)`) returned by the method: (total, count)."""
    for node in iter_nodes(function.body, into_functions=False):
        if not isinstance(node, cst.Return) or node.value is None:
            continue
        operands = division_operands(ctx, node.value)
        if operands is None:
            continue
        total, count = (self_attribute_name(operand) for operand in operands)
        if total is not None and count is not None:
            yield total, count
