"""Cost of `tfrewrite check` on one large generated file: time and peak memory
must grow linearly with the file's size.

The file repeats a traced loss with a finding of every kind TFR1xx reports
(`np.random`, a tensor `if`, `print`) and an untraced helper, so every phase
runs on it: indexing, tracing facts, the LibCST parse, the rules, positions
and the text report. Each size runs `python -m tfrewrite check FILE` in its own
process; the wall time and that process's peak RSS are printed, with the cost
per MB, which stays flat when the cost is linear.

Usage: python benchmarks/large_file.py [--sizes 1,2,4] [--format text]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TEMPLATE = """

@tf.function
def loss_{i}(y_true, y_pred):
    noise = np.random.normal(0.0, 1.0)
    if tf.reduce_mean(y_pred) > 0:
        scale = 2.0
    else:
        scale = 1.0
    print(y_pred)
    return tf.reduce_mean(tf.square(y_true - y_pred)) * scale + noise


def helper_{i}(x):
    return x + {i}
"""


def generate(size_bytes: int) -> str:
    """A module of about `size_bytes` bytes built from `TEMPLATE`."""
    parts = ["import numpy as np\nimport tensorflow as tf\n"]
    total = len(parts[0])
    i = 0
    while total < size_bytes:
        chunk = TEMPLATE.format(i=i)
        parts.append(chunk)
        total += len(chunk)
        i += 1
    return "".join(parts)


def measure(path: Path, output_format: str) -> tuple[float, int]:
    """(wall seconds, peak RSS in MB) of one `tfrewrite check` process."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    command = [sys.executable, "-m", "tfrewrite", "check", str(path), "-j", "1"]
    command += ["--output-format", output_format]
    start = time.perf_counter()
    with open(os.devnull, "wb") as devnull:
        process = subprocess.Popen(command, stdout=devnull, stderr=devnull, env=env)
        _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        raise SystemExit(f"tfrewrite check failed on {path} (status {status})")
    return elapsed, usage.ru_maxrss // 1024  # ru_maxrss is in KB on Linux


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1,2,4", help="file sizes in MB, comma-separated")
    parser.add_argument("--format", default="text", help="the --output-format to time")
    args = parser.parse_args()
    sizes = [float(s) for s in args.sizes.split(",")]
    print(f"{'size':>8} {'lines':>9} {'time':>9} {'peak RSS':>10} {'s/MB':>7} {'MB RSS/MB':>10}")
    with tempfile.TemporaryDirectory() as folder:
        for size in sizes:
            path = Path(folder) / f"generated_{size:g}mb.py"
            source = generate(int(size * 1_000_000))
            path.write_text(source)
            elapsed, rss = measure(path, args.format)
            lines = source.count("\n")
            print(
                f"{size:>6g}MB {lines:>9} {elapsed:>8.1f}s {rss:>8}MB "
                f"{elapsed / size:>7.1f} {rss / size:>10.0f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
