"""The README documents what the code does: its rules table is the registry."""

from pathlib import Path

from tfrewrite.docs import END, START, replace_table, rules_table
from tfrewrite.rules import ALL_RULES

README = Path(__file__).parent.parent / "README.md"


def test_readme_rules_table_matches_registry() -> None:
    text = README.read_text(encoding="utf-8")
    assert START in text and END in text
    assert replace_table(text) == text, (
        "README rules table is stale: run `python -m tfrewrite.docs`"
    )


def test_table_lists_every_rule() -> None:
    table = rules_table()
    assert all(f"| {r.code} |" in table for r in ALL_RULES)


def test_readme_documents_every_cli_option() -> None:
    text = README.read_text(encoding="utf-8")
    for option in (
        "--select",
        "--ignore",
        "--output-format",
        "--statistics",
        "--exit-zero",
        "--config",
        "--jobs",
        "--quiet",
        "--stdin-filename",
        "--unsafe-fixes",
        "--show-fixes",
        "--diff",
    ):
        assert f"`{option}" in text, option
