"""Targets per second of `tfrewrite verify`: the local worker pool against Ray.

Generates N small modules, each with a traced loss whose Python `if` on a
tensor `fix` rewrites into a `tf.cond` (every one a target: the original run
eagerly against the rewrite traced, both branches covered), then verifies
them all on the local pool and on Ray, and prints the wall time (worker or
actor start included, as a user waits for it) and targets per second:

    python benchmarks/verify_scale.py                 # N = 50, both backends
    python benchmarks/verify_scale.py --n 200
    python benchmarks/verify_scale.py --backend ray --ray-address auto   # an existing cluster

`--jobs` sets the local workers (default: the CPU count) and caps the actors.
Without `--ray-address` a Ray instance is started on this machine for the
run (its start is timed too). XLA is off, as with `verify --no-xla`.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from tfrewrite.config import Settings  # noqa: E402
from tfrewrite.verify.command import project_folder, targets_for_paths  # noqa: E402
from tfrewrite.verify.pool import LocalPool  # noqa: E402
from tfrewrite.verify.run import RunOptions, verify_targets  # noqa: E402
from tfrewrite.verify.settings import VerifySettings  # noqa: E402
from tfrewrite.verify.targets import Target  # noqa: E402

MODULE = """import tensorflow as tf


@tf.function
def loss_{i}(y_true, y_pred):
    error = tf.reduce_mean(tf.abs(y_true - y_pred))
    if error > {threshold}:
        loss = error * {scale}
    else:
        loss = tf.square(error) + {offset}
    return loss
"""


def write_project(folder: Path, n: int) -> None:
    for i in range(n):
        text = MODULE.format(
            i=i, threshold=0.2 + (i % 7) / 20, scale=0.5 + (i % 3) / 4, offset=i / 1000
        )
        (folder / f"loss_{i:04d}.py").write_text(text)


def run(
    backend: str, targets: list[Target], root: Path, jobs: int, address: str | None
) -> tuple[float, dict[str, int]]:
    vs = VerifySettings(xla=False, timeout=300)
    if backend == "local":

        def scheduler(n: int) -> LocalPool:
            return LocalPool(min(jobs, n))

    else:
        from tfrewrite.verify.ray_cluster import RayScheduler

        def scheduler(n: int) -> RayScheduler:  # type: ignore[misc]
            return RayScheduler(address, project_folder(root, targets), jobs, n)

    started = time.perf_counter()
    results = verify_targets(
        targets, vs, root, jobs, run=RunOptions(scheduler=scheduler, progress=sys.stderr.isatty())
    )
    seconds = time.perf_counter() - started
    verdicts: dict[str, int] = {}
    for r in results:
        verdicts[r["verdict"]] = verdicts.get(r["verdict"], 0) + 1
    return seconds, verdicts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=50, help="generated targets (default 50)")
    parser.add_argument("--backend", choices=("local", "ray", "both"), default="both")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--ray-address", default=None, help="an existing cluster (or auto)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tfrewrite-verify-scale-") as tmp:
        folder = Path(tmp)
        write_project(folder, args.n)
        settings = Settings(root=folder, unsafe_fixes=False)
        targets = targets_for_paths([folder], settings, VerifySettings(xla=False))
        print(f"{len(targets)} targets, {os.cpu_count()} CPUs here, --jobs {args.jobs}")
        backends = ("local", "ray") if args.backend == "both" else (args.backend,)
        for backend in backends:
            seconds, verdicts = run(backend, targets, folder, args.jobs, args.ray_address)
            rate = len(targets) / seconds
            print(
                f"{backend:<6} {seconds:7.1f} s  {rate:6.2f} targets/s  "
                + ", ".join(f"{n} {v}" for v, n in sorted(verdicts.items()))
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
