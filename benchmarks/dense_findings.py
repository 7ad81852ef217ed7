"""Cost of `tfrewrite check` on files full of hazards, the code users run it
on before a migration: each generated loss is decorated with `@tf.function`,
draws with `np.random` and prints (TFR301, TFR102, TFR103), and a train step
differentiates it under a tape (TFR304 on its model call): four findings per
15 lines. Each size runs `python -m tfrewrite check --no-cache FILE` in its
own process, once per output format; JSON carries every fix's edits.

Prints, per file and format, the wall time and the milliseconds per finding,
which stay flat when the cost grows with the file, not with findings times
size.

Usage: python benchmarks/dense_findings.py [--losses 14,67,200] [--formats concise,json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LOSS = """

@tf.function
def loss_{i}(y_true, y_pred):
    noise = np.random.normal(0.0, 1.0)
    print("loss", y_pred)
    return tf.reduce_mean(tf.square(y_true - y_pred)) + {i} * noise


def train_step_{i}(model, optimizer, x, y):
    with tf.GradientTape() as tape:
        loss = loss_{i}(y, model(x))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss
"""


# The same code as `fix --unsafe-fixes` leaves it: no finding (the editor's
# case of a file being typed in that is already right).
CLEAN = """

def loss_{i}(y_true, y_pred):
    noise = tf.random.normal([], 0.0, 1.0)
    tf.print("loss", y_pred, output_stream=sys.stdout)
    return tf.reduce_mean(tf.square(y_true - y_pred)) + {i} * noise


@tf.function
def train_step_{i}(model, optimizer, x, y):
    with tf.GradientTape() as tape:
        loss = loss_{i}(y, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss
"""


def clean_source(losses: int) -> str:
    return "import sys\n\nimport tensorflow as tf\n" + "".join(
        CLEAN.format(i=i) for i in range(losses)
    )


def dense_source(losses: int) -> str:
    return "import numpy as np\nimport tensorflow as tf\n" + "".join(
        LOSS.format(i=i) for i in range(losses)
    )


def _time_check(path: Path, output_format: str) -> tuple[float, int]:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parent.parent / "src")}
    command = [sys.executable, "-m", "tfrewrite", "check", "--no-cache", "--exit-zero"]
    command += ["--output-format", "json" if output_format == "json" else output_format]
    start = time.perf_counter()
    done = subprocess.run(
        [*command, path.name], cwd=path.parent, env=env, capture_output=True, text=True
    )
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(done.stderr)
    findings = len(json.loads(done.stdout)) if output_format == "json" else -1
    return elapsed, findings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--losses", default="14,67,200")
    parser.add_argument("--formats", default="concise,json")
    args = parser.parse_args()
    formats = args.formats.split(",")
    print(f"{'lines':>6} {'findings':>9} {'format':>8} {'seconds':>8} {'ms/finding':>11}")
    with tempfile.TemporaryDirectory() as folder:
        for losses in (int(n) for n in args.losses.split(",")):
            path = Path(folder) / f"dense_{losses}.py"
            path.write_text(dense_source(losses))
            lines = path.read_text().count("\n")
            findings = 4 * losses
            for output_format in formats:
                seconds, counted = _time_check(path, output_format)
                if counted >= 0:
                    findings = counted
                per = 1000 * seconds / findings
                print(f"{lines:>6} {findings:>9} {output_format:>8} {seconds:>8.2f} {per:>11.1f}")


if __name__ == "__main__":
    main()
