"""A fix as rules produce it: LibCST node replacements, possibly in several
places, plus the imports they need, and whether it is safe.

Shared by every hazard family and by the pipeline that applies fixes
(`pipeline.fixer`); a rule reports a `Violation` and may attach a `CstFix`.
No rule computes positions or touches files.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import libcst as cst

from tfrewrite.facts.import_requests import ImportRequest
from tfrewrite.findings import Applicability


@dataclass(frozen=True)
class NodeEdit:
    """Replace `target` (by identity) with `replacement`."""

    target: cst.CSTNode
    replacement: cst.CSTNode | cst.FlattenSentinel | cst.RemovalSentinel


@dataclass(frozen=True)
class CstFix:
    message: str
    edits: tuple[NodeEdit, ...]
    imports: tuple[ImportRequest, ...] = ()
    applicability: Applicability = Applicability.SAFE
    # Names the fix introduces in its scope ("scope qualname:name", such as
    # ":train_step" for a module-level step): two fixes of one round that
    # would both introduce a name are not applied together; the second waits
    # for the next round, where it sees the first's.
    introduces: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Violation:
    """What a rule found: the node to point at, the message, maybe a fix."""

    node: cst.CSTNode
    message: str
    fix: CstFix | None = None
    # AutoGraph converts the code as it is written (a `for` over a tensor):
    # it needs AutoGraph, and a step decorated with it runs it as the
    # original did, so it does not keep a step from its decorator.
    autograph_converts: bool = False
    # Another finding's node whose fix this one's waits for: once that fix
    # lands, the next fix round offers one for this finding too (a second
    # average of a per-batch list, weighted by the batch sizes the first
    # fix makes the loop record). `check` then counts it as `fix` fixes it.
    waits_for: cst.CSTNode | None = None


def assuming(violation: Violation, note: str) -> Violation:
    """`violation` with its fix made unsafe for resting on `note` (what the
    fix assumes, such as "it assumes `x` is a tensor argument"): a finding may
    rest on likely evidence, a safe fix only on proof."""
    fix = violation.fix
    if fix is None:
        return violation
    opening = " (unsafe: "
    if opening in fix.message and fix.message.endswith(")"):
        message = f"{fix.message[:-1]}; {note})"
    else:
        message = f"{fix.message}{opening}{note})"
    unsafe = replace(fix, message=message, applicability=Applicability.UNSAFE)
    return replace(violation, fix=unsafe)
