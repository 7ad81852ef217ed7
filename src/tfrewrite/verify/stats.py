"""Two-sample tests for random functions: do the original and the rewrite
sample the same distribution?

A random function cannot be compared by value. Instead both sides are called
`n` times on the same input, and a few scalar statistics are collected per
call: the mean of all floating-point entries, and the entries at up to three
positions with the largest spread. Calls are independent, so each statistic
gives two i.i.d. samples of size `n`, and three tests compare them:

* **location** — Welch's z on the means;
* **scale** — the Brown–Forsythe test: Welch's z on the absolute deviations
  from each side's median. Robust to non-normal noise (uniform, Bernoulli
  dropout masks), and a 20% change of scale moves it by about
  0.17·sqrt(n) standard errors (5.4 at n = 1000 for normal noise);
* **shape** — the two-sample Kolmogorov–Smirnov statistic, with the
  asymptotic Kolmogorov distribution for its p-value.

Every p-value is compared with `ALPHA / (number of tests)` (Bonferroni over
statistics and tests), so the whole comparison raises a false alarm on an
equivalent rewrite with probability at most `ALPHA` = 0.001 whatever the
dependence between statistics. `tests/test_verify_stats.py` measures both
the false-alarm rate and the power to see a 20% change of scale.

NumPy only (no SciPy): this runs in verification workers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

ALPHA = 1e-3
POSITIONS = 3  # individual entries tested besides the per-call mean
LARGE = 4096  # entries per call beyond which outputs are not kept whole
PILOT = 50  # calls whose whole outputs choose the positions of a large output


@dataclass
class TestResult:
    ok: bool
    statistic: str  # which per-call statistic
    test: str  # "location", "scale" or "shape"
    p_value: float
    detail: str


def _normal_sf(z: float) -> float:
    """P(|Z| > z) for a standard normal Z."""
    return math.erfc(abs(z) / math.sqrt(2))


def welch_p(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sided p-value of Welch's z for equal means (large samples)."""
    se = math.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size)
    gap = abs(float(a.mean() - b.mean()))
    if se == 0:
        return 1.0 if gap == 0 else 0.0
    return _normal_sf(gap / se)


def scale_p(a: np.ndarray, b: np.ndarray) -> float:
    """Brown–Forsythe: equal spread, as equal mean absolute deviation from the median."""
    return welch_p(np.abs(a - np.median(a)), np.abs(b - np.median(b)))


def kolmogorov_sf(x: float) -> float:
    """P(K > x) for the Kolmogorov distribution."""
    if x <= 0.2:
        return 1.0
    total = sum((-1) ** (k - 1) * math.exp(-2 * k * k * x * x) for k in range(1, 101))
    return min(1.0, max(0.0, 2 * total))


# Values this close, relative to the samples' largest magnitude, are one
# value: the eager original and the traced rewrite compute the same number
# through different kernels, a few float32 ulps apart.
SAME_VALUE_RTOL = 1e-5


def ks_p(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """(D, p): the two-sample Kolmogorov–Smirnov statistic and its
    asymptotic p-value. A value of `b` within rounding of a value of `a`
    counts as that value: a discrete output (the log-probability of a
    sampled category) takes a few values, and one of them a few ulps apart
    on the two sides would otherwise put a whole step of the empirical
    distribution between them."""
    a = np.sort(a)
    b = np.sort(_snapped(a, b))
    grid = np.concatenate([a, b])
    d = float(
        np.max(
            np.abs(
                np.searchsorted(a, grid, side="right") / a.size
                - np.searchsorted(b, grid, side="right") / b.size
            )
        )
    )
    m = a.size * b.size / (a.size + b.size)
    return d, kolmogorov_sf((math.sqrt(m) + 0.12 + 0.11 / math.sqrt(m)) * d)


def _snapped(reference: np.ndarray, values: np.ndarray) -> np.ndarray:
    """`values`, each replaced by the nearest value of the sorted
    `reference` when within `SAME_VALUE_RTOL` of the samples' scale."""
    if reference.size == 0 or values.size == 0:
        return values
    scale = max(float(np.abs(reference).max()), float(np.abs(values).max()), 1e-30)
    right = np.clip(np.searchsorted(reference, values), 0, reference.size - 1)
    left = np.clip(right - 1, 0, reference.size - 1)
    nearest = np.where(
        np.abs(values - reference[left]) <= np.abs(reference[right] - values),
        reference[left],
        reference[right],
    )
    return np.where(np.abs(values - nearest) <= SAME_VALUE_RTOL * scale, nearest, values)


class Calls:
    """Per-call statistics, collected call by call. A large output (an
    image batch: 400k entries a call, 1000 calls a side) is not kept whole:
    the positions with the largest spread are chosen on the first PILOT
    calls, and after that only the per-call mean and those entries are kept."""

    def __init__(self, positions: list[int] | None = None) -> None:
        self.positions = positions
        self.means: list[float] = []
        self.rows: list[np.ndarray] = []  # entries at `positions`, per call
        self.pilot: list[np.ndarray] = []  # whole outputs until positions are chosen
        self.size: int | None = None
        self.ragged = False  # calls returned different numbers of entries

    def add(self, values: np.ndarray) -> None:
        self.means.append(float(values.mean()) if values.size else 0.0)
        if self.size is None:
            self.size = values.size
        self.ragged = self.ragged or values.size != self.size
        if self.ragged:
            return
        if self.positions is not None:
            self.rows.append(values[self.positions])
            return
        self.pilot.append(values)
        if self.size > LARGE and len(self.pilot) >= PILOT:
            self._choose()

    def _choose(self) -> None:
        spread = np.stack(self.pilot).std(axis=0)
        self.positions = [int(j) for j in np.argsort(-spread)[:POSITIONS] if spread[j] > 0]
        self.rows = [p[self.positions] for p in self.pilot]
        self.pilot = []

    def statistics(self) -> dict[str, np.ndarray]:
        """`mean` and `entry j` for the chosen positions."""
        out = {"mean": np.array(self.means)}
        if self.ragged or not self.size:
            return out
        if self.positions is None:
            self._choose()
        assert self.positions is not None
        matrix = np.array(self.rows).reshape(len(self.rows), len(self.positions))
        for i, j in enumerate(self.positions):
            out[f"entry {j}"] = matrix[:, i]
        return out


def statistics(
    calls: list[np.ndarray], positions: list[int] | None = None
) -> dict[str, np.ndarray]:
    """Per-call statistics: `mean` and `entry j` for the chosen positions
    (by default the POSITIONS entries with the largest spread over calls)."""
    collected = Calls(positions)
    for values in calls:
        collected.add(values)
    return collected.statistics()


def positions_of(stats: dict[str, np.ndarray]) -> list[int]:
    return [int(k.split()[1]) for k in stats if k.startswith("entry ")]


def compare_samples(
    original: dict[str, np.ndarray], rewrite: dict[str, np.ndarray], alpha: float = ALPHA
) -> list[TestResult]:
    """Location, scale and shape tests on every statistic both sides have;
    each at the Bonferroni level alpha / (number of tests)."""
    names = [k for k in original if k in rewrite]
    level = alpha / max(1, 3 * len(names))
    results = []
    for name in names:
        a, b = original[name], rewrite[name]
        if a.std() == 0 and b.std() == 0:
            same = bool(np.allclose(a, b))
            results.append(
                TestResult(same, name, "location", 1.0 if same else 0.0, "constant on both sides")
            )
            continue
        p = welch_p(a, b)
        results.append(
            TestResult(
                p >= level,
                name,
                "location",
                p,
                f"{name}: mean {b.mean():.6g} over {b.size} calls, original {a.mean():.6g} "
                f"(Welch p = {p:.2g} < {level:.2g})",
            )
        )
        p = scale_p(a, b)
        ratio = b.std() / a.std() if a.std() > 0 else math.inf
        results.append(
            TestResult(
                p >= level,
                name,
                "scale",
                p,
                f"{name}: standard deviation {b.std():.6g} over {b.size} calls, original "
                f"{a.std():.6g} (ratio {ratio:.3g}; Brown-Forsythe p = {p:.2g} < {level:.2g})",
            )
        )
        d, p = ks_p(a, b)
        results.append(
            TestResult(
                p >= level,
                name,
                "shape",
                p,
                f"{name}: distributions differ (Kolmogorov-Smirnov D = {d:.3g}, "
                f"p = {p:.2g} < {level:.2g})",
            )
        )
    return results


# --- few replays: training loops whose steps are random ----------------------
#
# A training loop replayed with dropout or random augmentation cannot match
# value for value between the eager original and the traced rewrite (their
# random streams differ). Each side is replayed a few times with different
# seeds instead, and every recorded quantity is compared across replays:
# samples of size 4 or so, where the large-sample tests above do not hold.


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the regularized incomplete beta (Lentz's method)."""
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        for numerator in (
            m * (b - m) * x / ((a + m2 - 1.0) * (a + m2)),
            -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-14:
            break
    return h


def incomplete_beta(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def student_t_p(t: float, df: int) -> float:
    """P(|T| > t) for Student's t with `df` degrees of freedom."""
    if not math.isfinite(t):
        return 0.0
    return incomplete_beta(df / 2.0, 0.5, df / (df + t * t))


def pooled_t_p(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sided p-value of the pooled two-sample t-test for equal means.

    Exact for normal samples of any size: with a few replays per side,
    Welch's large-sample z above would raise false alarms."""
    na, nb = a.size, b.size
    df = na + nb - 2
    gap = abs(float(a.mean() - b.mean()))
    if df < 1:
        return 1.0
    pooled = ((na - 1) * a.var(ddof=1) + (nb - 1) * b.var(ddof=1)) / df
    se = math.sqrt(pooled * (1.0 / na + 1.0 / nb))
    if se == 0:
        return 1.0 if gap == 0 else 0.0
    return student_t_p(gap / se, df)
