"""The editor's re-check after an edit: only the functions the edit can change.

A check costs the whole file (its parse, the rules, the simulated fix
rounds), yet most edits change one function. Pass 1 runs on the whole new
text (it is cheap); comparing it, unit by unit (top-level functions and
methods of top-level classes, as `relevant_code` counts them), with the last
checked text gives the units whose findings can change:

- the units whose text changed, or that are new;
- the units naming one of those, or one that is gone (a caller reads what a
  callee returns), and the units the changed ones name, before or after the
  edit (a callee's findings depend on what its callers hand it);
- every method of a class one of whose methods changed (what `self` holds is
  read from every method);
- the units holding a function whose traced facts changed (a step decorated
  elsewhere makes its callees traced);
- when lines moved, the units whose findings name a line ("see TFR302 on
  line 40"): the line named may have moved otherwise;
- the code outside the units (`relevant_code.MODULE_LEVEL`) when it names a
  unit that changed or is gone (a module-level loop calling an edited step).

The check then parses those units and what they need (`relevant_code.prune`
with `only`: their callees, what sets up `self`, the module-level
assignments of names they read); every other unit keeps its last findings,
moved by as many lines as the unit moved, and so does the code outside the
units when it is not checked again. An edit of that code itself (an import,
a module-level statement, a class header; comments and blank lines aside)
changes what every function sees: the whole file is checked.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tfrewrite.findings import Finding, Position
from tfrewrite.pipeline.relevant_code import (
    MODULE_LEVEL,
    outside_units,
    source_lines,
    units_of,
)

if TYPE_CHECKING:
    from collections.abc import Iterable

    from tfrewrite.facts.index import ModuleIndex
    from tfrewrite.facts.traced_function import TracedFunction
    from tfrewrite.findings import FileResult
    from tfrewrite.pipeline.relevant_code import Unit
    from tfrewrite.pipeline.run_options import FileJob, RunOptions

# A line a finding's message names, once placed ("line 40", "lines 3-5").
_NAMES_A_LINE = re.compile(r"\blines? \d")
_NUMBER = re.compile(r"\d+")
_WORD = re.compile(r"[^\W\d]\w*")


@dataclass(frozen=True)
class _Span:
    first: int
    last: int
    text: str
    name: str
    class_name: str | None
    words: frozenset[str]


@dataclass(frozen=True)
class Checked:
    """A document's last check, kept for the next edit: its text, its units,
    what was outside them, its traced facts (line numbers left out: they
    move with every edit above) and its findings."""

    source: str
    options: RunOptions
    units: dict[str, _Span]
    outside: tuple[str, ...]
    outside_words: frozenset[str]
    traced: dict[str, str]
    findings: tuple[Finding, ...]


@dataclass(frozen=True)
class Recheck:
    """The units a check after an edit must look at again, and the last
    findings of the others, placed where their units now are."""

    units: frozenset[str]  # with `relevant_code.MODULE_LEVEL` when the code outside them
    kept: tuple[Finding, ...]
    rechecked_lines: tuple[tuple[int, int], ...]  # of the units in `units`, in the new text
    unit_lines: tuple[tuple[int, int], ...]  # of every unit, in the new text

    def merge(self, found: Iterable[Finding], rechecked: frozenset[str] | None) -> list[Finding]:
        """The document's findings: those of a check of `self.units` (its
        result's `rechecked`) inside them or outside every unit, with the
        kept ones. A check that fell back to the whole file (`rechecked` is
        None) gives them all."""
        if rechecked is None:
            return list(found)
        fresh = [f for f in found if self._is_fresh(f.start.line)]
        return sorted([*fresh, *self.kept], key=Finding.sort_key)

    def _is_fresh(self, line: int) -> bool:
        """Whether a finding on `line` is the re-check's: in a unit it
        looked at again, or outside every unit when that code was."""
        if any(a <= line <= b for a, b in self.rechecked_lines):
            return True
        outside = not any(a <= line <= b for a, b in self.unit_lines)
        return outside and MODULE_LEVEL in self.units


def _spans(units: list[Unit]) -> dict[str, _Span]:
    return {
        u.qualname: _Span(u.first, u.last, u.text, u.name, u.class_name, frozenset(u.words))
        for u in units
    }


def _traced_facts(traced: dict[str, TracedFunction]) -> dict[str, str]:
    """Each traced function's facts without numbers: the lines they name
    (`reason`, `mixed_callers`) move with every edit above them."""
    return {q: _NUMBER.sub("#", repr(t)) for q, t in traced.items()}


def remember(
    source: str,
    index: ModuleIndex,
    traced: dict[str, TracedFunction],
    options: RunOptions,
    findings: Iterable[Finding],
) -> Checked | None:
    """What the next edit's re-check compares with; None when the file's
    units cannot be told apart (every check of it is whole)."""
    units, lines = units_of(source, index)
    if not units:
        return None
    outside = tuple(outside_units(lines, units))
    return Checked(
        source,
        options,
        _spans(units),
        outside,
        frozenset(_WORD.findall("\n".join(outside))),
        _traced_facts(traced),
        tuple(findings),
    )


def plan(
    last: Checked,
    source: str,
    index: ModuleIndex,
    traced: dict[str, TracedFunction],
    options: RunOptions,
) -> Recheck | None:
    """What a check of `source` (after an edit of `last.source`) must look
    at again; None when it must check the whole file."""
    if options != last.options:
        return None
    units, lines = units_of(source, index)
    if not units or tuple(outside_units(lines, units)) != last.outside:
        return None
    now = _spans(units)
    before = last.units
    changed = {q for q, span in now.items() if q not in before or before[q].text != span.text}
    gone = set(before) - set(now)
    moved = any(before[q].first != span.first for q, span in now.items() if q in before)
    names = {now[q].name for q in changed} | {before[q].name for q in gone}
    named = set().union(
        *(now[q].words for q in changed),
        *(before[q].words for q in changed | gone if q in before),
    )
    classes = {now[q].class_name for q in changed} | {before[q].class_name for q in gone}
    classes.discard(None)
    facts = _traced_facts(traced)
    refacted = {q for q in set(facts) | set(last.traced) if facts.get(q) != last.traced.get(q)}
    again = set(changed)
    if not names.isdisjoint(last.outside_words) or any(
        _NAMES_A_LINE.search(f.message) for f in last.findings if _outside_all(f, before)
    ):
        again.add(MODULE_LEVEL)
    for qualname, span in now.items():
        if (
            not names.isdisjoint(span.words)
            or span.name in named
            or span.class_name in classes
            or any(q == qualname or q.startswith(qualname + ".") for q in refacted)
        ):
            again.add(qualname)
    kept: list[Finding] = []
    for qualname, span in now.items():
        if qualname in again:
            continue
        old = before[qualname]
        delta = span.first - old.first
        own = [f for f in last.findings if old.first <= f.start.line <= old.last]
        if moved and any(_NAMES_A_LINE.search(f.message) for f in own):
            again.add(qualname)
            continue
        kept += [_moved(f, delta) for f in own]
    if MODULE_LEVEL not in again:
        kept += _outside_findings(last, lines, units)
    return Recheck(
        frozenset(again),
        tuple(kept),
        tuple((now[q].first, now[q].last) for q in again if q in now),
        tuple((span.first, span.last) for span in now.values()),
    )


def _outside_all(finding: Finding, units: dict[str, _Span]) -> bool:
    line = finding.start.line
    return not any(span.first <= line <= span.last for span in units.values())


def _code_lines(lines: list[str], units: Iterable[Unit] | Iterable[_Span]) -> list[int]:
    """The numbers of the lines outside every unit that hold code, in order
    (`relevant_code.outside_units` gives their text)."""
    inside = {n for u in units for n in range(u.first, u.last + 1)}
    return [
        number
        for number, line in enumerate(lines, start=1)
        if number not in inside and line.strip() and not line.lstrip().startswith("#")
    ]


def _outside_findings(last: Checked, lines: list[str], units: list[Unit]) -> list[Finding]:
    """The last check's findings outside every unit, moved to where their
    lines now are: the code outside the units is the same, line for line."""
    before = _code_lines(source_lines(last.source), last.units.values())
    now = _code_lines(lines, units)
    where = dict(zip(before, now, strict=True))
    return [
        _moved(f, where[f.start.line] - f.start.line)
        for f in last.findings
        if _outside_all(f, last.units) and f.start.line in where
    ]


def _moved(finding: Finding, delta: int) -> Finding:
    if not delta:
        return finding
    return dataclasses.replace(
        finding,
        start=Position(finding.start.line + delta, finding.start.column),
        end=Position(finding.end.line + delta, finding.end.column),
    )


def check(job: FileJob, last: Checked | None) -> tuple[FileResult, Checked | None]:
    """`process_file` for the editor's diagnostics after an edit of the text
    `last` checked (the whole file without it), and what the next edit
    compares with. The job's text is given, its index and traced facts are
    of the whole new text, and it computes no fix's edits (they would not
    move with the text)."""
    from tfrewrite.pipeline.rule_pass import process_file

    source = job.file.source
    assert source is not None and not job.options.fix and not job.options.want_edits
    recheck = plan(last, source, job.index, job.traced, job.options) if last else None
    if recheck is not None:
        job = dataclasses.replace(job, recheck=recheck.units)
    result = process_file(job)
    if result.error is not None:
        return result, None
    if recheck is not None:
        result.findings = recheck.merge(result.findings, result.rechecked)
    return result, remember(source, job.index, job.traced, job.options, result.findings)
