"""What notebooks cost `check`: a generated tree of `.py` files and notebooks.

The tree holds N Python files and M notebooks with the same kind of code (a
custom training loop, a loss, a decorated function per file; the notebooks
split it into cells with magics, markdown and image outputs). Prints:

- `check` on the `.py` files alone;
- the JSON parse of the notebooks alone (`json.loads`);
- `check` on the whole tree, and its ratio to the sum of the two above.

Usage: python benchmarks/notebooks.py [--py 500] [--notebooks 200] [--jobs N]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

from tfrewrite.pipeline.engine import InputFile, RunOptions, run
from tfrewrite.rules import select_rules
from tfrewrite.workspace.discovery import discover

CELLS = [
    ("markdown", "# Training {n}\n\nA custom loop with a tape."),
    ("code", "%matplotlib inline\nimport numpy as np\nimport tensorflow as tf"),
    (
        "code",
        "model_{n} = tf.keras.Sequential([tf.keras.layers.Dense(8), tf.keras.layers.Dense(1)])\n"
        "optimizer = tf.keras.optimizers.Adam(1e-3)\n"
        "x = np.random.rand(256, 4).astype('float32')\n"
        "y = np.random.rand(256, 1).astype('float32')",
    ),
    (
        "code",
        "def loss_{n}(y_true, y_pred):\n"
        "    noise = np.random.normal(0.0, 0.01, size=(32, 1))\n"
        "    print('loss', y_pred)\n"
        "    return tf.reduce_mean(tf.square(y_true + noise - y_pred))",
    ),
    (
        "code",
        "@tf.function\ndef train_step(xb, yb):\n"
        "    with tf.GradientTape() as tape:\n"
        "        pred = model_{n}(xb, training=True)\n"
        "        loss = loss_{n}(yb, pred)\n"
        "    grads = tape.gradient(loss, model_{n}.trainable_variables)\n"
        "    optimizer.apply_gradients(zip(grads, model_{n}.trainable_variables))\n"
        "    return loss",
    ),
    ("markdown", "Train."),
    (
        "code",
        "for epoch in range(3):\n"
        "    for i in range(0, 256, 32):\n"
        "        loss = train_step(x[i:i + 32], y[i:i + 32])\n"
        "    print(epoch, float(loss))\n" + "\n".join(f"value_{k} = {k} * 2" for k in range(40)),
    ),
]


def notebook_json(n: int) -> str:
    cells = []
    for i, (kind, text) in enumerate(CELLS):
        cell = {
            "cell_type": kind,
            "id": f"c{i}",
            "metadata": {},
            "source": text.format(n=n).splitlines(keepends=True),
        }
        if kind == "code":
            cell["execution_count"] = i
            cell["outputs"] = [
                {
                    "data": {"image/png": "iVBORw0KGgo" * 2000, "text/plain": ["<Figure>"]},
                    "metadata": {},
                    "output_type": "display_data",
                }
            ]
        cells.append(cell)
    document = {
        "cells": cells,
        "metadata": {"language_info": {"name": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return json.dumps(document, indent=1, sort_keys=True) + "\n"


def python_source(n: int) -> str:
    return (
        "\n\n".join(text.format(n=n) for kind, text in CELLS if kind == "code").replace(
            "%matplotlib inline\n", ""
        )
        + "\n"
    )


def timed_check(paths: list[Path], root: Path, jobs: int) -> float:
    options = RunOptions(
        rule_codes=tuple(r.code for r in select_rules(["TFR"], [])), root=str(root)
    )
    start = time.perf_counter()
    result = run([InputFile(str(p)) for p in paths], options, jobs=jobs)
    elapsed = time.perf_counter() - start
    assert not result.errors, result.errors[:3]
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--py", type=int, default=500)
    parser.add_argument("--notebooks", type=int, default=200)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for n in range(args.py):
            (root / f"train_{n}.py").write_text(python_source(n))
        for n in range(args.notebooks):
            (root / f"train_{n}.ipynb").write_text(notebook_json(n))
        everything = list(discover([root], root, ()))
        py_files = [p for p in everything if p.suffix == ".py"]
        notebooks = [p for p in everything if p.suffix == ".ipynb"]
        start = time.perf_counter()
        for path in notebooks:
            json.loads(path.read_bytes())
        json_time = time.perf_counter() - start
        py_time = timed_check(py_files, root, args.jobs)
        all_time = timed_check(everything, root, args.jobs)
    budget = py_time + json_time
    print(f"{len(py_files)} .py files, {len(notebooks)} notebooks, {args.jobs} jobs")
    print(f"check .py only:          {py_time:7.2f} s")
    print(f"JSON parse of notebooks: {json_time:7.2f} s")
    print(f"check everything:        {all_time:7.2f} s  ({all_time / budget:.2f}x the sum)")


if __name__ == "__main__":
    main()
