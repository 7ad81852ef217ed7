"""Text edits between two versions of a file, for formats that carry fixes
as replacements (JSON, SARIF, rdjson): each changed run of lines becomes one
edit, trimmed to the characters that actually differ."""

from __future__ import annotations

import difflib
from bisect import bisect_right

from tfrewrite.findings import Position, TextEdit


def line_starts(text: str) -> list[int]:
    """The offset where each line of `text` starts."""
    starts = [0]
    for i, char in enumerate(text):
        if char == "\n":
            starts.append(i + 1)
    return starts


def offset_to_position(starts: list[int], offset: int) -> Position:
    line = bisect_right(starts, offset)
    return Position(line, offset - starts[line - 1] + 1)


# A change found by the line diff: character offsets in the old text and
# what replaces that span, trimmed to the characters that differ.
RawEdit = tuple[int, int, str]


def text_edits(old: str, new: str) -> tuple[TextEdit, ...]:
    return placed_edits(old, raw_edits(old, new))


def raw_edits(old: str, new: str) -> list[RawEdit]:
    """The changed runs of lines from `old` to `new`, each trimmed to the
    characters that differ, as offsets in `old`."""
    old_lines = old.splitlines(keepends=True)
    new_lines = new.splitlines(keepends=True)
    line_offsets = [0]
    for line in old_lines:
        line_offsets.append(line_offsets[-1] + len(line))
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    edits: list[RawEdit] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        removed = "".join(old_lines[i1:i2])
        added = "".join(new_lines[j1:j2])
        prefix = 0
        limit = min(len(removed), len(added))
        while prefix < limit and removed[prefix] == added[prefix]:
            prefix += 1
        suffix = 0
        while (
            suffix < limit - prefix
            and removed[len(removed) - 1 - suffix] == added[len(added) - 1 - suffix]
        ):
            suffix += 1
        edits.append(
            (
                line_offsets[i1] + prefix,
                line_offsets[i2] - suffix,
                added[prefix : len(added) - suffix],
            )
        )
    return edits


def placed_edits(
    old: str, raw: list[RawEdit], starts: list[int] | None = None
) -> tuple[TextEdit, ...]:
    """`raw` (in order, not overlapping) as edits of `old` by line and column.
    `starts`: the offsets of `old`'s lines (`line_starts`), when the caller
    places many edits on one text."""
    if starts is None:
        starts = line_starts(old)
    edits: list[TextEdit] = []
    for start, end, content in raw:
        if start == end:
            # An insertion can sit at several equivalent places (a line added
            # next to a blank line); the leftmost one is canonical, so the
            # same insertion made by two fixes is one edit, not two.
            # Never onto the previous edit's end: two edits at one offset
            # would apply in either order.
            floor = _offset_of(edits[-1].end, starts) + 1 if edits else 0
            while content and start > floor and old[start - 1] == content[-1]:
                content = old[start - 1] + content[:-1]
                start -= 1
                end -= 1
        edits.append(
            TextEdit(offset_to_position(starts, start), offset_to_position(starts, end), content)
        )
    return tuple(edits)


def _offset_of(position: Position, starts: list[int]) -> int:
    return starts[position.line - 1] + position.column - 1


def apply_text_edits(text: str, edits: tuple[TextEdit, ...] | list[TextEdit]) -> str:
    """Apply edits (any order; they must not overlap) to `text`."""
    starts = line_starts(text)

    def offset(position: Position) -> int:
        return (
            starts[position.line - 1] + position.column - 1
            if position.line <= len(starts)
            else len(text)
        )

    for edit in sorted(edits, key=lambda e: (e.start, e.end), reverse=True):
        text = text[: offset(edit.start)] + edit.content + text[offset(edit.end) :]
    return text
