"""Train-step verification: k steps eagerly against k steps traced.

A train step cannot be called on synthesised tensors: it needs a model, an
optimizer and data. The configuration names a *harness*, a function the user
writes that builds them:

```toml
[tool.tfrewrite.verify]
harness."train:train_step" = "verify_harness:build"   # module:function
harness-steps = 5
```

`build()` returns a dict such as `{"model": model, "optimizer": optimizer,
"batches": [(x, y), ...]}`. Entries whose names are parameters of the step are
passed by name, the others replace the module-level globals of that name (a
step that reads a global `model`); each batch fills the remaining parameters
in order.

The original runs eagerly and the rewrite traced, each from a fresh `build()`
with the rewrite's model set to the original's initial weights; the per-step
losses (the first floating-point value the step returns) and the final
weights must agree within `atol + rtol*|expected|` with both tolerances ×100,
since k optimizer steps accumulate float32 rounding. The `tf.cond` calls the
rewrite introduced must take both branches on the harness batches: the
instrumented rewrite runs them once more, eagerly (see `coverage`).
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from typing import Any

import numpy as np
import tensorflow as tf

from tfrewrite.verify import project_imports
from tfrewrite.verify.compare import Difference, compare

CHECK_LOSSES = "train steps: loss curve"
CHECK_WEIGHTS = "train steps: final weights"


class HarnessError(Exception):
    """The harness cannot be imported or returned something unusable."""


def load_builder(spec: str) -> Callable[[], dict[str, Any]]:
    module_name, sep, function = spec.partition(":")
    if not sep:
        raise HarnessError(f'harness {spec!r} must look like "module:function"')
    try:
        module = importlib.import_module(module_name)
        return getattr(module, function)
    except Exception as err:
        # A package the harness imports that the workers lack (TF-GAN's
        # `tf.estimator` under TensorFlow 2.16+) makes the result "needs package".
        project_imports.missing_package(err)
        raise HarnessError(f"cannot load the harness {spec!r}: {err!r}") from err


def _build(builder: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    objects = builder()
    # A harness that imports a training script may switch graphs off
    # (`run_functions_eagerly(True)` at import): the traced side must trace.
    tf.config.run_functions_eagerly(False)
    if not isinstance(objects, dict) or "batches" not in objects:
        raise HarnessError("the harness must return a dict with a `batches` list")
    return objects


def build_arguments(builder: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """The harness result as arguments of the function that holds a loop
    (`fit(model, optimizer, batches, epochs)`): every entry by name."""
    objects = builder()
    tf.config.run_functions_eagerly(False)
    if not isinstance(objects, dict):
        raise HarnessError("the harness must return a dict of the function's arguments")
    return objects


def _first_float(value: Any) -> np.ndarray | None:
    for item in tf.nest.flatten(value):
        if (tf.is_tensor(item) or isinstance(item, tf.Variable)) and item.dtype.is_floating:
            return np.asarray(item.numpy())
        if isinstance(item, float):
            return np.asarray(item, dtype=np.float64)
    return None


def _weights(objects: dict[str, Any]) -> list[np.ndarray]:
    model = objects.get("model")
    return [np.asarray(w) for w in model.get_weights()] if model is not None else []


def run_steps(
    step: Callable, module_globals: dict[str, Any], objects: dict[str, Any], python_step: Callable
) -> tuple[list[np.ndarray | None], list[np.ndarray]]:
    """Run `step` over the harness batches; (losses per step, final weights)."""
    params = list(inspect.signature(python_step).parameters)
    named = {k: v for k, v in objects.items() if k != "batches" and k in params}
    saved = {}
    for key, value in objects.items():
        if key != "batches" and key not in params and key in module_globals:
            saved[key] = module_globals[key]
            module_globals[key] = value
    free = [p for p in params if p not in named]
    losses = []
    try:
        for batch in objects["batches"]:
            batch = batch if isinstance(batch, (tuple, list)) else (batch,)
            kwargs = dict(named)
            kwargs.update(zip(free, batch, strict=False))
            losses.append(_first_float(step(**kwargs)))
    finally:
        module_globals.update(saved)
    return losses, _weights(objects)


def compare_training(
    builder: Callable[[], dict[str, Any]],
    original: Any,
    rewrite: Any,
    rtol: float,
    atol: float,
    eagerly: Callable,
) -> dict[str, Difference]:
    """Original eager vs rewrite traced over the harness batches.

    `original`/`rewrite` are `loader.LoadedFunction`s; `eagerly` is the
    context manager that makes `tf.function`s run eagerly."""
    rtol, atol = rtol * 100, atol * 100
    eager_objects = _build(builder)
    initial = _weights(eager_objects)
    with eagerly():
        want_losses, want_weights = run_steps(
            original.python_function,
            original.module.__dict__,
            eager_objects,
            original.python_function,
        )
    traced_objects = _build(builder)
    if traced_objects.get("model") is not None and initial:
        traced_objects["model"].set_weights(initial)
    traced = rewrite.function if hasattr(rewrite.function, "python_function") else None
    step = traced or tf.function(rewrite.python_function)
    got_losses, got_weights = run_steps(
        step, rewrite.module.__dict__, traced_objects, rewrite.python_function
    )

    losses = Difference()
    for i, (want, got) in enumerate(zip(want_losses, got_losses, strict=True)):
        if want is None or got is None:
            continue
        losses.merge(compare(want, got, rtol, atol, f"loss at step {i + 1}"))
    weights = compare(want_weights, got_weights, rtol, atol, "final weights")
    return {CHECK_LOSSES: losses, CHECK_WEIGHTS: weights}


def cover_branches(
    builder: Callable[[], dict[str, Any]], instrumented: Any, recorder: Any, eagerly: Callable
) -> str | None:
    """Run the harness batches through the instrumented rewrite (a
    `loader.LoadedFunction` whose `tf.cond` branches report to `recorder`, a
    `coverage.BranchRecorder`) eagerly, where `tf.cond` runs one branch; the
    error it raised, if any (the branches taken until then are recorded)."""
    recorder.taken = {}
    try:
        objects = _build(builder)
        recorder.active = True
        with eagerly():
            run_steps(
                instrumented.python_function,
                instrumented.module.__dict__,
                objects,
                instrumented.python_function,
            )
    except Exception as err:  # user code: a result
        return f"{type(err).__name__}: {str(err).strip()[:200]}"
    finally:
        recorder.active = False
    return None
