"""TFR306 on the lists a dict holds, one per metric, each filled once per
batch (`results[key].append(value)`, `results.setdefault(key, []).append`)
and averaged one by one (`{k: np.mean(v) for k, v in results.items()}`,
`for values in results.values(): np.mean(values)`): each average
over-weights a short final batch as a single list's would. A dict made
afresh in each pass holds one batch's values; batches of one size
(`drop_remainder=True`) average exactly."""

from __future__ import annotations

from tfrewrite.api import check_source

EVALUATE = """
import numpy as np
import tensorflow as tf


def evaluate(model, x, y):
    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(32{remainder})
    results = {{}}
    for xb, yb in ds:
        metrics = model.test_step((xb, yb))
{fill}
{average}
"""

INDEXED = """\
        for key, value in metrics.items():
            if key not in results:
                results[key] = []
            results[key].append(value)"""
SET_DEFAULT = """\
        for key, value in metrics.items():
            results.setdefault(key, []).append(value)"""
FRESH = """\
        results = {}
        for key, value in metrics.items():
            results.setdefault(key, []).append(value)"""

BY_ITEMS = "    return {key: np.mean(values) for key, values in results.items()}"
BY_VALUES = """\
    means = []
    for values in results.values():
        means.append(np.mean(values))
    return means"""


def _findings(fill: str, average: str, remainder: str = "") -> list[str]:
    source = EVALUATE.format(fill=fill, average=average, remainder=remainder)
    return [f.message for f in check_source(source, select=["TFR306"])]


def test_each_list_of_a_dict_averaged_in_a_comprehension_is_reported() -> None:
    (message,) = _findings(INDEXED, BY_ITEMS)
    assert message.startswith("Averaging each of the per-batch lists in `results`")


def test_lists_grown_through_setdefault_and_averaged_in_a_loop_are_reported() -> None:
    (message,) = _findings(SET_DEFAULT, BY_VALUES)
    assert "per-batch lists in `results`" in message


def test_a_dict_made_afresh_in_each_pass_is_no_finding() -> None:
    assert _findings(FRESH, BY_ITEMS) == []


def test_batches_of_one_size_are_no_finding() -> None:
    assert _findings(INDEXED, BY_ITEMS, remainder=", drop_remainder=True") == []
