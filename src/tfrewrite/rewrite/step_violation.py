"""A finding whose fix decorates train steps, with what keeps each step eager.

Shared by the training rules, which produce it, and by the pipeline's
decoration gate and fix rounds, which apply its fix only when every blocker
is fixed in the same run.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from tfrewrite.facts.blockers import Blocker
from tfrewrite.rewrite.fixes import CstFix, Violation


@dataclass(frozen=True)
class StepViolation(Violation):
    """A finding whose fix decorates train steps (which the shared analysis
    marks `pending`, so rules on traced code check them in the same run). The
    engine applies the fix
    only together with fixes for everything the steps (and what they call)
    would do differently under tracing; otherwise it drops the fix (keeping
    `fallback`, a fix without the decoration) and lists every blocker."""

    steps: tuple[cst.FunctionDef, ...] = ()
    blockers: tuple[Blocker, ...] = ()
    fallback: CstFix | None = None
    # The qualnames of the steps whose decoration the decoration gate
    # withheld: they stay eager, and so does what only they would trace.
    withheld: tuple[str, ...] = ()
