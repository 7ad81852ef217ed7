"""TFR306 on a loop over a parameter: every call site of `evaluate(model,
data)` hands it a dataset batched without `drop_remainder=True` (through
`ds.apply(prepare)` too), so the mean of its per-batch accuracies
over-weights the short last batch. A site handing it whole batches only,
or another site handing it anything else, says nothing."""

from __future__ import annotations

from tests.short_batch_parameters import SOURCE

from tfrewrite.api import check_source


def _lines(source: str) -> list[int]:
    return [f.start.line for f in check_source(source, select=["TFR306"])]


def test_a_parameter_fed_short_batches_is_a_batch_loop() -> None:
    assert _lines(SOURCE) == [14]


def test_whole_batches_only_are_exact() -> None:
    assert _lines(SOURCE.replace("ds.batch(4)", "ds.batch(4, drop_remainder=True)")) == []


def test_a_site_handing_something_else_leaves_it_unknown() -> None:
    other = SOURCE + "\n\ndef again(model, pairs):\n    return evaluate(model, pairs)\n"
    assert _lines(other) == []
