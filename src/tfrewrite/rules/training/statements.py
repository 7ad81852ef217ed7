"""Edits that delete a statement line and keep the layout around it: used by
the training rules that remove a decorator's line, a `run_functions_eagerly`
call or a statement moved into a tape.
"""

from __future__ import annotations

import libcst as cst

from tfrewrite.rewrite.fixes import NodeEdit


def remove_statement_edits(
    block: cst.CSTNode | None, line: cst.SimpleStatementLine, moved: bool = False
) -> tuple[NodeEdit, ...]:
    """Edits that delete a statement line: `pass` when it is alone in its
    block; otherwise the next statement inherits its comments (unless the
    statement is `moved`: its comments go with it) and the wider of the two
    blank-line gaps, so the layout around it stays as it was."""
    body = list(getattr(block, "body", ())) if block is not None else []
    if isinstance(block, cst.IndentedBlock) and len(body) == 1:
        return (NodeEdit(line, line.with_changes(body=[cst.Pass()])),)
    position = next((i for i, s in enumerate(body) if s is line), None)
    edits = [NodeEdit(line, cst.RemovalSentinel.REMOVE)]
    if position is not None and position + 1 < len(body) and line.leading_lines:
        following = body[position + 1]
        removed = [e for e in line.leading_lines if not (moved and e.comment is not None)]
        kept = list(following.leading_lines)
        if any(empty.comment is not None for empty in removed):
            merged = [*removed, *kept]
        else:  # only blank lines: keep the wider gap, not the sum
            blank = next((i for i, e in enumerate(kept) if e.comment is not None), len(kept))
            merged = [*removed[: max(0, len(removed) - blank)], *kept]
        if len(merged) != len(kept):
            edits.append(NodeEdit(following, following.with_changes(leading_lines=merged)))
    return tuple(edits)
