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

from tfrewrite.facts.rule_scopes import TracedFacts, can_fire
from tfrewrite.findings import Applicability

if TYPE_CHECKING:
    from tfrewrite.facts.context import RuleContext
    from tfrewrite.facts.index import ModuleIndex
    from tfrewrite.rewrite.fixes import Violation


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
    explanation: ClassVar[str]  # Markdown: what, why under tracing, notes, refusals
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
    # Whether its fix can stop code from running traced (it removes a
    # `@tf.function`): findings about that code then become moot, which only
    # the fix rounds show, so `check` runs them to say what `fix` resolves.
    may_untrace: ClassVar[bool] = False

    def applies_to(self, index: ModuleIndex, traced: TracedFacts) -> bool:
        """Cheap test on pass-1 facts: can this rule fire in this file at all?
        The tests live in `analysis.rule_scopes`, apart from LibCST."""
        return can_fire(self.code, index, traced)

    def check(self, ctx: RuleContext) -> Iterator[Violation]:
        raise NotImplementedError

    def render_doc(self) -> str:
        """Markdown documentation: what `tfrewrite rule CODE` prints."""
        lines = [f"# {self.name} ({self.code})", "", self.summary, ""]
        lines.append(f"Fix: {_FIX_WORDS[self.fix_applicability]}")
        lines += ["", _dedent(self.explanation).strip(), ""]
        example = next((e for e in self.examples if isinstance(e, Invalid) and e.after), None)
        if example is None:
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
        return "\n".join(lines)


_FIX_WORDS = {
    Applicability.SAFE: "safe where the rewrite can be proven (applied by `tfrewrite fix`); "
    "the notes below list the cases where it is unsafe or withheld, and why.",
    Applicability.UNSAFE: "unsafe (applied with `--unsafe-fixes`); review the diff.",
    Applicability.NONE: "none; the finding says what to do.",
}


def _dedent(text: str) -> str:
    import textwrap

    return textwrap.dedent(text)
