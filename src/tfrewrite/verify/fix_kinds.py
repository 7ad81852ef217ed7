"""What a rewrite's fixes claim, by the rules that made them.

`verify` holds a rewrite to what its fixes claim: one whose fixes rewrote a
tensor `if` or loop in graph form must run without AutoGraph, one whose
fixes converted a print must print every call. Where the rewrite's fixes
are known and claim neither, a need for AutoGraph or a print at trace time
it shares with the original is the original's hazard, left as it was.
Standard library only: the command reads it without TensorFlow.
"""

from __future__ import annotations

from collections.abc import Sequence

# Rules whose fixes remove a need for AutoGraph (a tensor `if`, a loop over
# a tensor, rewritten in graph form).
AUTOGRAPH_RULES = frozenset({"TFR101", "TFR108", "TFR109"})
# The rule whose fixes make a print run on every call (`print` -> `tf.print`).
PRINT_RULES = frozenset({"TFR103"})
# Rules whose fixes move a host computation (NumPy on a tensor, `.numpy()`)
# into TensorFlow ops: the value stays, and gradients the host cut now flow.
GRADIENT_RULES = frozenset({"TFR104", "TFR105"})


def fix_code(label: str) -> str:
    """The rule code of a fix label ("TFR107 line 12" -> "TFR107")."""
    return label.split(" ", 1)[0]


def claims_any_of(fixes: Sequence[str], rules: frozenset[str]) -> bool:
    """Whether one of the fixes is of `rules`."""
    return any(fix_code(fix) in rules for fix in fixes)


def claims_none_of(fixes: Sequence[str], rules: frozenset[str]) -> bool:
    """Whether the fixes are known (at least one) and none is of `rules`."""
    return bool(fixes) and not any(fix_code(fix) in rules for fix in fixes)
