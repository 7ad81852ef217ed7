"""Inputs on both sides of every condition the function's branches test.

`conditions` reads, from the original and the rewrite, the values compared
with constants and the NaN, infinity and emptiness tests. This module turns
them into inputs, derived from the first base draw, that join the proof set
beside the generic `inputs.variants`:

* **thresholds** — for each constant `c` a compared value is compared with:
  an input where it is just below `c`, one where it is exactly `c`, and one
  just above (`c ∓ δ`, δ = 0.001·max(1, |c|), or 1 for an integer value),
  plus one between each two neighbouring constants (a threshold the rewrite
  moved from 1.0 to 1.2 is probed at 1.1 too). The compared value is
  measured by evaluating its source on the input (the `measure` callable;
  the median element when it is a tensor, so that an elementwise
  `tf.where(x < 0.5, ...)` has elements on both sides) and moved by one
  parameter in one family of changes to the tensors it reads: all of them
  shifted by `a`, then all scaled by `a`, then each alone shifted and
  scaled. `a` is found by the secant method (a few evaluations) and an input
  is kept only when its measured value lands where it was aimed (strictly
  below, exactly at, strictly above, or strictly between). This reaches a
  scalar parameter, a reduction of a parameter (`tf.reduce_mean(x)`,
  `tf.reduce_max(x)`, `tf.norm(x)` scale), and a reduction of an
  expression of several (`tf.reduce_mean(tf.abs(y_true - y_pred))`
  scales); "exactly at" is kept only where it is met exactly (a scalar
  parameter, a mean of a tensor filled with `c`). A compared value that no
  shift or scale moves to a target (a count, a value clipped by a
  configured range) gets no input there.
* **NaN and infinity** — where a branch tests for them: the first element
  of each float tensor the test reads set to NaN, to +inf and to -inf.
* **emptiness** — where a branch tests a size: every batched tensor input
  with zero rows (left out when the traced function fixes its batch size).

NumPy only (imported lazily); the caller measures with TensorFlow.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from tfrewrite.verify.conditions import Conditions, Threshold
from tfrewrite.verify.inputs import Spec, TensorSpec, tensor_slots, transformed

MAX_STEPS = 12  # evaluations of the compared value per target and family
MAX_INPUTS = 32  # boundary inputs per function

# Measures a threshold's compared value on an input: an array, or None when
# evaluating it raised.
Measure = Callable[[Threshold, Mapping[str, Any]], Any]


def variants(
    base: Mapping[str, Any],
    specs: Mapping[str, Spec],
    conditions: Conditions,
    measure: Measure,
    empty: bool = True,
) -> Iterator[tuple[str, dict[str, Any]]]:
    """(label, arguments) of the inputs on each side of each condition;
    `empty=False` leaves out the zero-row batch."""
    slots = tensor_slots(specs)
    found = [*_special_inputs(base, slots, conditions, empty)]
    for threshold in conditions.thresholds:
        if len(found) >= MAX_INPUTS:
            break
        found += _threshold_inputs(base, slots, threshold, measure)
    yield from found[:MAX_INPUTS]


def _special_inputs(
    base: Mapping[str, Any],
    slots: Mapping[str, tuple[str, str | None, TensorSpec]],
    conditions: Conditions,
    empty: bool,
) -> Iterator[tuple[str, dict[str, Any]]]:
    """NaN and ±inf in each float tensor a test reads, and the empty batch.
    A configured range does not hold them back: the function tests for them."""
    for kind, params in (("nan", conditions.nan), ("inf", conditions.inf)):
        for name, (param, key, spec) in slots.items():
            if param not in params or not spec.is_float:
                continue
            unclipped = {**slots, name: (param, key, dataclasses.replace(spec, strict=False))}
            for value in (math.nan,) if kind == "nan" else (math.inf, -math.inf):
                shown = {math.inf: "+inf", -math.inf: "-inf"}.get(value, "NaN")
                yield (
                    f"{name} with a {shown}",
                    transformed(base, unclipped, [name], lambda x, s, v=value: _first_set(x, v)),
                )
    if conditions.empty and empty:
        batched = [n for n, (_, _, spec) in slots.items() if spec.shape]
        if batched:
            yield "an empty batch (0 rows)", transformed(base, slots, batched, lambda x, s: x[:0])


def _first_set(x: Any, value: float) -> Any:
    import numpy as np

    out = np.array(x, dtype="float64")
    if out.size:
        out.reshape(-1)[0] = value
    return out


def _threshold_inputs(
    base: Mapping[str, Any],
    slots: Mapping[str, tuple[str, str | None, TensorSpec]],
    threshold: Threshold,
    measure: Measure,
) -> Iterator[tuple[str, dict[str, Any]]]:
    """Inputs placing `threshold.compared` below, at, above and between its constants."""
    import numpy as np

    names = [
        n
        for n, (param, _, spec) in slots.items()
        if param in threshold.parameters and spec.dtype != "bool"
    ]
    if not names:
        return
    cache: dict[tuple[str, float], tuple[float | None, dict[str, Any]]] = {}

    def at(family: str, a: float) -> tuple[float | None, dict[str, Any]]:
        """The measured value (median, as float) and the input at `a` of `family`."""
        key = (family, a)
        if key not in cache:
            how, _, which = family.partition(":")
            moved = [which] if which else names
            if how == "shift":
                args = transformed(base, slots, moved, lambda x, s: x + a)
            elif how == "scale":
                args = transformed(base, slots, moved, lambda x, s: x * math.exp(a))
            else:  # "fill": every element a
                args = transformed(base, slots, moved, lambda x, s: np.full_like(x, a))
            cache[key] = (_median(measure(threshold, args)), args)
        return cache[key]

    start, _ = at("shift", 0.0)
    first = measure(threshold, base)
    if start is None or first is None:
        return
    # The constants as the function compares them: in the compared value's dtype.
    dtype = np.asarray(first).dtype
    integer = dtype.kind in "iu"
    constants = tuple(
        sorted({c if integer else float(np.asarray(c, dtype=dtype)) for c in threshold.constants})
    )
    families = ["shift", "scale"]
    if len(names) > 1:
        families += [f"{how}:{n}" for n in names for how in ("shift", "scale")]
    short = _short(threshold.compared)
    for target, low, high, words in _targets(constants, integer):
        if low == high:
            # Exactly on the constant: filled with it, or solved onto it.
            filled, args = at("fill", target)
            if filled == target:
                yield f"`{short}` {words}", args
                continue

        def lands(value: float, low: float = low, high: float = high) -> bool:
            return value == low if low == high else low < value < high

        for family in families:
            a = _solve(lambda a, f=family: at(f, a)[0], start, target, lands, family)
            if a is not None:
                yield f"`{short}` {words}", at(family, a)[1]
                break


def _targets(constants: tuple[float, ...], integer: bool) -> list[tuple[float, float, float, str]]:
    """(aim, low, high, words): an input is kept when its value lies strictly
    between low and high (or equals them, when they are equal)."""
    out: list[tuple[float, float, float, str]] = []
    for i, c in enumerate(constants):
        delta = 1.0 if integer else 1e-3 * max(1.0, abs(c))
        below = constants[i - 1] if i else -math.inf
        above = constants[i + 1] if i + 1 < len(constants) else math.inf
        out.append((c - delta, max(c - 2 * delta, below), c, f"just below {c:g}"))
        out.append((c, c, c, f"at {c:g}"))
        out.append((c + delta, c, min(c + 2 * delta, above), f"just above {c:g}"))
        if above < math.inf and above - c > 4 * delta:
            middle = (c + above) / 2
            out.append((middle, c, above, f"between {c:g} and {above:g}"))
    return out


def _solve(
    h: Callable[[float], float | None],
    start: float,
    target: float,
    lands: Callable[[float], bool],
    family: str,
) -> float | None:
    """`a` with `lands(h(a))`, by the secant method from `a = 0` (`h(0) == start`)."""
    if lands(start):
        return 0.0
    a0, g0 = 0.0, start
    if family.startswith("scale"):
        ratio = target / start if start else 0.0
        a1 = math.log(ratio) if ratio > 0 else 0.5
    else:
        a1 = target - start
    # A scale of e^50 or a shift of 1e6 finds nothing a smaller one does not.
    bound = 50.0 if family.startswith("scale") else 1e6
    for _ in range(MAX_STEPS):
        if not math.isfinite(a1) or abs(a1) > bound:
            return None
        g1 = h(a1)
        if g1 is None:
            return None
        if lands(g1):
            return a1
        if g1 == g0:
            return None
        a0, a1, g0 = a1, a1 - (g1 - target) * (a1 - a0) / (g1 - g0), g1
    return None


def _median(value: Any) -> float | None:
    """The median element as a float; None for no value, no elements or a non-finite one."""
    import numpy as np

    if value is None:
        return None
    array = np.asarray(value)
    if array.size == 0 or array.dtype.kind not in "iuf":
        return None
    middle = float(np.sort(array.reshape(-1))[(array.size - 1) // 2])
    return middle if math.isfinite(middle) else None


def _short(text: str) -> str:
    return text if len(text) <= 60 else text[:57] + "..."
