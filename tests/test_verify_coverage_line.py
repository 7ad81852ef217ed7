"""The coverage line `verify` prints after its results, and the `coverage`
object of its JSON output, from hand-made results (no TensorFlow)."""

from __future__ import annotations

import json
from typing import Any

from tfrewrite.verify import report, tally

NOTE = "(counted by function: a result does not name the fixes it covers)"


def _result(verdict: str, **fields: Any) -> dict[str, Any]:
    result: dict[str, Any] = {
        "function": f"f_{verdict.replace(' ', '_')}",
        "path": "losses.py",
        "line": 3,
        "reason": "changed by the rewrite",
        "mode": "original" if verdict in ("consistent", "diverges") else "rewrite",
        "verdict": verdict,
        "checks": [
            {
                "name": "rewrite traced",
                "ok": verdict != "mismatch",
                "runs": 4,
                "max_abs": 0.0,
                "max_rel": 0.0,
                "detail": ""
                if verdict != "mismatch"
                else "on random draw (seed 0): result differs",
            }
        ],
        "branches": [],
        "warnings": [],
    }
    result.update(fields)
    return result


UNTAKEN = [{"line": 7, "true": True, "false": False}]
HARNESS = (
    "`train_step(model, x, y)` cannot be called on synthesised tensors: `model` is called; "
    'write verify_harness.py with `def build(): return {"model": ...}` and set '
    '[tool.tfrewrite.verify] harness."losses:train_step" = "verify_harness:build"'
)
INPUTS = (
    "the original raised ValueError: bad shape on the synthesised inputs (y = float32[8]); "
    'give its inputs in [tool.tfrewrite.verify] inputs."losses:f"'
)
SCIPY = (
    "needs package `scipy` (imported by losses.py), which the verification workers' Python "
    "cannot import and the project does not contain: install it there (pip install scipy) or "
    "run verify with --python pointing at the project's environment"
)


def test_the_line_counts_each_verdict_and_names_why_not_proven() -> None:
    results = [
        *(_result("equivalent") for _ in range(5)),
        _result("consistent"),
        _result("not proven", branches=UNTAKEN),
    ]
    assert report.render_text(results).splitlines()[-2] == (
        f"Coverage: 7 functions asked {NOTE}; 5 proven equivalent, 1 consistent, "
        "1 not proven (a branch never taken); 0 need a package."
    )


def test_reasons_are_grouped_and_packages_named() -> None:
    results = [
        _result("equivalent"),
        _result("not proven", checks=[], unproven=HARNESS, warnings=[HARNESS]),
        _result("not proven", checks=[], unproven=HARNESS, warnings=[HARNESS]),
        _result("not proven", checks=[], unproven=INPUTS, warnings=[INPUTS]),
        _result("not proven", branches=UNTAKEN),
        _result("needs package", checks=[], needs_package=SCIPY),
        _result("needs package", checks=[], needs_package=SCIPY),
        _result("mismatch"),
        _result("error", checks=[], error="Traceback ...\nKeyError: 'x'"),
    ]
    line = tally.coverage_line(tally.tally(results))
    assert line == (
        f"Coverage: 9 functions asked {NOTE}; 1 proven equivalent, 4 not proven "
        "(2 needs a harness, 1 needs inputs, 1 a branch never taken), 1 mismatch, 1 error; "
        "2 need a package (scipy)."
    )


def test_singular_and_empty_runs() -> None:
    one = tally.coverage_line(tally.tally([_result("needs package", needs_package=SCIPY)]))
    assert one == (
        f"Coverage: 1 function asked {NOTE}; 0 proven equivalent; 1 needs a package (scipy)."
    )
    assert tally.coverage_line(tally.tally([])) == (
        f"Coverage: 0 functions asked {NOTE}; 0 proven equivalent; 0 need a package."
    )


def test_reasons_read_from_older_results_without_an_unproven_field() -> None:
    """A results file written before results carried `unproven` (`--resume`)
    still groups by the warning that said why."""
    outside = (
        "`x = 1` changed outside any function or training loop: verify runs functions and "
        "loops, not single statements; review this change (it is not applied by fix --verify)"
    )
    factory = (
        "cannot construct `Critic()` to call `Critic.loss`: TypeError(); configure a factory: "
        '[tool.tfrewrite.verify] harness."module:Critic" = "verify_harness:make"'
    )
    loop = (
        "building the loop's inputs from the script's own code raised OSError: no data; "
        "give the loop its inputs with a harness"
    )
    reasons = [
        tally.not_proven_reason(_result("not proven", checks=[], warnings=[w]))
        for w in (outside, factory, loop, "something else")
    ]
    assert reasons == [
        tally.OUTSIDE_FUNCTIONS,
        tally.NEEDS_FACTORY,
        tally.NEEDS_HARNESS,
        tally.NOTHING_COMPARED,
    ]
    ran = _result("not proven", warnings=["the loop ran no step"])
    assert tally.not_proven_reason(ran) == tally.OTHER


def test_json_output_keeps_its_keys_and_adds_coverage() -> None:
    results = [_result("equivalent"), _result("diverges"), _result("not proven", branches=UNTAKEN)]
    data = json.loads(report.render_json(results))
    assert data["results"] == results and data["exit_code"] == report.EXIT_FAILED
    assert data["coverage"] == {
        "unit": "functions",
        "note": NOTE.strip("()"),
        "asked": 3,
        "equivalent": 1,
        "consistent": 0,
        "diverges": 1,
        "not_proven": {"count": 1, "reasons": {"a branch never taken": 1}},
        "needs_package": {"count": 0, "packages": []},
        "mismatch": 0,
        "error": 0,
    }
    assert tally.coverage_line(data["coverage"]) == (
        f"Coverage: 3 functions asked {NOTE}; 1 proven equivalent, 1 diverges (original only), "
        "1 not proven (a branch never taken); 0 need a package."
    )


def test_the_verified_summary_stays_the_last_line() -> None:
    text = report.render_text([_result("mismatch")])
    assert text.splitlines()[-1] == "Verified 1 function: 1 mismatch."
    assert text.splitlines()[-2].startswith("Coverage: 1 function asked")


def test_results_that_name_their_fixes_are_counted_by_fix() -> None:
    """`verify PATH` knows the fixes: a result's verdict counts once per fix
    in the code it ran, and a result without fixes (a divergence check of a
    traced function the rewrite left alone) is not a fix asked about."""
    results = [
        _result("equivalent", fixes=["TFR102 line 4", "TFR103 line 5"]),
        _result("not proven", branches=UNTAKEN, fixes=["TFR101 line 9"]),
        _result("needs package", needs_package=SCIPY, fixes=["TFR104 line 12", "TFR104 line 13"]),
        _result("consistent"),
    ]
    line = tally.coverage_line(tally.tally(results))
    assert line == (
        "Coverage: 5 fixes asked (each counted with the verdict of the function or loop that "
        "runs it); 2 proven equivalent, 1 not proven (a branch never taken); "
        "2 need a package (scipy)."
    )


def test_one_fix_is_a_fix() -> None:
    line = tally.coverage_line(tally.tally([_result("equivalent", fixes=["TFR102 line 4"])]))
    assert line.startswith("Coverage: 1 fix asked (")
