"""What moving `@tf.function` from the loss to the train step buys.

A small custom training loop (a 32 -> 64 -> 10 MLP on generated data, seeded,
batches of 64, no shuffling) is written the way it often is: the decorator on
the loss, the train step eager. The benchmark runs it, rewrites it with
`tfrewrite fix` (TFR301 moves the decorator onto the step), runs the result,
and prints both per-epoch times after tracing (the first epoch is excluded),
their ratio, and the largest difference between the two loss curves.

Then the same for `examples/eager_tutorial.py`, the tutorial-shaped script
with every hazard: one `tfrewrite fix --unsafe-fixes` migrates it. Its
original step cannot train (the loss is computed after the tape: "No
gradients provided"), so "before" is the migrated step run eagerly, op by op,
as the original ran: the per-step time of both after tracing, from the same
weights on the same batches, and the largest loss difference between them
(the input noise is drawn differently eagerly and traced).

Each program runs in its own Python process so neither inherits the other's
TensorFlow state. Run:
`python benchmarks/train_step_payoff.py [--epochs N] [--steps N] [--example-only]`.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

from tfrewrite.api import fix_source_with_findings

LOOP_SOURCE = textwrap.dedent(
    """
    import json
    import sys
    import time

    import keras
    import numpy as np
    import tensorflow as tf

    EPOCHS = int(sys.argv[1])
    keras.utils.set_random_seed(0)
    rng = np.random.default_rng(0)
    features = rng.normal(size=(4096, 32)).astype("float32")
    labels = (features[:, :10].argmax(axis=1)).astype("int32")
    dataset = tf.data.Dataset.from_tensor_slices((features, labels)).batch(64)

    model = keras.Sequential(
        [keras.Input((32,)), keras.layers.Dense(64, activation="relu"), keras.layers.Dense(10)]
    )
    optimizer = keras.optimizers.SGD(learning_rate=0.05)


    @tf.function
    def loss_fn(labels, logits):
        return tf.reduce_mean(
            tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
        )


    def train_step(x, y):
        with tf.GradientTape() as tape:
            logits = model(x, training=True)
            loss = loss_fn(y, logits)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss


    losses = []
    epoch_seconds = []
    for epoch in range(EPOCHS):
        start = time.perf_counter()
        for x, y in dataset:
            loss = train_step(x, y)
            losses.append(float(loss))
        epoch_seconds.append(time.perf_counter() - start)
    print(json.dumps({"losses": losses, "epoch_seconds": epoch_seconds}))
    """
).lstrip()


def run_program(path: Path, epochs: int) -> dict:
    completed = subprocess.run(
        [sys.executable, str(path), str(epochs)], capture_output=True, text=True, check=True
    )
    return json.loads(completed.stdout.strip().splitlines()[-1])


EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "eager_tutorial.py"

STEP_TIMER = textwrap.dedent(
    """
    import importlib.util
    import json
    import sys
    import time

    import tensorflow as tf

    path, eager, steps = sys.argv[1], sys.argv[2] == "eager", int(sys.argv[3])
    spec = importlib.util.spec_from_file_location("migrated", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    tf.config.run_functions_eagerly(eager)
    batches = list(module.make_dataset())
    losses, seconds = [], []
    for i in range(steps):
        x, y = batches[i % len(batches)]
        start = time.perf_counter()
        loss, _ = module.train_step(x, y)
        loss = float(loss)
        seconds.append(time.perf_counter() - start)
        losses.append(loss)
    print(json.dumps({"losses": losses, "step_seconds": seconds}))
    """
).lstrip()


def example_payoff(steps: int) -> None:
    """The example script's step before (eager) and after `fix` (traced)."""
    original = EXAMPLE.read_text()
    rewritten, fixed, remaining = fix_source_with_findings(
        original, "eager_tutorial.py", None, unsafe_fixes=True
    )
    runs = {}
    with tempfile.TemporaryDirectory() as tmp:
        migrated = Path(tmp, "eager_tutorial_migrated.py")
        migrated.write_text(rewritten)
        timer = Path(tmp, "time_steps.py")
        timer.write_text(STEP_TIMER)
        for mode in ("eager", "traced"):
            completed = subprocess.run(
                [sys.executable, str(timer), str(migrated), mode, str(steps)],
                capture_output=True,
                text=True,
                check=True,
            )
            runs[mode] = json.loads(completed.stdout.strip().splitlines()[-1])

    def per_step(run: dict) -> float:
        timed = sorted(run["step_seconds"][4:])  # after both traces (full and short batch)
        return timed[len(timed) // 2]

    eager_s, traced_s = per_step(runs["eager"]), per_step(runs["traced"])
    difference = max(
        abs(a - b) for a, b in zip(runs["eager"]["losses"], runs["traced"]["losses"], strict=True)
    )
    print()
    print(f"examples/eager_tutorial.py, one `fix --unsafe-fixes`, {steps} steps of 512 examples")
    print("fixes applied:", ", ".join(sorted({f.code for f in fixed})))
    print("remaining findings:", ", ".join(sorted({f.code for f in remaining})) or "none")
    print(f"step run eagerly (as the original): {eager_s * 1000:8.2f} ms/step (median)")
    print(f"migrated step, traced:              {traced_s * 1000:8.2f} ms/step (median)")
    print(f"speed-up: {eager_s / traced_s:.1f}x")
    print(f"largest loss difference, eager vs traced: {difference:.3g}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--steps", type=int, default=40, help="steps of the example script")
    parser.add_argument(
        "--example-only", action="store_true", help="only examples/eager_tutorial.py (make demo)"
    )
    args = parser.parse_args()
    if args.example_only:
        example_payoff(args.steps)
        return
    rewritten, fixed, remaining = fix_source_with_findings(LOOP_SOURCE, "train_loop.py", ["TFR3"])
    if rewritten == LOOP_SOURCE:
        raise SystemExit("tfrewrite fix changed nothing")
    with tempfile.TemporaryDirectory() as tmp:
        original_path = Path(tmp, "original.py")
        rewritten_path = Path(tmp, "rewritten.py")
        original_path.write_text(LOOP_SOURCE)
        rewritten_path.write_text(rewritten)
        original = run_program(original_path, args.epochs)
        fixed_run = run_program(rewritten_path, args.epochs)

    def after_tracing(run: dict) -> float:
        timed = run["epoch_seconds"][1:] or run["epoch_seconds"]
        return sum(timed) / len(timed)

    before_s, after_s = after_tracing(original), after_tracing(fixed_run)
    curve_a, curve_b = original["losses"], fixed_run["losses"]
    assert len(curve_a) == len(curve_b)
    difference = max(abs(a - b) for a, b in zip(curve_a, curve_b, strict=True))
    steps = len(curve_a) // args.epochs
    print("fixes applied:", ", ".join(f"{f.code} line {f.start.line}" for f in fixed))
    print("remaining findings:", ", ".join(f.code for f in remaining) or "none")
    print(f"steps per epoch: {steps}, epochs: {args.epochs} (first excluded from timing)")
    print(
        f"@tf.function on the loss:  {before_s * 1000:8.1f} ms/epoch  "
        f"({before_s / steps * 1000:.2f} ms/step)"
    )
    print(
        f"@tf.function on the step:  {after_s * 1000:8.1f} ms/epoch  "
        f"({after_s / steps * 1000:.2f} ms/step)"
    )
    print(f"speed-up: {before_s / after_s:.1f}x")
    print(
        f"first/last loss: {curve_a[0]:.6f} / {curve_a[-1]:.6f} (original), "
        f"{curve_b[0]:.6f} / {curve_b[-1]:.6f} (rewritten)"
    )
    print(f"largest loss-curve difference: {difference:.3g}")
    example_payoff(args.steps)


if __name__ == "__main__":
    main()
