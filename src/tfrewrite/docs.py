"""Documentation generated from the rule registry.

`python -m tfrewrite.docs` rewrites the rules table in README.md between its
markers; a test fails when the table and the registry disagree.
"""

from __future__ import annotations

import sys
from pathlib import Path

from tfrewrite.rules import ALL_RULES

START = "<!-- rules-table:start -->"
END = "<!-- rules-table:end -->"
_FIX = {"safe": "safe", "unsafe": "unsafe", "none": "—"}


def rules_table() -> str:
    rows = ["| Code | Name | Summary | Fix |", "|---|---|---|---|"]
    for rule in sorted(ALL_RULES, key=lambda r: r.code):
        summary = rule.summary.replace("|", "\\|")
        rows.append(
            f"| {rule.code} | `{rule.name}` | {summary} | {_FIX[rule.fix_applicability.value]} |"
        )
    return "\n".join(rows)


def replace_table(readme: str) -> str:
    head, _, rest = readme.partition(START)
    _, _, tail = rest.partition(END)
    return f"{head}{START}\n{rules_table()}\n{END}{tail}"


def main() -> None:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("README.md")
    text = path.read_text(encoding="utf-8")
    path.write_text(replace_table(text), encoding="utf-8")


if __name__ == "__main__":
    main()
