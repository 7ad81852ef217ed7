"""The functions `check`'s pruned parse left out, as text.

`check` parses a copy of the file with the functions no selected rule can
need blanked out (`pipeline.relevant_code`); `fix` parses everything. A
randomness fix that asks about the whole module (is a module-level list
changed in place anywhere? which names are taken?) must answer in `check`
as it does in `fix`, so it also reads the text of the functions left out.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from tfrewrite.facts.context import RuleContext

_WORD = re.compile(r"\w+")


def left_out_texts(ctx: RuleContext) -> Iterator[str]:
    """The source of each function left out of `ctx.module` (decorators
    included; a method's indented as in the file); none outside `check`."""
    pruned = ctx.index.pruned
    if pruned is None:
        return
    lines = pruned.source.splitlines(keepends=True)
    for qualname in pruned.pruned:
        info = ctx.index.functions.get(qualname)
        if info is None or not info.first_lineno:
            yield pruned.source  # its lines are not known: the whole file stands for it
            continue
        yield "".join(lines[info.first_lineno - 1 : info.end_lineno])


def left_out_words(ctx: RuleContext) -> set[str]:
    """Every identifier-like word of the functions left out."""
    words: set[str] = set()
    for text in left_out_texts(ctx):
        words.update(_WORD.findall(text))
    return words
