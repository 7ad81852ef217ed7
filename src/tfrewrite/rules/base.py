"""What a rule is: a code, documentation that doubles as its tests, and a check.

A rule reports `Violation`s against LibCST nodes; a violation may carry a
`CstFix` (`tfrewrite.rewrite.fixes`): node replacements, possibly in several
places, plus imports to add.
The engine turns violations into `Finding`s (positions, noqa, selection) and
applies fixes; no rule computes positions or touches files.

Following Fixit, a rule's examples are both its documentation (`tfrewrite rule
CODE` prints them) and its tests (the suite runs every example).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from tfrewrite.facts.rule_scopes import TracedFacts
from tfrewrite.findings import Applicability

if TYPE_CHECKING:
    from tfrewrite.facts.context import RuleContext
    from tfrewrite.facts.index import ModuleIndex
    from tfrewrite.rewrite.fixes import Violation
    from tfrewrite.rules.registry import RuleSpec


@dataclass(frozen=True)
class Invalid:
    """An example that must produce findings; `after` is the fixed source
    (None when the rule cannot fix it). `unsafe` applies unsafe fixes."""

    before: str
    after: str | None = None
    findings: int = 1
    unsafe: bool = False
    note: str = ""


@dataclass(frozen=True)
class Valid:
    """An example that must produce no finding."""

    code: str
    note: str = ""


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]  # kebab-case, like Ruff's rule names
    summary: ClassVar[str]  # one line, used in listings and SARIF shortDescription
    # Markdown sections, in this order: `## What it does`, `## Why is this
    # bad?`, any others (refusals, notes), `## Fix safety` (see `render_doc`).
    explanation: ClassVar[str]
    fix_applicability: ClassVar[Applicability]
    examples: ClassVar[tuple[Invalid | Valid, ...]] = ()
    # Whether the rule only looks inside code that runs traced: its findings
    # inside a train step then hold back decorating the step.
    needs_traced_code: ClassVar[bool] = True
    # Whether a finding inside a train step must be fixed before the step may
    # be decorated (it would change meaning once traced). False for a rule
    # whose hazard needs conditions the decorator does not create (an
    # unknown dimension: the step's decorator keeps shapes known).
    blocks_decoration: ClassVar[bool] = True
    # Whether AutoGraph converts what it finds as it is written (a Python
    # `if` on a tensor): the finding stays, for code that must not need
    # AutoGraph, but a step decorated with AutoGraph runs that code as the
    # original did, so it does not keep the step from its decorator. A rule
    # whose findings differ says so per finding (`Violation.autograph_converts`).
    autograph_converts: ClassVar[bool] = False
    # Whether its fix can stop code from running traced (it removes a
    # `@tf.function`): findings about that code then become moot, which only
    # the fix rounds show, so `check` runs them to say what `fix` resolves.
    may_untrace: ClassVar[bool] = False
    # Whether its fix decorates a train step (or moves a decorator onto one):
    # the code such a step calls is checked as traced before it is
    # (`FunctionScope.pending`), and fixed only together with the decoration.
    decorates_steps: ClassVar[bool] = False

    def __init__(self, spec: RuleSpec | None = None) -> None:
        # The registry entry the rule was loaded from (`rules.registry`); None
        # for a rule built outside the registry, which then runs everywhere.
        self.spec = spec

    def applies_to(self, index: ModuleIndex, traced: TracedFacts) -> bool:
        """Cheap test on pass-1 facts: can this rule fire in this file at all?
        The test is the `scope` of the rule's registry entry (in its family's
        `scopes.py`, apart from LibCST)."""
        return self.spec is None or self.spec.can_fire(index, traced)

    def check(self, ctx: RuleContext) -> Iterator[Violation]:
        raise NotImplementedError

    def render_doc(self) -> str:
        """Markdown documentation: what `tfrewrite rule CODE` prints, laid out
        as Ruff's rule pages so a reader finds the same things in the same
        place: what the rule finds and why that is bad, an example (and what to
        write instead), the rule's other notes, and fix safety last."""
        lead, sections = _sections(_dedent(self.explanation))
        lines = [f"# {self.name} ({self.code})", "", self.summary, ""]
        lines += [f"Fix: {_FIX_WORDS[self.fix_applicability]}", ""]
        if lead:
            lines += [lead, ""]
        first = [text for heading, text in sections if heading in _LEADING_SECTIONS]
        last = [text for heading, text in sections if heading == _LAST_SECTION]
        middle = [
            text
            for heading, text in sections
            if heading not in _LEADING_SECTIONS and heading != _LAST_SECTION
        ]
        for text in first:
            lines += [text, ""]
        example = next((e for e in self.examples if isinstance(e, Invalid)), None)
        if example is not None:
            lines += ["## Example", "", "```python", _dedent(example.before).strip(), "```", ""]
            if example.after:
                lines += [
                    "Use instead:",
                    "",
                    "```python",
                    _dedent(example.after).strip(),
                    "```",
                    "",
                ]
        for text in (*middle, *last):
            lines += [text, ""]
        return "\n".join(lines)


# The sections of an explanation, as Ruff names them: these two come before
# the example, fix safety after every other section.
_LEADING_SECTIONS = ("What it does", "Why is this bad?")
_LAST_SECTION = "Fix safety"

_FIX_WORDS = {
    Applicability.SAFE: "safe where the rewrite is proven (applied by `tfrewrite fix`); "
    "see Fix safety for where it is unsafe or withheld, and why.",
    Applicability.UNSAFE: "unsafe (applied with `--unsafe-fixes`); review the diff. "
    "See Fix safety.",
    Applicability.NONE: "none; the finding says what to do.",
}


def _dedent(text: str) -> str:
    import textwrap

    return textwrap.dedent(text)


def _sections(markdown: str) -> tuple[str, list[tuple[str, str]]]:
    """Split an explanation at its `## ` headings (not inside code blocks):
    the text before the first heading, and each section as (heading, its
    Markdown with the heading line), in order. `render_doc` reorders them."""
    lead: list[str] = []
    sections: list[tuple[str, list[str]]] = []
    fenced = False
    for line in markdown.strip().splitlines():
        if line.startswith("```"):
            fenced = not fenced
        if not fenced and line.startswith("## "):
            sections.append((line[3:].strip(), [line]))
        elif sections:
            sections[-1][1].append(line)
        else:
            lead.append(line)
    return "\n".join(lead).strip(), [
        (heading, "\n".join(body).strip()) for heading, body in sections
    ]
