"""The two-sample tests behind the randomness check: their false-alarm rate
on equivalent samplers and their power to see a 20% change of scale."""

from __future__ import annotations

import numpy as np
import pytest

from tfrewrite.verify import stats

N = 1000  # the default `samples`


def _calls(rng: np.random.Generator, kind: str, scale: float, n: int = N) -> list[np.ndarray]:
    if kind == "normal":
        matrix = rng.normal(0.5, 0.1 * scale, (n, 16))
    elif kind == "uniform":
        matrix = rng.uniform(-scale, scale, (n, 16))
    elif kind == "dropout":
        matrix = (rng.random((n, 16)) < 0.3) * scale
    else:  # a loss: one scalar per call
        matrix = np.mean((rng.normal(0, 0.1 * scale, (n, 16)) + 0.3) ** 2, axis=1, keepdims=True)
    return list(matrix)


def _alarm(rng: np.random.Generator, kind: str, scale: float) -> bool:
    a = stats.statistics(_calls(rng, kind, 1.0))
    b = stats.statistics(_calls(rng, kind, scale), stats.positions_of(a))
    return not all(r.ok for r in stats.compare_samples(a, b))


@pytest.mark.parametrize("kind", ["normal", "uniform", "dropout", "loss"])
def test_false_alarm_rate_is_at_most_alpha(kind: str) -> None:
    # ALPHA = 0.001: over 200 equivalent pairs, 0.2 false alarms expected;
    # 2 or more would happen with probability below 2%.
    rng = np.random.default_rng(7)
    alarms = sum(_alarm(rng, kind, 1.0) for _ in range(200))
    assert alarms <= 1


@pytest.mark.parametrize("kind", ["normal", "uniform", "dropout", "loss"])
def test_a_twenty_percent_change_of_scale_is_seen(kind: str) -> None:
    rng = np.random.default_rng(11)
    seen = sum(_alarm(rng, kind, 1.2) for _ in range(40))
    assert seen >= 38


def test_a_shift_of_the_mean_is_seen() -> None:
    rng = np.random.default_rng(3)
    a = stats.statistics(list(rng.normal(0.0, 1.0, (N, 1))))
    b = stats.statistics(list(rng.normal(0.3, 1.0, (N, 1))), stats.positions_of(a))
    failed = [r for r in stats.compare_samples(a, b) if not r.ok]
    assert failed and failed[0].test in {"location", "shape"}


def _discrete(
    rng: np.random.Generator, values: list[float], probs: list[float], ulps: float
) -> list[np.ndarray]:
    """One draw a call among a few float32 `values` (the log-probability of
    a sampled category), as a sampler computes them through its own
    kernels: each value `ulps` float32 steps off."""
    support = np.array(values, np.float32)
    support = support + ulps * np.spacing(support)
    drawn = rng.choice(support.size, size=(N, 1), p=probs)
    return list(support[drawn].astype(np.float64))


LOG_PROBS = [-1.309, -1.897, -0.799, -2.040]


def test_a_discrete_output_a_few_ulps_apart_is_the_same_distribution() -> None:
    # The eager original and the traced rewrite sample the same categories;
    # their log-probabilities differ in the last bits (different kernels).
    rng = np.random.default_rng(5)
    probs = [0.27, 0.15, 0.45, 0.13]
    alarms = 0
    for _ in range(50):
        a = stats.statistics(_discrete(rng, LOG_PROBS, probs, 0))
        b = stats.statistics(_discrete(rng, LOG_PROBS, probs, 3), stats.positions_of(a))
        alarms += not all(r.ok for r in stats.compare_samples(a, b))
    assert alarms <= 1


def test_a_discrete_output_with_other_frequencies_is_seen() -> None:
    rng = np.random.default_rng(9)
    a = stats.statistics(_discrete(rng, LOG_PROBS, [0.27, 0.15, 0.45, 0.13], 0))
    b = stats.statistics(
        _discrete(rng, LOG_PROBS, [0.20, 0.15, 0.52, 0.13], 3), stats.positions_of(a)
    )
    assert not all(r.ok for r in stats.compare_samples(a, b))


def test_kolmogorov_distribution() -> None:
    # Known values: P(K > 1.36) ~ 0.049, P(K > 1.63) ~ 0.0098.
    assert stats.kolmogorov_sf(1.36) == pytest.approx(0.049, abs=0.002)
    assert stats.kolmogorov_sf(1.63) == pytest.approx(0.0098, abs=0.001)
    assert stats.kolmogorov_sf(0.1) == 1.0


def test_constant_statistics_compare_exactly() -> None:
    same = {"mean": np.ones(10)}
    assert all(r.ok for r in stats.compare_samples(same, {"mean": np.ones(10)}))
    assert not all(r.ok for r in stats.compare_samples(same, {"mean": np.zeros(10)}))


def test_student_t_distribution() -> None:
    # Table values: two-sided 5% at 2.447 (6 df), 0.1% at 5.959 (6 df), 5% at 12.706 (1 df).
    assert stats.student_t_p(2.447, 6) == pytest.approx(0.05, abs=1e-4)
    assert stats.student_t_p(5.959, 6) == pytest.approx(0.001, abs=1e-5)
    assert stats.student_t_p(12.706, 1) == pytest.approx(0.05, abs=1e-4)
    assert stats.student_t_p(1.96, 10**6) == pytest.approx(0.05, abs=1e-4)


def test_pooled_t_test_false_alarms_with_four_replays_per_side() -> None:
    """The random-loop comparison: 4 replays per side. At level 0.001 the
    pooled t-test raises about one alarm in 1000 equivalent pairs (Welch's
    large-sample z would raise dozens); a shift of 10 standard deviations is seen."""
    rng = np.random.default_rng(5)
    alarms = sum(
        stats.pooled_t_p(rng.normal(0, 1, 4), rng.normal(0, 1, 4)) < 1e-3 for _ in range(4000)
    )
    assert alarms <= 12
    seen = sum(
        stats.pooled_t_p(rng.normal(0, 1, 4), rng.normal(10, 1, 4)) < 1e-4 for _ in range(200)
    )
    assert seen >= 190


def test_large_outputs_are_reduced_call_by_call_and_still_compared() -> None:
    """An image batch per call (an augmentation) is not kept whole over 1000
    calls: after the pilot calls only the mean and the chosen entries stay,
    and a 20% change of scale is still seen, an equal sampler still passes."""
    rng = np.random.default_rng(5)
    size = stats.LARGE * 2

    def collect(scale: float, positions: list[int] | None = None) -> stats.Calls:
        calls = stats.Calls(positions)
        for _ in range(N):
            values = np.full(size, 0.5)
            values[:64] = rng.normal(0.5, 0.1 * scale, 64)  # a random region
            calls.add(values)
        return calls

    original = collect(1.0)
    assert not original.pilot and len(original.rows) == N
    assert all(j < 64 for j in original.positions or [])
    a = original.statistics()
    same = collect(1.0, stats.positions_of(a)).statistics()
    wider = collect(1.2, stats.positions_of(a)).statistics()
    assert all(r.ok for r in stats.compare_samples(a, same))
    assert not all(r.ok for r in stats.compare_samples(a, wider))
