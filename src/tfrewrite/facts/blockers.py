"""What keeps a train step eager: a `Blocker`, something the step does that
changes meaning under tracing, with its lines. A leaf of the fact model: the
step hazards, fresh arguments and tensor iterations produce blockers; the
training rules put them on a `StepViolation` (`rewrite.step_violation`) and
the decoration gate reads them there.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from tfrewrite.facts.context import RuleContext
from tfrewrite.workspace.line_names import line_name


def line_of(ctx: RuleContext, node: cst.CSTNode) -> int:
    """1-based line of `node`."""
    return ctx.lines([node])[0][0]


def line_name_of(ctx: RuleContext, node: cst.CSTNode) -> str:
    """ "line 9" for a message about `node`: placed in its cell when the file
    is a notebook (`workspace.line_names`)."""
    return line_name(line_of(ctx, node))


def lines_of(ctx: RuleContext, node: cst.CSTNode) -> tuple[int, int]:
    """1-based first and last line of `node`."""
    return ctx.lines([node])[0]


@dataclass(frozen=True)
class Blocker:
    """Something a step does that changes meaning under tracing; a rule on
    traced code must fix it (a finding with a fix on these lines) before the
    step may be decorated. `intent`: not a change of meaning but the
    author's choice against tracing (a commented-out decorator), which
    withholds the decorator all the same and is worded as such."""

    first_line: int
    last_line: int
    what: str
    intent: bool = False
