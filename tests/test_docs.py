"""The README documents what the code does (its rules table is the registry), and
every rule documents itself as Ruff's rule pages do: What it does, Why is this
bad?, Example, Fix safety."""

import textwrap
from pathlib import Path

import pytest

from tfrewrite.docs import END, START, replace_table, rules_table
from tfrewrite.findings import Applicability
from tfrewrite.rules import ALL_RULES
from tfrewrite.rules.base import Invalid, Rule, Valid

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


# -- rule documentation: Ruff's rule page layout ---------------------------------------------

_HEADINGS = ("## What it does", "## Why is this bad?", "## Example", "## Fix safety")


def _sections(markdown: str) -> list[tuple[str, str]]:
    """(heading line, body) for every `## ` heading outside code blocks."""
    found: list[tuple[str, list[str]]] = []
    fenced = False
    for line in markdown.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        if not fenced and line.startswith("## "):
            found.append((line.strip(), []))
        elif found:
            found[-1][1].append(line)
    return [(heading, "\n".join(body).strip()) for heading, body in found]


@pytest.mark.parametrize("rule", ALL_RULES, ids=lambda r: r.code)
def test_rule_doc_has_ruff_sections_in_order(rule: Rule) -> None:
    sections = _sections(rule.render_doc())
    headings = [heading for heading, _ in sections]
    assert all(h in headings for h in _HEADINGS), headings
    assert [h for h in headings if h in _HEADINGS] == list(_HEADINGS), headings
    assert headings[:3] == list(_HEADINGS[:3]), "What, Why and Example open the page"
    assert headings[-1] == "## Fix safety", "Fix safety closes the page"
    assert all(body for _, body in sections), [h for h, body in sections if not body]


@pytest.mark.parametrize("rule", ALL_RULES, ids=lambda r: r.code)
def test_explanation_is_written_in_page_order(rule: Rule) -> None:
    headings = [heading for heading, _ in _sections(textwrap.dedent(rule.explanation))]
    assert headings[:2] == ["## What it does", "## Why is this bad?"], headings
    assert headings[-1] == "## Fix safety", headings
    assert "## Example" not in headings, "the example comes from the rule's examples"


@pytest.mark.parametrize("rule", ALL_RULES, ids=lambda r: r.code)
def test_rule_has_invalid_and_valid_examples(rule: Rule) -> None:
    assert any(isinstance(e, Invalid) for e in rule.examples)
    assert any(isinstance(e, Valid) for e in rule.examples)


@pytest.mark.parametrize("rule", ALL_RULES, ids=lambda r: r.code)
def test_example_shows_the_fix_when_there_is_one(rule: Rule) -> None:
    """The page's example is the first Invalid one: for a rule with a fix it
    must show the fix ("Use instead:")."""
    first = next(e for e in rule.examples if isinstance(e, Invalid))
    example = dict(_sections(rule.render_doc()))["## Example"]
    if rule.fix_applicability is Applicability.NONE:
        assert first.after is None and "Use instead:" not in example
    else:
        assert first.after is not None and "Use instead:" in example


@pytest.mark.parametrize("rule", ALL_RULES, ids=lambda r: r.code)
def test_fix_safety_matches_the_rules_applicability(rule: Rule) -> None:
    safety = dict(_sections(rule.render_doc()))["## Fix safety"].lower()
    if rule.fix_applicability is Applicability.NONE:
        assert "no automatic fix" in safety
    else:
        assert "unsafe" in safety and "no automatic fix" not in safety


def test_render_doc_reorders_sections_as_ruff_does() -> None:
    class Demo(Rule):
        code = "TFR999"
        name = "demo"
        summary = "A demo."
        fix_applicability = Applicability.SAFE
        explanation = """
        ## What it does
        Finds things.

        ## Fix safety
        Safe.

        ## Notes
        ```python
        ## not a heading
        ```

        ## Why is this bad?
        Because.
        """
        examples = (Invalid("x = 1", "x = 2"), Valid("y = 1"))

    doc = Demo().render_doc()
    headings = [heading for heading, _ in _sections(doc)]
    assert headings == [
        "## What it does",
        "## Why is this bad?",
        "## Example",
        "## Notes",
        "## Fix safety",
    ]
    assert doc.startswith("# demo (TFR999)\n\nA demo.\n\nFix: safe")
    assert "Use instead:\n\n```python\nx = 2\n```" in doc
    assert "## not a heading" in doc
