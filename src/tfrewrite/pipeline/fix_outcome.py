"""Which of a file's findings a `fix` run resolves.

`check` says "N fixable" and `fix` then says "Fixed N": both count findings of
the file as `check` saw it, so the two numbers agree. A finding is fixed when
its own fix is applied (a finding of the same rule at the same place
afterwards is a new one: the rewritten code, judged again), or when `fix`
leaves no finding of the same rule at the place it pointed to, whichever fix
did it: an enclosing fix that rewrote it along (an `if`/`elif`
chain converted in two rounds is one finding fixed), a fix that made it moot
(decorating a train step resolves "the step runs eagerly"), or a fix in a
later round that an earlier fix unblocked (a `np.random` call in a branch
fixed first, then the tensor `if` around it).

Places are matched through a line diff of the original and the fixed text:
an unchanged line maps to itself, a line inside a rewritten run of lines to
that run.
"""

from __future__ import annotations

import difflib
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Spot:
    """A finding reduced to what matching needs: its rule and its lines."""

    code: str
    first_line: int
    last_line: int


def fixes_interact(
    spots: Sequence[Spot], fixable: Sequence[bool], conditional: Sequence[bool]
) -> bool:
    """Whether applying the fixable findings' fixes could do more or less than
    resolve exactly those findings: a fixable finding's lines overlap those
    of a finding without a fix (which the fix may resolve, or unblock), or
    two tensor conditionals nest (the one around may then be refused, and
    the inner one with it). Two fixable findings that overlap are each
    fixed, in one round or two; disjoint ones in one round."""
    order = sorted(range(len(spots)), key=lambda i: (spots[i].first_line, spots[i].last_line))
    open_: list[int] = []  # earlier findings whose lines reach the current one
    for i in order:
        first = spots[i].first_line
        open_ = [j for j in open_ if spots[j].last_line >= first]
        for j in open_:
            if fixable[i] != fixable[j] or (conditional[i] and conditional[j]):
                return True
        open_.append(i)
    return False


def original_lines(old: str, new: str) -> list[tuple[int, int]]:
    """For each line of `new` (1-based, index 0 unused), the range of lines of
    `old` it stands for."""
    old_lines = old.splitlines()
    new_lines = new.splitlines()
    ranges: list[tuple[int, int]] = [(0, 0)] * (len(new_lines) + 2)
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        for j in range(j1, j2):
            if tag == "equal":
                ranges[j + 1] = (i1 + j - j1 + 1, i1 + j - j1 + 1)
            else:
                ranges[j + 1] = (i1 + 1, max(i1 + 1, i2))
    ranges[len(new_lines) + 1] = (len(old_lines), len(old_lines) + 1)
    return ranges


def resolved(old: str, before: Sequence[Spot], new: str, after: Sequence[Spot]) -> list[int]:
    """The positions in `before` (findings in `old`) that have no counterpart
    in `after` (findings in `new`)."""
    if old == new:
        return []  # nothing was rewritten, so nothing was fixed
    taken = set(counterparts(old, before, new, after).values())
    return [i for i in range(len(before)) if i not in taken]


def counterparts(
    old: str, before: Sequence[Spot], new: str, after: Sequence[Spot]
) -> dict[int, int]:
    """Each finding in `after` (findings in `new`, by position) with the
    finding in `before` (findings in `old`) it stands for: the nearest
    finding of its rule on the lines it maps to."""
    ranges = original_lines(old, new)
    by_code: dict[str, list[tuple[int, int]]] = {}
    for i, spot in enumerate(before):
        by_code.setdefault(spot.code, []).append((spot.first_line, i))
    for entries in by_code.values():
        entries.sort()
    lines_of = {code: [e[0] for e in entries] for code, entries in by_code.items()}
    taken: set[int] = set()
    matches: dict[int, int] = {}
    for position, spot in enumerate(after):
        entries = by_code.get(spot.code)
        if not entries:
            continue
        low, high = ranges[min(max(spot.first_line, 0), len(ranges) - 1)]
        nearest = _nearest_free(entries, lines_of[spot.code], low, high, taken)
        if nearest is not None:
            taken.add(nearest)
            matches[position] = nearest
    return matches


def _nearest_free(
    entries: list[tuple[int, int]], lines: list[int], low: int, high: int, taken: set[int]
) -> int | None:
    """The finding (position in `before`) in lines `low`..`high` nearest their
    middle that no finding after the fix accounts for yet."""
    start, stop = bisect_left(lines, low), bisect_right(lines, high)
    centre = (low + high) / 2
    middle = bisect_left(lines, (low + high) // 2, start, stop)
    left, right = middle - 1, middle
    while left >= start or right < stop:
        # Step outwards from the middle, the closer side first.
        take_right = right < stop and (
            left < start or lines[right] - centre <= centre - lines[left]
        )
        if take_right:
            candidate, right = entries[right][1], right + 1
        else:
            candidate, left = entries[left][1], left - 1
        if candidate not in taken:
            return candidate
    return None
