"""Compare function results: structure, shape, dtype and values within tolerance.

NaN equals NaN (a loss that is NaN eagerly must be NaN traced too). Integer
and boolean results must match exactly.

A Python number on one side is not a dtype: the original's `float(loss)` and
the rewrite's scalar float32 tensor agree when their values do, and a Python
`int` agrees with an int32 or int64 scalar of the same value. Otherwise dtypes
must match exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass
class Difference:
    ok: bool = True
    max_abs: float = 0.0
    max_rel: float = 0.0
    detail: str = ""

    def merge(self, other: Difference) -> None:
        self.max_abs = max(self.max_abs, other.max_abs)
        self.max_rel = max(self.max_rel, other.max_rel)
        if self.ok and not other.ok:
            self.ok, self.detail = False, other.detail


def _python_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _loosen(expected: Any, actual: Any) -> tuple[Any, Any]:
    """NumPy arrays for both sides; a Python number takes the dtype of the
    scalar it meets (float64 for both when either is a float)."""
    e_py, a_py = _python_number(expected), _python_number(actual)
    e, a = to_numpy(expected), to_numpy(actual)
    if e_py == a_py or isinstance(e, (list, dict)) or isinstance(a, (list, dict)):
        return e, a
    other = a if e_py else e
    if other.ndim != 0 or other.dtype.kind not in "iuf":
        return e, a
    if isinstance(expected if e_py else actual, float) or other.dtype.kind == "f":
        return e.astype(np.float64), a.astype(np.float64)
    return e.astype(other.dtype), a.astype(other.dtype)


def to_numpy(value: Any) -> Any:
    """Nested lists/dicts of NumPy arrays (tensors and variables converted)."""
    if isinstance(value, (tuple, list)):
        return [to_numpy(v) for v in value]
    if isinstance(value, dict):
        return {k: to_numpy(value[k]) for k in sorted(value, key=str)}
    if hasattr(value, "numpy"):
        return np.asarray(value.numpy())
    return np.asarray(value)


def describe(value: Any) -> str:
    """A short human-readable rendering of a result."""
    value = to_numpy(value)
    if isinstance(value, list):
        return "(" + ", ".join(describe(v) for v in value) + ")"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {describe(v)}" for k, v in value.items()) + "}"
    if value.ndim == 0:
        return f"{value.item():.6g}" if value.dtype.kind == "f" else repr(value.item())
    flat = value.reshape(-1)
    head = ", ".join(f"{v:.4g}" if value.dtype.kind == "f" else str(v) for v in flat[:3])
    more = ", …" if flat.size > 3 else ""
    return f"{value.dtype}{list(value.shape)} [{head}{more}]"


def compare(
    expected: Any, actual: Any, rtol: float, atol: float, where: str = "result"
) -> Difference:
    """How far `actual` is from `expected`; `ok` within `atol + rtol*|expected|`."""
    if isinstance(expected, (tuple, list)) or isinstance(actual, (tuple, list)):
        if not (isinstance(expected, (tuple, list)) and isinstance(actual, (tuple, list))) or len(
            expected
        ) != len(actual):
            return Difference(
                False,
                detail=f"{where}: structure differs ({describe(expected)} vs {describe(actual)})",
            )
        total = Difference()
        for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
            total.merge(compare(e, a, rtol, atol, f"{where}[{i}]"))
        return total
    if isinstance(expected, dict) or isinstance(actual, dict):
        if (
            not (isinstance(expected, dict) and isinstance(actual, dict))
            or expected.keys() != actual.keys()
        ):
            return Difference(False, detail=f"{where}: keys differ")
        total = Difference()
        for k in sorted(expected, key=str):
            total.merge(compare(expected[k], actual[k], rtol, atol, f"{where}[{k!r}]"))
        return total
    expected, actual = _loosen(expected, actual)
    if expected.shape != actual.shape:
        return Difference(
            False, detail=f"{where}: shape {list(actual.shape)}, expected {list(expected.shape)}"
        )
    if expected.dtype != actual.dtype:
        return Difference(False, detail=f"{where}: dtype {actual.dtype}, expected {expected.dtype}")
    if expected.dtype.kind not in "fc":
        if np.array_equal(expected, actual):
            return Difference()
        return Difference(
            False, detail=f"{where}: {describe(actual)}, expected {describe(expected)}"
        )
    e = expected.astype(np.float64)
    a = actual.astype(np.float64)
    both_nan = np.isnan(e) & np.isnan(a)
    same_inf = np.isinf(e) & (e == a)
    skip = both_nan | same_inf
    err = np.where(skip, 0.0, np.abs(a - e))
    err = np.where(np.isnan(err), np.inf, err)
    with np.errstate(invalid="ignore", over="ignore"):  # inf / inf: inputs hold infinities
        rel = err / np.maximum(np.abs(np.where(skip, 1.0, e)), 1e-30)
    max_abs = float(err.max()) if err.size else 0.0
    max_rel = float(np.where(e == 0, 0.0, rel).max()) if err.size else 0.0
    bad = err > atol + rtol * np.abs(np.where(skip, 0.0, e))
    if bad.any():
        i = int(np.argmax(bad.reshape(-1)))
        return Difference(
            False,
            max_abs,
            max_rel,
            f"{where}: {describe(actual)}, expected {describe(expected)} "
            f"(element {i}: {a.reshape(-1)[i]:.6g} vs {e.reshape(-1)[i]:.6g})",
        )
    return Difference(True, max_abs, max_rel)


def same_kind(expected: Any, actual: Any, where: str = "result") -> Difference:
    """Structure, shapes and dtypes only (for random results, whose values differ)."""
    if isinstance(expected, (tuple, list)) or isinstance(actual, (tuple, list)):
        if not (isinstance(expected, (tuple, list)) and isinstance(actual, (tuple, list))) or len(
            expected
        ) != len(actual):
            return Difference(False, detail=f"{where}: structure differs")
        total = Difference()
        for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
            total.merge(same_kind(e, a, f"{where}[{i}]"))
        return total
    if isinstance(expected, dict) or isinstance(actual, dict):
        if not (isinstance(expected, dict) and isinstance(actual, dict)) or set(expected) != set(
            actual
        ):
            return Difference(False, detail=f"{where}: keys differ")
        total = Difference()
        for k in expected:
            total.merge(same_kind(expected[k], actual[k], f"{where}[{k!r}]"))
        return total
    e, a = _loosen(expected, actual)
    if e.shape != a.shape:
        return Difference(False, detail=f"{where}: shape {list(a.shape)}, expected {list(e.shape)}")
    if e.dtype != a.dtype:
        return Difference(False, detail=f"{where}: dtype {a.dtype}, expected {e.dtype}")
    return Difference()


def identical(a: Any, b: Any) -> bool:
    """Bit-for-bit equal results (used to tell fresh random samples from frozen ones)."""
    a, b = to_numpy(a), to_numpy(b)
    if isinstance(a, list) or isinstance(b, list):
        return (
            isinstance(a, list)
            and isinstance(b, list)
            and len(a) == len(b)
            and all(identical(x, y) for x, y in zip(a, b, strict=True))
        )
    if isinstance(a, dict) or isinstance(b, dict):
        return (
            isinstance(a, dict)
            and isinstance(b, dict)
            and a.keys() == b.keys()
            and all(identical(a[k], b[k]) for k in a)
        )
    return (
        a.shape == b.shape
        and a.dtype == b.dtype
        and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")
    )


def float_values(value: Any, kinds: str = "fc") -> np.ndarray:
    """All entries of a result whose dtype kind is in `kinds` (floating-point
    by default, for moment tests), flattened into one float64 vector."""
    value = to_numpy(value)
    if isinstance(value, (list, dict)):
        items = value.values() if isinstance(value, dict) else value
        parts = [float_values(v, kinds) for v in items]
        return np.concatenate(parts) if parts else np.zeros(0)
    if value.dtype.kind not in kinds:
        return np.zeros(0)
    return value.astype(np.float64).reshape(-1)
