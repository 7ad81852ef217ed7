"""One way to run verification requests, whatever runs them.

A `Scheduler` takes requests (the JSON payloads `run` builds, one per
target) and hands back results as they finish; the local worker pool
(`pool.LocalPool`) and a Ray cluster (`ray_cluster.RayScheduler`) are the two.
`run_all` drives either one: it submits the costliest targets first, retries a
target whose worker died under it once, on another worker, and reports each
result as it arrives (to the results file, to the progress line). The target
logic itself (building payloads, shaping results) lives in `run` and the
worker, once, for both.

Standard library only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

# A target whose worker died under it runs once more, on another worker; a
# second death is the target's doing (a segfault in an op, memory it takes).
ATTEMPTS = 2

Timeout = float | Callable[[dict[str, Any]], float | None] | None


@dataclass(frozen=True)
class Finished:
    """A request that ended: its `result`, or why its worker was `lost`
    (the worker died running it: killed, out of memory, a crash in native
    code). A timeout is a result (an `error`), not a loss: running it again
    would only take as long again."""

    key: int
    result: dict[str, Any] | None = None
    lost: str | None = None


class Scheduler(Protocol):
    """Runs requests on workers that import TensorFlow once."""

    # How many requests run at once, and what runs them, for the progress line.
    slots: int
    description: str

    def submit(self, key: int, payload: dict[str, Any], timeout: float | None) -> None:
        """Queue one request; `timeout` seconds count from when a worker starts it."""

    def next_finished(self) -> Finished:
        """Block until a request ends. Raises `pool.EnvironmentProblem` when
        no worker can run at all (no TensorFlow, no cluster)."""

    def close(self, abort: bool = False) -> None:
        """Stop the workers; `abort` kills the requests still running."""


def estimated_cost(payload: dict[str, Any]) -> float:
    """A guess at how long a request takes, to start the costliest first.

    Finishing order matters at the end of a run: a 25 s training-loop replay
    started last keeps the whole run waiting while every other worker idles.
    Started first (longest processing time first), it overlaps the many short
    loss checks. Replayed loops, train-step harnesses and calls through the
    code that calls a function run real training or a `main()`; larger
    sources take longer to load and carry more to compare."""
    cost = 1.0
    if payload.get("loop"):
        cost += 20.0
    if payload.get("harness"):
        cost += 20.0
    if payload.get("caller"):
        cost += 10.0
    if payload.get("factory"):
        cost += 2.0
    if payload.get("rewrite_source") is None:
        cost += 0.5  # the original traced against eager, with its flags flipped
    size = len(payload.get("original_source") or "") + len(payload.get("rewrite_source") or "")
    return cost + size / 20_000


def launch_order(payloads: Sequence[dict[str, Any]]) -> list[int]:
    """Indexes of `payloads`, costliest first; equal costs keep their order."""
    return sorted(range(len(payloads)), key=lambda i: -estimated_cost(payloads[i]))


def lost_result(payload: dict[str, Any], reason: str) -> dict[str, Any]:
    return {
        "function": payload.get("qualname", "?"),
        "verdict": "error",
        "error": f"the worker died running it, on {ATTEMPTS} workers: {reason}",
    }


def run_all(
    scheduler: Scheduler,
    payloads: Sequence[dict[str, Any]],
    timeout: Timeout = None,
    on_result: Callable[[int, dict[str, Any]], None] | None = None,
) -> list[dict[str, Any]]:
    """Every payload's result, in payload order; `on_result(index, result)`
    as each one finishes. The caller closes the scheduler (with `abort`
    when this raises: interrupted, the workers must not run on)."""
    results: list[dict[str, Any] | None] = [None] * len(payloads)
    attempts = [0] * len(payloads)

    def submit(i: int) -> None:
        attempts[i] += 1
        scheduler.submit(i, payloads[i], timeout(payloads[i]) if callable(timeout) else timeout)

    for i in launch_order(payloads):
        submit(i)
    remaining = len(payloads)
    while remaining:
        finished = scheduler.next_finished()
        i = finished.key
        if finished.lost is not None:
            if attempts[i] < ATTEMPTS:
                submit(i)
                continue
            result = lost_result(payloads[i], finished.lost)
        else:
            assert finished.result is not None
            result = finished.result
        results[i] = result
        remaining -= 1
        if on_result is not None:
            on_result(i, result)
    return [r for r in results if r is not None]
