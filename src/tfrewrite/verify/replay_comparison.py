"""Judge a rewritten training loop by replays of it and of the original (inside a worker).

The loop is replayed before the rewrite (eagerly) and after it (as written;
see `replay`), and the runs are compared: the rewrite must run, and the
values each step binds and the final weights must agree within the
train-step tolerance (`rtol`, `atol` ×100: a few optimizer steps accumulate
float32 rounding). When the original loop itself gives other values under
another seed (dropout, random augmentation), value-for-value comparison
means nothing: both sides are replayed under several seeds and compared by
distribution. When the rewrite introduced `tf.cond` calls, its loop is
replayed once more, eagerly and instrumented, on the same batches: each
`tf.cond` must take both branches there, as on a function's inputs (see
`coverage`), or the loop is not proven.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from tfrewrite.verify import caller_capture, coverage, project_imports, remedies, stats
from tfrewrite.verify.compare import (
    Difference,
    compare,
    float_values,
    identical,
    same_kind,
)
from tfrewrite.verify.outcome import SEED, Outcome
from tfrewrite.verify.replay import Run, replay

CHECK_LOSSES = "train loop: values per step"
CHECK_WEIGHTS = "train loop: final weights"
CHECK_RUNS = "train loop: rewrite runs"


def compare_runs(
    outcome: Outcome,
    want: Run,
    got: Run,
    names: list[str],
    rtol: float,
    atol: float,
    checks: tuple[str, str, str] = (CHECK_RUNS, CHECK_LOSSES, CHECK_WEIGHTS),
) -> None:
    """Record the loop checks: the rewrite runs, per-step values, final
    weights (`checks`: their names)."""
    rtol, atol = rtol * 100, atol * 100
    runs_check, values_check, weights_check = checks
    runs = outcome.check(runs_check)
    if got.error is not None:
        runs.fail(
            f"the rewritten loop raised {got.error.describe_error()} at step {len(got.steps) + 1} "
            f"(batch sizes {_sizes_text(want.batch_sizes)}); the original ran",
            got.error,
        )
        return
    runs.runs += 1
    if len(want.steps) != len(got.steps):
        runs.fail(f"the rewritten loop ran {len(got.steps)} steps, the original {len(want.steps)}")
        return
    values = outcome.check(values_check)
    for i, (a, b) in enumerate(zip(want.steps, got.steps, strict=True), start=1):
        common = [n for n in names if n in a and n in b]
        diff = Difference()
        for name in common:
            diff.merge(compare(a[name], b[name], rtol, atol, f"`{name}` after step {i}"))
        values.add(diff, f"step {i}")
    weights = outcome.check(weights_check)
    for name in sorted(set(want.final) & set(got.final)):
        weights.add(
            compare(want.final[name], got.final[name], rtol, atol, f"weights of `{name}`"),
            "the last step",
        )
    if not weights.runs:
        weights.runs = 0


def _sizes_text(sizes: list[int]) -> str:
    return ", ".join(map(str, sizes)) or "unknown"


def verify_loop(
    outcome: Outcome,
    original_source: str,
    rewrite_source: str,
    original_site: tuple[str, int],
    rewrite_site: tuple[str, int],
    path: str,
    package: str | None,
    arguments: Callable[[], dict[str, Any]] | None,
    rtol: float,
    atol: float,
    step: str | None = None,
    harness_hint: str | None = None,
    rewrite_arguments: Callable[[], dict[str, Any]] | None = None,
) -> None:
    """Replay the loop before (eager) and after (as written) the rewrite and
    compare: value for value, or, when the original loop itself gives other
    values under another seed (dropout, random augmentation), by distribution
    over REPLAYS seeds per side. `rewrite_arguments` builds the rewrite's
    arguments when they come from its own module (a caller in the file)."""

    def run_original(seed: int, initial: dict | None = None) -> tuple[Run, list[str]]:
        return replay(
            original_source,
            *original_site,
            "original-loop",
            path,
            package,
            None,
            arguments,
            eager=True,
            initial=initial,
            step=step,
            seed=seed,
        )

    def run_rewrite(seed: int, initial: dict) -> tuple[Run, list[str]]:
        return replay(
            rewrite_source,
            *rewrite_site,
            "rewrite-loop",
            path,
            package,
            None,
            rewrite_arguments or arguments,
            eager=False,
            initial=initial,
            step=step,
            seed=seed,
        )

    def run_covered() -> Run:
        return replay(
            rewrite_source,
            *rewrite_site,
            "rewrite-loop-branches",
            path,
            package,
            None,
            rewrite_arguments or arguments,
            eager=True,
            initial=want.initial,
            step=step,
            covering=original_source,
        )[0]

    want, names_before = run_original(SEED)
    if want.error is not None and isinstance(want.error.error, caller_capture.CallerProblem):
        hint = harness_hint or "give the loop's function its arguments with a harness"
        outcome.unproven = f"{want.error.error}; {hint}"
        outcome.warnings.append(outcome.unproven)
        return
    if want.error is not None:
        where = (
            "building the loop's inputs from the script's own code"
            if want.error_in_setup
            else "running the original loop on the script's own data"
        )
        # An optional dependency the workers lack makes the result "needs package".
        project_imports.missing_package(want.error.error)
        hint = harness_hint or "give the loop its inputs with a harness"
        remedy = remedies.remedy(want.error.error, path)
        if remedy is not None:
            hint = f"{remedy}; or {hint}"
        line = want.error.user_line()
        at = f" at {line}" if line else ""
        outcome.unproven = f"{where} raised {want.error.describe_error()}{at}; {hint}"
        outcome.warnings.append(outcome.unproven)
        outcome.error_traceback = want.error.traceback()
        return
    if not want.steps:
        outcome.unproven = "the original loop ran no step on the script's data"
        outcome.warnings.append(outcome.unproven)
        return
    got, names_after = run_rewrite(SEED, want.initial)
    if got.error is not None and isinstance(got.error.error, caller_capture.CallerTimeout):
        # Slower on the rewrite's side only: nothing is known about the rewrite.
        outcome.unproven = f"for the rewrite, {got.error.error}"
        outcome.warnings.append(outcome.unproven)
        return
    names = [n for n in names_before if n in names_after]
    outcome.inputs = [
        f"{len(want.steps)} steps of the script's own loop, batch sizes "
        f"{_sizes_text(want.batch_sizes)}"
    ]
    exact = Outcome(outcome.function, outcome.mode)
    compare_runs(exact, want, got, names, rtol, atol)
    if got.error is None and any(not c.ok for c in exact.checks.values()):
        # Random steps, or a wrong rewrite? Another seed of the original tells.
        again, _ = run_original(SEED + 1, want.initial)
        if again.error is None and not same_run(want, again):
            originals = [want, again] + [
                run_original(SEED + k, want.initial)[0] for k in range(2, REPLAYS)
            ]
            rewrites = [got] + [run_rewrite(SEED + k, want.initial)[0] for k in range(1, REPLAYS)]
            outcome.stochastic = True
            outcome.inputs.append(
                f"the original loop is random (another seed gives other values): "
                f"{REPLAYS} replays per side with seeds {SEED}..{SEED + REPLAYS - 1}, "
                "compared by distribution"
            )
            compare_replays(outcome, originals, rewrites, names, rtol, atol)
            cover_branches(outcome, original_source, rewrite_source, run_covered)
            return
    outcome.checks.update(exact.checks)
    cover_branches(outcome, original_source, rewrite_source, run_covered)


REMEDY = "other data, or a harness whose batches reach it, must run it to prove it"


def cover_branches(
    outcome: Outcome, original_source: str, rewrite_source: str, run: Callable[[], Run]
) -> None:
    """Record which branches of the `tf.cond` calls the rewrite introduced
    the replayed batches take: `run` replays the rewritten loop once more,
    eagerly and instrumented (traced, both branches are traced whichever
    runs). A branch never taken leaves the loop not proven."""
    if any(not c.ok for c in outcome.checks.values()):
        return  # a mismatch already
    try:
        introduced = coverage.introduced_conds(original_source, ast.parse(rewrite_source))
    except SyntaxError:
        return
    if not introduced:
        return
    covered = run()
    recorder = covered.branches or coverage.BranchRecorder(sorted({c.lineno for c in introduced}))
    outcome.branches = recorder.summary()
    missing = recorder.never_taken("on the batches of the replayed loop", REMEDY)
    if missing and covered.error is not None:
        outcome.warnings.append(
            "replayed eagerly to see which branches its tf.cond calls take, the rewritten loop "
            f"raised {covered.error.describe_error()}"
        )
    outcome.warnings.extend(missing)


# --- random loops: compared by distribution over seeds -----------------------

REPLAYS = 4  # replays per side of a random loop (pooled t-test with 6 degrees of freedom)
ALPHA = 1e-3  # false-alarm rate of the whole comparison of one loop (Bonferroni)
ENTRIES = 2  # individual entries tested per quantity besides the mean of the varying ones
# Final weights also by their distance to the original's mean: a rewrite that
# trains on another loss moves the weights farther than another seed does.
# Measured on examples/eager_tutorial.py (dropout, input noise; 8 seed bases,
# `benchmarks` has the loop): distance ratio rewrite / original 0.73-0.75 for
# the correct rewrite (a rewrite replay shares its dropout masks with the
# original replay of the same seed, so it sits nearer), 10.0-10.4 when the step
# trains on shifted labels. A ratio above DISTANCE_RATIO that is also
# significant fails. On the same 8 seed bases the whole comparison passed the
# correct rewrite 8 times and failed a loss scaled by 1.05 (through the loss
# curve) and the shifted labels 8 times each.
DISTANCE_RATIO = 1.5


def same_run(a: Run, b: Run) -> bool:
    """Bit-for-bit the same recorded values and final weights."""
    if len(a.steps) != len(b.steps) or set(a.final) != set(b.final):
        return False
    for x, y in zip(a.steps, b.steps, strict=True):
        if x.keys() != y.keys() or not all(identical(x[k], y[k]) for k in x):
            return False
    return all(identical(a.final[k], b.final[k]) for k in a.final)


def _numbers(value: Any) -> np.ndarray:
    """Every number of a recorded value (integers and booleans too), as one
    float64 vector."""
    return float_values(value, kinds="biufc")


@dataclass
class _Test:
    check: str
    label: str  # what was compared, for the message
    original: np.ndarray  # one statistic per original replay
    rewrite: np.ndarray  # the same statistic per rewrite replay
    one_sided: bool = False  # only a larger rewrite value fails (distances)


def compare_replays(
    outcome: Outcome,
    originals: list[Run],
    rewrites: list[Run],
    names: list[str],
    rtol: float,
    atol: float,
    checks: tuple[str, str, str] = (CHECK_RUNS, CHECK_LOSSES, CHECK_WEIGHTS),
) -> None:
    """Compare a random loop's replays, several seeds per side.

    Per recorded value and step, and per model's final weights: entries that
    every seed of the original gives alike must match in every replay of the
    rewrite (within the train-step tolerance); entries that vary are compared
    by the mean of the varying entries and the ENTRIES entries that vary most,
    with a pooled t-test at the Bonferroni level ALPHA / (number of tests) and
    a gap above the tolerance; final weights also by their distance to the
    original's mean weights. An entry that varies with the seed in the
    original but never in the rewrite is randomness the rewrite froze.
    `checks`: the names of the checks that the rewrite runs, of per-step
    values and of weights."""
    runs_check, values_check, weights_check = checks
    rtol, atol = rtol * 100, atol * 100
    runs = outcome.check(runs_check)
    for r in rewrites:
        if r.error is not None:
            runs.fail(f"the rewritten loop raised {r.error.describe_error()} under another seed")
            return
    runs.runs += len(rewrites)
    if any(len(r.steps) != len(originals[0].steps) for r in originals + rewrites):
        runs.fail("the rewritten loop ran another number of steps than the original")
        return
    tests: list[_Test] = []
    quantities: list[tuple[str, str, list[Any], list[Any]]] = []
    for i in range(len(originals[0].steps)):
        for name in names:
            if all(name in r.steps[i] for r in originals + rewrites):
                quantities.append(
                    (
                        values_check,
                        f"`{name}` after step {i + 1}",
                        [r.steps[i][name] for r in originals],
                        [r.steps[i][name] for r in rewrites],
                    )
                )
    models = sorted(set.intersection(*(set(r.final) for r in originals + rewrites)))
    for name in models:
        quantities.append(
            (
                weights_check,
                f"weights of `{name}`",
                [r.final[name] for r in originals],
                [r.final[name] for r in rewrites],
            )
        )
    for check_name, label, want, got in quantities:
        check = outcome.check(check_name)
        kind = Difference()
        for value in got:
            kind.merge(same_kind(want[0], value, label))
        if not kind.ok:
            check.add(kind, "every seed")
            continue
        a = np.stack([_numbers(v) for v in want])
        b = np.stack([_numbers(v) for v in got])
        tolerance = atol + rtol * np.abs(a[0])
        # Entries the same under every seed on each side (the batches, a
        # frozen counter) are compared value for value; the others by
        # distribution (an accuracy over 512 examples may by chance not move
        # under four seeds of one side, and move under the other's).
        fixed = (a.max(axis=0) == a.min(axis=0)) & (b.max(axis=0) == b.min(axis=0))
        check.add(_fixed_entries(a, b, fixed, tolerance, label), "every seed")
        varying = np.flatnonzero(~fixed)
        if not varying.size:
            continue
        tests.append(
            _Test(
                check_name,
                f"{label}: mean of the entries that vary",
                a[:, varying].mean(1),
                b[:, varying].mean(1),
            )
        )
        spread = np.vstack([a, b])[:, varying].std(axis=0)
        for j in varying[np.argsort(-spread)[:ENTRIES]]:
            tests.append(_Test(check_name, f"{label}: entry {int(j)}", a[:, j], b[:, j]))
        if check_name == weights_check and len(want) > 2:
            tests.append(_distance_test(a, b, label, weights_check))
    level = ALPHA / max(1, len(tests))
    for test in tests:
        outcome.check(test.check).add(
            _judge(test, level, rtol, atol), f"seeds {SEED}..{SEED + len(test.original) - 1}"
        )


def _fixed_entries(
    a: np.ndarray, b: np.ndarray, fixed: np.ndarray, tolerance: np.ndarray, label: str
) -> Difference:
    """Entries every seed of the original gives alike: exact in every rewrite replay."""
    if not fixed.any():
        return Difference()
    err = np.abs(b[:, fixed] - a[0, fixed])
    err = np.where(np.isnan(err) & np.isnan(b[:, fixed]) & np.isnan(a[0, fixed]), 0.0, err)
    err = np.where(np.isnan(err), np.inf, err)
    max_abs = float(err.max())
    bad = err > tolerance[fixed]
    if not bad.any():
        return Difference(True, max_abs)
    row, j = np.unravel_index(int(np.argmax(bad)), bad.shape)
    entry = int(np.flatnonzero(fixed)[j])
    return Difference(
        False,
        max_abs,
        detail=f"{label}: entry {entry} is {b[row, entry]:.6g} under every seed of the "
        f"rewrite, {a[0, entry]:.6g} under every seed of the original",
    )


def _distance_test(a: np.ndarray, b: np.ndarray, label: str, check: str) -> _Test:
    """Distances to the mean of the original replays but the first: each
    original replay's own left out, so both sides are measured alike."""
    n = a.shape[0]
    own = [
        float(np.linalg.norm(a[r] - np.delete(a, [0, r] if r else [0], axis=0).mean(0)))
        for r in range(1, n)
    ]
    reference = a[1:].mean(axis=0)
    theirs = [float(np.linalg.norm(row - reference)) for row in b]
    return _Test(
        check,
        f"{label}: distance to the original's mean weights",
        np.array(own),
        np.array(theirs),
        one_sided=True,
    )


def _judge(test: _Test, level: float, rtol: float, atol: float) -> Difference:
    a, b = test.original, test.rewrite
    gap = float(b.mean() - a.mean())
    scale = abs(float(a.mean()))
    rel = abs(gap) / scale if scale else 0.0
    # Frozen: every seed gives the original another value (a continuous
    # quantity; an accuracy over a batch may repeat by chance), and the
    # rewrite one value under every seed.
    continuous = np.unique(a).size == a.size
    if continuous and a.std() > atol + rtol * scale and b.std() == 0 and not test.one_sided:
        return Difference(
            False,
            abs(gap),
            rel,
            f"{test.label}: {b[0]:.6g} under every seed in the rewrite, while the original "
            f"varies ({a.min():.6g} to {a.max():.6g}): the rewrite froze a random value",
        )
    p = stats.pooled_t_p(a, b)
    if test.one_sided:
        significant = gap > 0 and p / 2 < level and b.mean() > DISTANCE_RATIO * a.mean()
    else:
        significant = p < level and abs(gap) > atol + rtol * scale
    if not significant:
        return Difference(True, abs(gap), rel)
    return Difference(
        False,
        abs(gap),
        rel,
        f"{test.label}: {b.mean():.6g} on average over the rewrite's seeds, "
        f"{a.mean():.6g} over the original's (spread {a.std(ddof=1):.3g} and "
        f"{b.std(ddof=1):.3g}; t-test p = {p:.2g} < {level:.2g})",
    )
