"""The coverage line of a run: of what verify was asked about, how much is proven.

    Coverage: 9 fixes asked (each counted with the verdict of the function or
    loop that runs it); 6 proven equivalent, 1 consistent, 2 not proven (a
    branch never taken); 0 need a package.

`verify PATH` knows the fixes it verifies: each result names the fixes in
the code it ran (`fixes`), and fixes in no code it runs have a "not proven"
result of their own, so the line counts fixes. `verify --original` and
`--base` compare two texts and never see fixes: the line then counts
results (functions, replayed loops, changed statements) and says so. A
"not proven" result is grouped by what would prove it: the texts that
explain it end in the remedy they name (a harness, configured inputs, a
factory), so the remedy is what is read here.

The same counts go into the JSON output as its `coverage` object. Standard
library only: the command line renders this without TensorFlow.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

UNIT = "functions"
UNIT_NOTE = "counted by function: a result does not name the fixes it covers"
FIX_UNIT = "fixes"
FIX_NOTE = "each counted with the verdict of the function or loop that runs it"

BRANCH_NEVER_TAKEN = "a branch never taken"
NEEDS_FACTORY = "needs a factory"
NEEDS_HARNESS = "needs a harness"
NEEDS_INPUTS = "needs inputs"
OUTSIDE_FUNCTIONS = "a change outside any function"
NOTHING_COMPARED = "nothing compared"
OTHER = "other reasons"

_PACKAGE = re.compile(r"needs package `([^`]+)`")


def not_proven_reason(result: dict[str, Any]) -> str:
    """What would prove a "not proven" result, in a few words."""
    if any(not (b.get("true") and b.get("false")) for b in result.get("branches") or []):
        return BRANCH_NEVER_TAKEN
    why = str(result.get("unproven") or " ".join(result.get("warnings") or []))
    if "outside any function" in why:
        return OUTSIDE_FUNCTIONS
    if "factory" in why:  # `self` cannot be built: harness."module:Class" = a factory
        return NEEDS_FACTORY
    if "verify_harness" in why or ('harness."' in why and 'inputs."' not in why):
        return NEEDS_HARNESS
    if 'inputs."' in why:
        return NEEDS_INPUTS
    if "harness" in why:  # "give the loop its inputs with a harness"
        return NEEDS_HARNESS
    if not result.get("checks"):
        return NOTHING_COMPARED
    return OTHER


def package_of(result: dict[str, Any]) -> str:
    """The package a "needs package" result names (its whole text if none is)."""
    text = str(result.get("needs_package") or "")
    found = _PACKAGE.search(text)
    return found.group(1) if found else text.strip() or "?"


def tally(results: list[dict[str, Any]]) -> dict[str, Any]:
    """The `coverage` object of the JSON output: how many fixes (or, when
    no result names fixes, results) have each verdict, "not proven" grouped
    by reason and "needs package" by package."""
    by_fix = any(r.get("fixes") for r in results)
    if by_fix:
        results = [r for r in results if r.get("fixes")]

    def weight(result: dict[str, Any]) -> int:
        return len(result.get("fixes") or ()) if by_fix else 1

    verdicts: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    packages: Counter[str] = Counter()
    for r in results:
        verdict = str(r.get("verdict"))
        verdicts[verdict] += weight(r)
        if verdict == "not proven":
            reasons[not_proven_reason(r)] += weight(r)
        elif verdict == "needs package":
            packages[package_of(r)] += weight(r)
    return {
        "unit": FIX_UNIT if by_fix else UNIT,
        "note": FIX_NOTE if by_fix else UNIT_NOTE,
        "asked": sum(weight(r) for r in results),
        "equivalent": verdicts["equivalent"],
        "consistent": verdicts["consistent"],
        "diverges": verdicts["diverges"],
        "not_proven": {"count": verdicts["not proven"], "reasons": dict(reasons.most_common())},
        "needs_package": {"count": verdicts["needs package"], "packages": sorted(packages)},
        "mismatch": verdicts["mismatch"],
        "error": verdicts["error"],
    }


def _grouped(counts: dict[str, int]) -> str:
    """`a branch never taken` or `2 needs a harness, 1 a branch never taken`."""
    if len(counts) == 1:
        return next(iter(counts))
    return ", ".join(f"{n} {reason}" for reason, n in counts.items())


def coverage_line(counts: dict[str, Any]) -> str:
    """The one line `verify` prints after the per-function results."""
    asked = counts["asked"]
    parts = [f"{counts['equivalent']} proven equivalent"]
    if counts["consistent"]:
        parts.append(f"{counts['consistent']} consistent")
    if counts["diverges"]:
        n = counts["diverges"]
        parts.append(f"{n} {'diverges' if n == 1 else 'diverge'} (original only)")
    unproven = counts["not_proven"]
    if unproven["count"]:
        parts.append(f"{unproven['count']} not proven ({_grouped(unproven['reasons'])})")
    if counts["mismatch"]:
        n = counts["mismatch"]
        parts.append(f"{n} {'mismatch' if n == 1 else 'mismatches'}")
    if counts["error"]:
        n = counts["error"]
        parts.append(f"{n} {'error' if n == 1 else 'errors'}")
    package = counts["needs_package"]
    needs = f"{package['count']} {'needs' if package['count'] == 1 else 'need'} a package"
    if package["packages"]:
        needs += f" ({', '.join(package['packages'])})"
    unit = counts.get("unit", UNIT)
    noun = unit if asked != 1 else {FIX_UNIT: "fix"}.get(unit, unit.removesuffix("s"))
    return (
        f"Coverage: {asked} {noun} asked ({counts.get('note', UNIT_NOTE)}); "
        f"{', '.join(parts)}; {needs}."
    )
