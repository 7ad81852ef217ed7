"""Checks for random functions: the rewrite must sample anew on every traced
call, return the same structure, shapes and dtypes, and sample the same
distribution as the original (two-sample tests in `stats`).

Runs inside verification workers (TensorFlow imported).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tfrewrite.verify import stats
from tfrewrite.verify.compare import describe, float_values, identical, same_kind
from tfrewrite.verify.outcome import Outcome, call

CHECK_EAGER_SHAPE = "rewrite eager: shape, dtype"
CHECK_TRACED_SHAPE = "rewrite traced: shape, dtype"
CHECK_FRESH = "fresh random samples"
CHECK_DISTRIBUTION = "random distribution"


def check_random(
    outcome: Outcome,
    original: Callable,
    rewrite: Callable,
    traced: Callable,
    proof: list[tuple[str, dict[str, Any]]],
    samples: int,
    sampling: tuple[str, dict[str, Any]] | None = None,
) -> None:
    """Shapes and dtypes on every input of the proof set; freshness and the
    distribution on `sampling`, an input on which the original samples anew
    (the first of the proof set by default)."""
    for label, args in proof:
        expected = call(original, args, eager=True)
        for name, fn, eager in (
            (CHECK_EAGER_SHAPE, rewrite, True),
            (CHECK_TRACED_SHAPE, traced, False),
        ):
            check = outcome.check(name)
            got = call(fn, args, eager=eager)
            if got.failed:
                check.fail(f"on {label}: raised {got.describe_error()}", got)
                continue
            check.add(same_kind(expected.value, got.value), label)
    label, args = case = sampling or proof[0]
    fresh = outcome.check(CHECK_FRESH)
    first, second = call(traced, args), call(traced, args)
    if first.failed or second.failed:
        fresh.fail(f"on {label}: raised {(first if first.failed else second).describe_error()}")
    elif identical(first.value, second.value):
        fresh.fail(
            "frozen random value: two traced calls returned the same sample "
            f"({describe(first.value)}), the original samples anew on every call"
        )
    else:
        fresh.runs += 1
    distribution(outcome, original, traced, case, samples)


def _sample(
    fn: Callable, args: dict[str, Any], n: int, eager: bool, positions: list[int] | None = None
) -> dict[str, Any] | str:
    """The per-call statistics of `n` calls (see `stats.Calls`), or the error."""
    collected = stats.Calls(positions)
    for _ in range(n):
        result = call(fn, args, eager=eager)
        if result.failed:
            return result.describe_error()
        collected.add(float_values(result.value))
    return collected.statistics()


def distribution(
    outcome: Outcome,
    original: Callable,
    traced: Callable,
    case: tuple[str, dict[str, Any]],
    samples: int,
) -> None:
    """`samples` calls per side; location, scale and shape tests on the
    per-call mean and the most variable entries, at a total false-alarm
    rate of `stats.ALPHA`."""
    label, args = case
    check = outcome.check(CHECK_DISTRIBUTION)
    a = _sample(original, args, samples, eager=True)
    if isinstance(a, str):
        check.fail(f"on {label}: raised {a}")
        return
    b = _sample(traced, args, samples, eager=False, positions=stats.positions_of(a))
    if isinstance(b, str):
        check.fail(f"on {label}: raised {b}")
        return
    check.runs += 2 * samples
    results = stats.compare_samples(a, b)
    location = next((r for r in results if r.statistic == "mean" and r.test == "location"), None)
    if location is not None:
        gap = abs(float(a["mean"].mean() - b["mean"].mean()))
        check.max_abs = gap
        check.max_rel = gap / max(abs(float(a["mean"].mean())), 1e-30)
    failed = sorted((r for r in results if not r.ok), key=lambda r: r.p_value)
    if failed:
        check.ok = False
        check.detail = f"on {label}: {failed[0].detail}"
