"""The text edits of each fix, for the formats that carry them (JSON, SARIF,
rdjson) and for code actions.

A fix's edits are what applying that fix alone changes in the file. Applied
to the whole module, each fix would cost a walk, a code generation and a
diff of the whole file: a file's cost would grow with its size times its
findings. A fix changes only the top-level statements that hold its nodes,
and the imports at the head of the file, so it is applied to a module of
just those statements (`_Excerpt`), and the changes found there are moved
back to where those statements stand in the file. Where that cannot be
told for sure (a change on the seam between two statements that are not
neighbours in the file), the fix is applied to the whole module instead.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

import libcst as cst

from tfrewrite.facts.walk import parent_links
from tfrewrite.findings import TextEdit
from tfrewrite.pipeline.imports import import_insertion_point, names_read
from tfrewrite.report.edits import RawEdit, line_starts, placed_edits, raw_edits, text_edits
from tfrewrite.rewrite.fixes import CstFix


@dataclass(frozen=True)
class _Run:
    """Consecutive statements of the file kept in an excerpt: where their
    text starts and ends in the excerpt, and where it starts in the file."""

    start: int
    end: int
    file_start: int


class FixEdits:
    """The edits of the fixes of one file (`module`, whose text is `code`)."""

    def __init__(self, module: cst.Module, code: str) -> None:
        self.module = module
        self.code = code
        self._statement_at: dict[int, int] | None = None  # a statement's id -> its place
        self._parents: dict[int, cst.CSTNode] = {}  # `walk.parent_links` of the module
        self._texts: list[str] | None = None
        self._line_starts: list[int] | None = None
        self._reads: list[set[str]] = []  # what each statement reads (`imports.names_read`)
        self._header = ""
        self._footer = ""

    def of(self, fix: CstFix) -> tuple[TextEdit, ...]:
        """The edits `fix` alone makes; () when it does not apply."""
        edits = self._on_its_statements(fix)
        if edits is not None:
            return edits
        from tfrewrite.pipeline.fixer import apply_fixes

        fixed, applied = apply_fixes(self.module, [fix], parents=self._parents or None)
        return text_edits(self.code, fixed.code) if applied else ()

    def _on_its_statements(self, fix: CstFix) -> tuple[TextEdit, ...] | None:
        """The edits, found on an excerpt of the statements `fix` touches;
        None when the excerpt cannot tell them for sure."""
        if not self._index_statements():
            return None
        assert self._texts is not None
        touched = {self._statement_of(edit.target) for edit in fix.edits}
        if None in touched or not touched:
            return None  # a node outside every statement (the module itself)
        # The head: where imports are added (and the statement after it,
        # which may get a blank line), and the imports a fix makes unused.
        head = range(min(import_insertion_point(self.module) + 1, len(self.module.body)))
        kept = sorted({*head, *touched})  # type: ignore[misc]
        from tfrewrite.pipeline.fixer import apply_fixes

        excerpt = self.module.with_changes(body=[self.module.body[i] for i in kept])
        left_out = set(range(len(self.module.body))) - set(kept)
        read_elsewhere = set().union(*(self._reads[i] for i in left_out))
        fixed, applied = apply_fixes(excerpt, [fix], read_elsewhere, self._parents)
        if not applied:
            return ()
        runs = self._runs(kept)
        # The excerpt's text: each statement's text is its text in the file
        # (`_index_statements` found the file to be made of them).
        excerpt_code = self._header + "".join(self._texts[i] for i in kept) + self._footer
        if kept[-1] == len(self.module.body) - 1:  # the footer is the last run's
            last = runs[-1]
            runs[-1] = _Run(last.start, last.end + len(self._footer), last.file_start)
        moved: list[RawEdit] = []
        for start, end, content in raw_edits(excerpt_code, self._text_of(fixed)):
            first = _run_at(runs, start, start == end, after=True)
            last = _run_at(runs, end, start == end, after=False)
            if first is None or first is not last:
                return None
            shift = first.file_start - first.start
            moved.append((start + shift, end + shift, content))
        if self._line_starts is None:
            self._line_starts = line_starts(self.code)
        return placed_edits(self.code, moved, self._line_starts)

    def _index_statements(self) -> bool:
        """Each node's top-level statement, and each statement's text; False
        when the statements' texts do not make up the file (then every fix
        is applied to the whole module)."""
        if self._texts is not None:
            return self._statement_at is not None
        module = self.module
        self._texts = [module.code_for_node(s) for s in module.body]
        self._header = "".join(module.code_for_node(line) for line in module.header)
        self._footer = "".join(module.code_for_node(line) for line in module.footer)
        whole = self._header + "".join(self._texts) + self._footer
        if not module.has_trailing_newline or whole != self.code:
            return False
        self._statement_at = {id(s): i for i, s in enumerate(module.body)}
        self._parents = parent_links(module)
        self._reads = [names_read([s]) for s in module.body]
        return True

    def _text_of(self, fixed: cst.Module) -> str:
        """The text of a fixed excerpt: the statements the fix left as they
        were (the same nodes) keep their text in the file; only the others
        are generated."""
        assert self._statement_at is not None and self._texts is not None
        module = self.module
        if not (
            _same_nodes(fixed.header, module.header) and _same_nodes(fixed.footer, module.footer)
        ):
            return fixed.code
        parts = [self._header]
        for statement in fixed.body:
            place = self._statement_at.get(id(statement))
            parts.append(fixed.code_for_node(statement) if place is None else self._texts[place])
        parts.append(self._footer)
        return "".join(parts)

    def _statement_of(self, node: cst.CSTNode) -> int | None:
        """The place of the top-level statement holding `node`; None for a
        node outside every statement (the module itself, a formatting
        node)."""
        assert self._statement_at is not None
        while node is not self.module:
            place = self._statement_at.get(id(node))
            if place is not None:
                return place
            parent = self._parents.get(id(node))
            if parent is None:
                return None
            node = parent
        return None

    def _runs(self, kept: list[int]) -> list[_Run]:
        """The runs of consecutive statements in an excerpt of `kept`."""
        assert self._texts is not None
        file_starts = [len(self._header)]
        for text in self._texts:
            file_starts.append(file_starts[-1] + len(text))
        runs: list[_Run] = []
        position = len(self._header)
        previous = -2
        for i in kept:
            length = len(self._texts[i])
            if i == previous + 1 and runs:
                last = runs[-1]
                runs[-1] = _Run(last.start, last.end + length, last.file_start)
            elif i == 0:  # the file's header goes with its first statement
                runs.append(_Run(0, position + length, 0))
            else:
                runs.append(_Run(position, position + length, file_starts[i]))
            position += length
            previous = i
        return runs


def _same_nodes(these: Sequence[cst.CSTNode], those: Sequence[cst.CSTNode]) -> bool:
    return len(these) == len(those) and all(a is b for a, b in zip(these, those, strict=True))


def _run_at(runs: list[_Run], offset: int, insertion: bool, *, after: bool) -> _Run | None:
    """The run holding `offset`. On the seam of two runs an edit's start
    belongs to the later one and its end to the earlier one; an insertion
    there could stand at either, so it is not told (None)."""
    starts = [run.start for run in runs]
    i = bisect_right(starts, offset) - 1
    if i < 0 or offset > runs[i].end:
        return None
    on_seam = offset == runs[i].start and i > 0 and runs[i - 1].end == offset
    if on_seam:
        if insertion:
            return None
        return runs[i] if after else runs[i - 1]
    if offset == runs[i].end and i + 1 < len(runs) and runs[i + 1].start == offset:
        if insertion:
            return None
        return runs[i + 1] if after else runs[i]
    return runs[i]
