"""The figures `tfrewrite rule TFR306` quotes, measured.

2,000 examples in batches of 512, 512, 512 and 464 (`Dataset.batch(512)`),
1,397 of the first 1,536 and 425 of the last 464 classified right. Averaging
the four batch accuracies (what TFR306 reports) against the true accuracy,
and the two fixed forms: a mean weighted by batch size and a
`keras.metrics.SparseCategoricalAccuracy` updated per batch (with
`--keras`, which imports Keras).

    python benchmarks/tfr306_figures.py [--keras]

Exits 1 if the rule's documentation does not quote the measured figures.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

SIZES = (512, 512, 512, 464)
RIGHT_FIRST, RIGHT_LAST = 1397, 425  # of the first 1,536 and of the last 464


def batches() -> list[tuple[np.ndarray, np.ndarray]]:
    """(labels, predicted labels) per batch; wrong predictions spread at random."""
    rng = np.random.default_rng(0)
    n_first = sum(SIZES[:-1])
    right = np.zeros(sum(SIZES), bool)
    right[rng.choice(n_first, RIGHT_FIRST, replace=False)] = True
    right[n_first + rng.choice(SIZES[-1], RIGHT_LAST, replace=False)] = True
    labels = rng.integers(0, 10, sum(SIZES))
    predicted = np.where(right, labels, (labels + 1) % 10)
    bounds = np.cumsum((0, *SIZES))
    return [(labels[a:b], predicted[a:b]) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]


def main() -> int:
    data = batches()
    accs = [float(np.mean(y == p)) for y, p in data]
    sizes = [len(y) for y, _ in data]
    figures = {
        "np.mean of the batch accuracies": float(np.mean(accs)),
        "sum(accs) / len(accs)": sum(accs) / len(accs),
        "statistics.mean(accs)": statistics.mean(accs),
        "np.average(accs, weights=batch_sizes)": float(np.average(accs, weights=sizes)),
        "true accuracy (right / examples)": sum(int(np.sum(y == p)) for y, p in data) / sum(sizes),
    }
    if "--keras" in sys.argv:
        import keras

        metric = keras.metrics.SparseCategoricalAccuracy()
        for y, p in data:
            metric.update_state(y, np.eye(10, dtype="float32")[p])
        figures["keras.metrics.SparseCategoricalAccuracy"] = float(metric.result())
    print(
        f"batch sizes {', '.join(map(str, sizes))}; batch accuracies "
        + ", ".join(f"{a:.6f}" for a in accs)
    )
    for name, value in figures.items():
        print(f"{name:42s} {value:.6f}")
    from tfrewrite.rules.training.metric_averaging import PerBatchMetricAverage

    doc = " ".join(PerBatchMetricAverage.explanation.split())
    quoted = [
        f"{figures['np.mean of the batch accuracies']:.6f}",
        f"{figures['true accuracy (right / examples)']:.6f}",
    ]
    missing = [q for q in quoted if q not in doc]
    if missing:
        print(f"the TFR306 documentation does not quote {', '.join(missing)}")
        return 1
    print("the TFR306 documentation quotes " + " and ".join(quoted))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
