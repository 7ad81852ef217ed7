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
in order. A step that is a method (`Trainer.train_step`) runs on an object
built from the entries named as its class's `__init__` parameters
(`Trainer(model=..., optimizer=...)`), anew for every run.

The original runs eagerly and the rewrite traced, each from a fresh `build()`
with the rewrite's model set to the original's initial weights; the per-step
losses (the first floating-point value the step returns) and the final
weights must agree within `atol + rtol*|expected|` with both tolerances ×100,
since k optimizer steps accumulate float32 rounding. The `tf.cond` calls the
rewrite introduced must take both branches on the harness batches: the
instrumented rewrite runs them once more, eagerly (see `coverage`). When the
original step gives other values under another seed (it draws noise, or
its model drops out), both sides run under `REPLAYS` seeds and are compared
by distribution, as a random training loop is (`replay_comparison`).
"""

from __future__ import annotations

import importlib
import inspect
import random
from collections.abc import Callable
from typing import Any

import numpy as np
import tensorflow as tf

from tfrewrite.verify import project_imports
from tfrewrite.verify.outcome import SEED, Outcome
from tfrewrite.verify.replay import Run
from tfrewrite.verify.replay_comparison import compare_replays, compare_runs, same_run

CHECK_LOSSES = "train steps: loss curve"
CHECK_WEIGHTS = "train steps: final weights"
CHECK_RUNS = "train steps: rewrite runs"
# Runs per side of a random step. A harness's steps are few and small, so
# more seeds than a replayed loop's four buy the power to see a rewrite that
# draws from a wider distribution (noise three times as wide).
REPLAYS = 12


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


def construct_from(cls: type, objects: dict[str, Any]) -> object:
    """An object of `cls` built from the harness entries named as its
    `__init__`'s parameters (`Trainer(model, optimizer)` from `{"model":
    ..., "optimizer": ..., "batches": ...}`); the other parameters keep
    their defaults."""
    params = list(inspect.signature(cls.__init__).parameters)[1:]  # type: ignore[misc]
    return cls(**{name: objects[name] for name in params if name in objects})


def instance_factory(builder: Callable[[], dict[str, Any]]) -> Callable[[type], object]:
    """How verify builds the object of a train-step method a harness is
    configured for, when loading it: from a `build()` of its own. Each run
    then rebuilds it from the objects it trains (`run_steps`)."""
    return lambda cls: construct_from(cls, _build(builder))


def _method_of(function: Any) -> tuple[object, str] | None:
    """(the object, the method's name) of a bound method, also of the
    Python function a bound `tf.function` method exposes (which wraps the
    method of a `TfMethodTarget` holding the object); None for a function."""
    bound = getattr(function, "__wrapped__", function)
    owner = getattr(bound, "__self__", None)
    if owner is None or isinstance(owner, type):
        return None
    owner = getattr(owner, "target", owner)  # tf.function's method target
    return owner, bound.__name__


def _rebuilt(function: Any, objects: dict[str, Any]) -> tuple[object, str] | None:
    """(an object built from `objects`, the method's name) for the method
    `function`, so that a run trains the model it compares; None for a
    function, or when no entry names a parameter of the object's
    `__init__`. The caller keeps the object alive: a bound `tf.function`
    holds it weakly."""
    found = _method_of(function)
    if found is None:
        return None
    owner, name = found
    init = list(inspect.signature(type(owner).__init__).parameters)[1:]  # type: ignore[misc]
    if not any(param in objects for param in init):
        return None
    return construct_from(type(owner), objects), name


def _first_float(value: Any) -> np.ndarray | None:
    for item in tf.nest.flatten(value):
        if (tf.is_tensor(item) or isinstance(item, tf.Variable)) and item.dtype.is_floating:
            return np.asarray(item.numpy())
        if isinstance(item, float):
            return np.asarray(item, dtype=np.float64)
    return None


def _models(objects: dict[str, Any]) -> dict[str, Any]:
    """The harness entries that are models (they have weights), by name:
    a trainer's `model`, a GAN's `generator` and `discriminator`."""
    return {
        name: value
        for name, value in objects.items()
        if name != "batches" and callable(getattr(value, "get_weights", None))
    }


def _weights(objects: dict[str, Any]) -> dict[str, list[np.ndarray]]:
    return {
        name: [np.asarray(w) for w in model.get_weights()]
        for name, model in _models(objects).items()
    }


def run_steps(
    loaded: Any, objects: dict[str, Any], traced: bool = False
) -> tuple[list[np.ndarray | None], dict[str, list[np.ndarray]]]:
    """Run the loaded step (a `loader.LoadedFunction`) over the harness
    batches, traced or as Python; (losses per step, final weights of each
    model). A method runs on an object built from the harness entries."""
    rebuilt = _rebuilt(loaded.python_function, objects)
    step = getattr(*rebuilt) if rebuilt is not None else loaded.function
    python_step = getattr(step, "python_function", step)
    if not traced:
        step = python_step
    elif not hasattr(step, "python_function"):
        step = tf.function(python_step)
    module_globals = loaded.module.__dict__
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


def _run(
    builder: Callable[[], dict[str, Any]],
    loaded: Any,
    traced: bool,
    seed: int,
    eagerly: Callable,
    initial: dict[str, list[np.ndarray]] | None = None,
) -> Run:
    """One run of the step over a fresh `build()`: objects built under the
    one seed, each model set to its `initial` weights when given, the steps
    drawn under `seed` (a random step draws other values under another)."""
    _seed(SEED)
    objects = _build(builder)
    for name, model in _models(objects).items():
        if initial and initial.get(name):
            model.set_weights(initial[name])
    start = _weights(objects)
    _seed(seed)
    if traced:
        losses, weights = run_steps(loaded, objects, traced=True)
    else:
        with eagerly():
            losses, weights = run_steps(loaded, objects)
    return Run(
        steps=[{"loss": loss} if loss is not None else {} for loss in losses],
        initial=start,
        final=weights,
    )


def run_once(builder: Callable[[], dict[str, Any]], loaded: Any, eagerly: Callable) -> None:
    """Run the step eagerly over a fresh `build()`; raises what it raises
    (a harness whose objects do not fit the step)."""
    _run(builder, loaded, False, SEED, eagerly)


def _seed(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    tf.random.set_seed(seed)


def compare_training(
    outcome: Outcome,
    builder: Callable[[], dict[str, Any]],
    original: Any,
    rewrite: Any,
    rtol: float,
    atol: float,
    eagerly: Callable,
) -> None:
    """Original eager vs rewrite traced over the harness batches, recorded
    in `outcome`: value for value, or, when the original step itself gives
    other values under another seed (noise, dropout), by distribution over
    `REPLAYS` seeds per side, as a random training loop is compared.

    `original`/`rewrite` are `loader.LoadedFunction`s; `eagerly` is the
    context manager that makes `tf.function`s run eagerly."""
    checks = (CHECK_RUNS, CHECK_LOSSES, CHECK_WEIGHTS)
    want = _run(builder, original, False, SEED, eagerly)
    got = _run(builder, rewrite, True, SEED, eagerly, want.initial)
    exact = Outcome(outcome.function, outcome.mode)
    compare_runs(exact, want, got, ["loss"], rtol, atol, checks)
    initial = want.initial
    if all(c.ok for c in exact.checks.values()):
        outcome.checks.update(exact.checks)
        return
    again = _run(builder, original, False, SEED + 1, eagerly, initial)
    if same_run(want, again):  # not random: the rewrite computes otherwise
        outcome.checks.update(exact.checks)
        return
    originals = [want, again] + [
        _run(builder, original, False, SEED + k, eagerly, initial) for k in range(2, REPLAYS)
    ]
    rewrites = [got] + [
        _run(builder, rewrite, True, SEED + k, eagerly, initial) for k in range(1, REPLAYS)
    ]
    outcome.stochastic = True
    outcome.inputs.append(
        f"the original step is random (another seed gives other values): {REPLAYS} runs per "
        f"side with seeds {SEED}..{SEED + REPLAYS - 1}, compared by distribution"
    )
    compare_replays(outcome, originals, rewrites, ["loss"], rtol, atol, checks)


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
            run_steps(instrumented, objects)
    except Exception as err:  # user code: a result
        return f"{type(err).__name__}: {str(err).strip()[:200]}"
    finally:
        recorder.active = False
    return None
