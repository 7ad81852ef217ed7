"""Gradients a rewrite restores where the original cut them.

NumPy on a tensor (TFR104) or `.numpy()` (TFR105) computes a value on the
host: eagerly the value is right, but the tape records nothing through it,
so the original's gradient with respect to an input that only flows through
it is zero (a gradient penalty computed with `np.linalg.norm` trains
nothing). The rewrite computes the same value with TensorFlow ops, and its
gradient flows: a difference made on purpose, which the fix says.

Verify takes the rewrite's gradient for such an input only when the
original's is exactly zero there and the original's *value* agrees with it:
a central finite difference of the original, along the direction of the
rewrite's gradient, must give that gradient's norm. So the restored gradient
is proven to be the derivative of what the original computes, not merely
different from zero.

Runs inside verification workers (TensorFlow imported).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tfrewrite.verify.compare import to_numpy
from tfrewrite.verify.outcome import call, total_of

# Step of the finite difference, relative to the input's largest magnitude;
# float32 inputs keep about 7 digits, so the quotient keeps about 4.
_STEP = 1e-2
_RTOL = 0.05


@dataclass
class Restored:
    """The reference gradients with the restored ones adopted, the inputs
    whose gradient the rewrite restored, and the problems found."""

    reference: list[Any]
    names: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def _directional_derivative(
    original: Callable, args: dict[str, Any], name: str, direction: np.ndarray
) -> float | None:
    """(f(x + h·v) − f(x − h·v)) / 2h of the original run eagerly, summed over
    its float outputs; None when either side fails."""
    x = args[name]
    step = _STEP * max(1.0, float(np.max(np.abs(x))) if x.size else 1.0)
    sides = []
    for sign in (1.0, -1.0):
        moved = dict(args)
        moved[name] = (x.astype(np.float64) + sign * step * direction).astype(x.dtype)
        result = call(original, moved, eager=True)
        if result.failed:
            return None
        sides.append(float(total_of(result.value).numpy()))
    return (sides[0] - sides[1]) / (2 * step)


def adopt(
    original: Callable,
    args: dict[str, Any],
    names: list[str],
    want: list[Any],
    got: list[Any],
) -> Restored:
    """The original's gradients `want` with the rewrite's `got` taken for
    every input whose original gradient is exactly zero and whose rewrite
    gradient is not, once a finite difference of the original confirms it."""
    result = Restored(reference=list(want))
    for i, name in enumerate(names):
        before, after = to_numpy(want[i]), to_numpy(got[i])
        if not isinstance(before, np.ndarray) or not isinstance(after, np.ndarray):
            continue
        if before.shape != after.shape or np.any(before != 0):
            continue
        norm = float(np.linalg.norm(after.astype(np.float64)))
        if not np.isfinite(norm) or norm == 0.0:
            continue
        direction = after.astype(np.float64) / norm
        derivative = _directional_derivative(original, args, name, direction)
        if derivative is None or abs(derivative - norm) > _RTOL * norm + 1e-4:
            seen = "could not be computed" if derivative is None else f"is {derivative:.6g}"
            result.problems.append(
                f"d/d{name}: the rewrite's gradient (norm {norm:.6g}) is not the derivative "
                f"of the original's value (its finite difference along it {seen})"
            )
            continue
        result.reference[i] = got[i]
        result.names.append(name)
    return result
