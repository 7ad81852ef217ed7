"""Render verification results: a table per function (text) or JSON.

Verdicts:

* `equivalent` — every check passed and every introduced `tf.cond` took both branches.
* `mismatch` — a check failed; the failing check is named with its first failing input.
* `not proven` — nothing failed, but a branch was never taken (or no inputs could be made).
* `diverges` — the original alone behaves differently traced than eagerly.
* `consistent` — the original alone behaves the same traced and eagerly.
* `needs package` — the code imports a package the workers' Python lacks (named,
  with the file that imports it): the environment's gap, not the rewrite's.
* `error` — the function could not be loaded or run (traceback shown), or timed out.

After the results, one line counts them by verdict, "not proven" grouped by
what would prove it (`tally`); the JSON output carries the same counts as
its `coverage` object.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from tfrewrite.verify.tally import coverage_line, tally

PASSING = frozenset({"equivalent", "consistent"})
EXIT_OK, EXIT_FAILED, EXIT_ERROR = 0, 1, 2


def exit_code(results: list[dict[str, Any]]) -> int:
    if any(r["verdict"] == "error" for r in results):
        return EXIT_ERROR
    if any(r["verdict"] not in PASSING for r in results):
        return EXIT_FAILED
    return EXIT_OK


def _number(x: float | None) -> str:
    if x is None:
        return "inf"
    return "0" if x == 0 else f"{x:.2e}"


def branch_place(branch: dict[str, Any]) -> str:
    """Where a `tf.cond` of the rewrite stands: "line 31", or "cell 4, line 2"
    in a notebook."""
    if branch.get("cell") is not None:
        return f"cell {branch['cell']}, line {branch['line']}"
    return f"line {branch['line']}"


def location(result: dict[str, Any]) -> str:
    """`path:line`, or `path:cell N:line` in a notebook (as findings are shown)."""
    if result.get("cell") is not None:
        return f"{result['path']}:cell {result['cell']}:{result['line']}"
    return f"{result['path']}:{result['line']}"


def _branches(result: dict[str, Any]) -> str:
    branches = result.get("branches") or []
    if not branches:
        return "no tf.cond introduced"
    parts = []
    for b in branches:
        taken = [name for name in ("true", "false") if b["true" if name == "true" else "false"]]
        missing = [name for name in ("true", "false") if name not in taken]
        parts.append(
            f"tf.cond on rewrite {branch_place(b)}: "
            + ("both" if not missing else f"{'/'.join(missing)} never taken")
        )
    covered = sum(1 for b in branches if b["true"] and b["false"])
    return f"{covered}/{len(branches)} covered ({'; '.join(parts)})"


def render_text(results: list[dict[str, Any]]) -> str:
    lines: list[str] = []
    for r in results:
        head = f"{location(r)}: {r['function']}"
        mode = "rewrite" if r.get("mode") == "rewrite" else "original only"
        lines.append(f"{head}  [{mode}, {r['reason']}]  {r['verdict'].upper()}")
        checks = r.get("checks") or []
        shown_traceback = False
        if checks:
            width = max(len(c["name"]) for c in checks)
            lines.append(
                f"  {'check':<{width}}  {'runs':>4}  {'max abs':>9}  {'max rel':>9}  result"
            )
            for c in checks:
                status = "ok" if c["ok"] else f"FAIL: {c['detail']}"
                lines.append(
                    f"  {c['name']:<{width}}  {c['runs']:>4}  {_number(c['max_abs']):>9}  "
                    f"{_number(c['max_rel']):>9}  {status}"
                )
                if not c["ok"] and c.get("traceback") and not shown_traceback:
                    shown_traceback = True
                    lines.extend("      " + line for line in c["traceback"].rstrip().splitlines())
        ran_function = any(c["name"].startswith("rewrite ") for c in checks)
        if (
            r.get("mode") == "rewrite"
            and not r.get("error")
            and (r.get("branches") or ran_function)
        ):
            lines.append(f"  branches: {_branches(r)}")
        if r.get("inputs"):
            lines.append(f"  inputs: {', '.join(r['inputs'])}")
        if r.get("stochastic"):
            lines.append("  random: compared by freshness and moments, not by value")
        for d in r.get("divergences") or []:
            lines.append(f"  divergence in the original: {d}")
        for w in r.get("warnings") or []:
            lines.append(f"  warning: {w}")
        if r.get("needs_package"):
            lines.append(f"  {r['needs_package']}")
        elif r.get("error"):
            lines.extend("  " + line for line in str(r["error"]).rstrip().splitlines())
        elif r.get("traceback"):
            lines.extend("    " + line for line in str(r["traceback"]).rstrip().splitlines())
        if r.get("seconds") is not None:
            lines.append(f"  ({r['seconds']:.2f} s)")
        lines.append("")
    lines.append(coverage_line(tally(results)))
    counts = Counter(r["verdict"] for r in results)
    n = len(results)
    summary = ", ".join(f"{count} {verdict}" for verdict, count in sorted(counts.items()))
    lines.append(f"Verified {n} function{'s' if n != 1 else ''}: {summary or 'nothing to verify'}.")
    return "\n".join(lines)


def render_json(results: list[dict[str, Any]]) -> str:
    return json.dumps(
        {"results": results, "exit_code": exit_code(results), "coverage": tally(results)},
        indent=2,
    )
