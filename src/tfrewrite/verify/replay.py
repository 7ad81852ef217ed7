"""Replay a training loop before or after a rewrite (inside a worker).

The original loop runs eagerly (every `tf.function` in it too), the rewritten
loop as written (its train step traced), each for a few batches: the first
ones and the last, plus a cut-down batch when every batch has the same size,
so a step traced for one batch size must also work for another (the short
last batch; `reduce_retracing=True` makes the batch dimension `None`). Both
start from the same seeds, and the rewrite's models are given the original's
initial weights. After each step the values the loop body binds (the loss,
the logits, a list of losses) are recorded; at the end, the weights of every
model and variable in reach. A replay can also run instrumented, so that the
`tf.cond` calls a rewrite introduced record which branches they take (see
`coverage`).

The loop's inputs come from the script itself: the statements before the
loop that build the model, the optimizer and the dataset (see `loops`), or,
when the loop sits in a function with required parameters, from the code
that calls it (`main()`, the `__main__` block, a test; see `callers`) or a
harness that returns them.

What a replay records is judged in `replay_comparison`, which runs the
replays it needs: running a loop and comparing runs are apart.
"""

from __future__ import annotations

import ast
import contextlib
import itertools
import random
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import tensorflow as tf

from tfrewrite.verify import appended, coverage, loader, loops, module_slice
from tfrewrite.verify.outcome import SEED, Call, call

STEPS = 4  # batches per sampled loop: the first STEPS - 1 and the last
SCAN = 2000  # batches looked through for the last one


def _leaves(item: Any) -> list[Any]:
    try:
        return tf.nest.flatten(item)
    except Exception:
        return [item]


def _leading(value: Any) -> int | None:
    shape = getattr(value, "shape", None)
    if shape is None or not len(shape):
        return None
    first = shape[0]
    return int(first) if first is not None else None


def _cut(item: Any) -> Any | None:
    """The item with every array that shares the batch dimension cut to
    about half of it; None when the item holds no batch."""
    sizes = [s for s in (_leading(v) for v in _leaves(item)) if s is not None and s >= 2]
    if not sizes:
        return None
    batch = max(set(sizes), key=sizes.count)
    short = max(1, (batch - 1) // 2)

    def cut(value: Any) -> Any:
        if _leading(value) == batch and hasattr(value, "__getitem__"):
            return value[:short]
        return value

    try:
        return tf.nest.map_structure(cut, item)
    except Exception:
        return None


class Sampler:
    """`__tfrewrite_sample__`: a few items of an iterable, the last one included."""

    def __init__(self, steps: int = STEPS) -> None:
        self.steps = steps
        self.batch_sizes: list[int] = []

    def __call__(self, iterable: Iterable[Any], passes: int | None = None) -> Iterator[Any]:
        iterator = iter(iterable)
        if passes is not None:  # an outer loop: its first passes
            yield from itertools.islice(iterator, passes)
            return
        head = list(itertools.islice(iterator, self.steps - 1))
        last = None
        for last in itertools.islice(iterator, SCAN):  # noqa: B007 - the last one is wanted
            pass
        items = head + ([last] if last is not None else [])
        sizes = [_sizes(i) for i in items]
        if items and len({s for s in sizes if s is not None}) <= 1:
            short = _cut(items[0])
            if short is not None:
                items.append(short)
                sizes.append(_sizes(short))
        self.batch_sizes += [s for s in sizes if s is not None]
        yield from items


def _sizes(item: Any) -> int | None:
    sizes = [s for s in (_leading(v) for v in _leaves(item)) if s is not None]
    return max(set(sizes), key=sizes.count) if sizes else None


class Limit:
    """`__tfrewrite_limit__`: bounds each `while` loop on the path to a few passes."""

    def __init__(self, steps: int = STEPS) -> None:
        self.steps = steps
        self.counts: dict[int, int] = {}

    def __call__(self, line: int) -> bool:
        self.counts[line] = self.counts.get(line, 0) + 1
        return self.counts[line] <= self.steps


def _recordable(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float, np.ndarray, np.generic)) or tf.is_tensor(value):
        return True
    if isinstance(value, (list, tuple)) and 0 < len(value) <= 10000:
        return all(
            isinstance(v, (int, float, np.generic)) or (tf.is_tensor(v) and v.shape.rank == 0)
            for v in value
        )
    return False


def _snapshot(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return [_snapshot(v) for v in value]
    if isinstance(value, tf.Variable):
        return value.numpy()
    if tf.is_tensor(value):
        return value.numpy()
    return value


def _has_weights(value: Any) -> bool:
    if isinstance(value, type):
        return False
    if isinstance(value, tf.Variable):
        return True
    return hasattr(value, "weights") and hasattr(value, "get_weights") and callable(value)


def _models(scope: dict[str, Any]) -> dict[str, Any]:
    """Objects with weights in a scope: Keras models and layers, variables;
    in a method's loop also those `self` holds (`self.model`)."""
    found = {}
    for name, value in scope.items():
        if not name.startswith("__") and _has_weights(value):
            found[name] = value
    owner = scope.get("self")
    if owner is not None and not _has_weights(owner):
        try:
            attributes = dict(vars(owner))
        except TypeError:  # no __dict__
            attributes = {}
        for name, value in attributes.items():
            if _has_weights(value):
                found[f"self.{name}"] = value
    return found


def _weights(obj: Any) -> list[np.ndarray]:
    if isinstance(obj, tf.Variable):
        return [obj.numpy()]
    return [np.asarray(w) for w in obj.get_weights()]


def _set_weights(obj: Any, weights: list[np.ndarray]) -> bool:
    try:
        if isinstance(obj, tf.Variable):
            obj.assign(weights[0])
        else:
            obj.set_weights(weights)
        return True
    except Exception:
        return False


@dataclass
class Run:
    """One replay: what each step bound, the final weights, and how it ended."""

    steps: list[dict[str, Any]] = field(default_factory=list)
    initial: dict[str, list[np.ndarray]] = field(default_factory=dict)
    final: dict[str, list[np.ndarray]] = field(default_factory=dict)
    models: dict[str, Any] = field(default_factory=dict)
    error: Call | None = None
    error_in_setup: bool = False  # raised while building the loop's inputs
    batch_sizes: list[int] = field(default_factory=list)
    branches: coverage.BranchRecorder | None = None  # of an instrumented replay


def _seed_states(obj: Any) -> list[Any]:
    """The state variables of the Keras seed generators in a model (its
    dropout and random augmentation layers), in a stable order."""
    try:
        variables = list(obj.variables) if not isinstance(obj, tf.Variable) else []
    except Exception:
        return []
    return [v for v in variables if str(getattr(v, "path", "")).endswith("seed_generator_state")]


def seed_layers(models: dict[str, Any], seed: int) -> None:
    """Give every Keras seed generator in the models a state derived from
    `seed` alone. A layer's generator is seeded when the model is built and
    then advances by itself, whatever `tf.random.set_seed` says later; its
    draws are stateless functions of that state, the same eagerly and traced.
    So both sides of a replay with the same seed draw the same dropout masks,
    and another seed draws other masks on both sides."""
    count = 0
    for name in sorted(models):
        for variable in _seed_states(models[name]):
            count += 1
            try:
                state = np.zeros_like(np.asarray(variable))
                state.reshape(-1)[0] = seed * 1009 + count
                variable.assign(state)
            except Exception:
                continue


class _Hooks:
    def __init__(
        self,
        run: Run,
        recorded: list[str],
        module: dict[str, Any],
        initial: dict | None,
        seed: int = SEED,
    ) -> None:
        self.run = run
        self.recorded = recorded
        self.module = module
        self.initial = initial  # the original's initial weights, given to the rewrite
        self.seed = seed

    def start(self, scope: dict[str, Any]) -> None:
        self.run.models = {**_models(self.module), **_models(scope)}
        for name, obj in self.run.models.items():
            if self.initial is not None and name in self.initial:
                _set_weights(obj, self.initial[name])
            try:
                self.run.initial[name] = _weights(obj)
            except Exception:
                continue
        seed_layers(self.run.models, self.seed)

    def record(self, scope: dict[str, Any]) -> None:
        self.run.models.update(_models(scope))
        self.run.steps.append(
            {n: _snapshot(scope[n]) for n in self.recorded if n in scope and _recordable(scope[n])}
        )


@contextlib.contextmanager
def open_tapes() -> Iterator[None]:
    """While active, a `GradientTape` keeps recording after its `with` block
    until `tape.gradient` is called: the original loop as its author meant
    it when the loss is computed after the block (which otherwise gives
    `None` gradients and "No gradients provided"; the TFR305 fix moves those
    statements into the block). Other originals are unaffected: operations
    after the block that do not feed the differentiated value change nothing."""
    opened: list[Any] = []
    exit_ = tf.GradientTape.__exit__

    def keep_recording(self: Any, *exc: Any) -> None:
        if exc and exc[0] is not None:
            exit_(self, *exc)
        else:
            opened.append(self)

    tf.GradientTape.__exit__ = keep_recording  # type: ignore[method-assign]
    try:
        yield
    finally:
        tf.GradientTape.__exit__ = exit_  # type: ignore[method-assign]
        for tape in reversed(opened):
            if tape._recording:
                with contextlib.suppress(Exception):
                    tape._pop_tape()


def _seed(seed: int = SEED) -> None:
    random.seed(seed)
    np.random.seed(seed)
    tf.random.set_seed(seed)
    try:
        import keras

        keras.utils.set_random_seed(seed)
    except Exception:
        pass


def replay(
    source: str,
    scope: str,
    index: int,
    role: str,
    path: str,
    package: str | None,
    recorded_names: list[str] | None,
    arguments: Callable[[], dict[str, Any]] | None,
    eager: bool,
    initial: dict[str, list[np.ndarray]] | None = None,
    step: str | None = None,
    seed: int = SEED,
    covering: str | None = None,
) -> tuple[Run, list[str]]:
    """Run the replay of one loop; (the run, the names its body binds).

    The script's set-up code always runs under the same seed (the same model,
    the same data); `seed` seeds the loop itself (dropout, augmentation).
    With `covering` (the original source), the `tf.cond` calls `source`
    introduced record the branches they run (`run.branches`; see `coverage`)."""
    text, recorded = loops.replay_source(source, scope, index, loops.reaches_step(step))
    names = recorded_names if recorded_names is not None else recorded
    run = Run()
    sampler = Sampler()
    hooks_globals: dict[str, Any] = {loops.SAMPLE: sampler, loops.LIMIT: Limit()}
    _seed()
    tf.config.run_functions_eagerly(False)
    module_dict: dict[str, Any] = {}
    hooks = _Hooks(run, names, module_dict, initial, seed)
    hooks_globals[loops.START] = hooks.start
    hooks_globals[loops.RECORD] = hooks.record
    try:
        # Harness entries that are not parameters of the loop's function
        # replace module-level names (the dataset a script would download).
        given = arguments() if arguments is not None else {}
        tf.config.run_functions_eagerly(False)
        provided = {k: v for k, v in given.items() if k not in loops.parameters(text)}
        tree = None
        if covering is not None:
            tree, run.branches = _instrumented(text, source, covering, path, provided)
            hooks_globals[coverage.RECORDER_NAME] = run.branches
        loaded = loader.load_function(
            text,
            loops.REPLAY,
            role,
            path,
            package,
            tree=tree,
            extra_globals=hooks_globals,
            provided=provided,
        )
    except (Exception, SystemExit) as err:  # the script's set-up code: a result, not a crash
        run.error = Call(error=err)
        run.error_in_setup = True
        return run, recorded
    hooks.module = loaded.module.__dict__
    params = loops.parameters(text)
    kwargs = {k: v for k, v in given.items() if k in params}
    _seed(seed)

    fn = loaded.python_function
    with open_tapes() if eager else contextlib.nullcontext():
        result = call(lambda: fn(**kwargs), {}, eager=eager)
    tf.config.run_functions_eagerly(False)
    if result.failed:
        run.error = result
    for name, obj in run.models.items():
        try:
            run.final[name] = _weights(obj)
        except Exception:
            continue
    run.batch_sizes = sampler.batch_sizes
    return run, recorded


def _instrumented(
    text: str, source: str, original: str, path: str, provided: dict[str, Any]
) -> tuple[ast.Module, coverage.BranchRecorder]:
    """The replay's module with the `tf.cond` calls `source` introduced
    instrumented, located at their lines in `source` first (the replay
    copies the loop and a step defined in its function), and its recorder."""
    piece = module_slice.slice_module(text, loops.REPLAY, path, frozenset(provided))
    appended.relocate(piece.tree, text)
    tree, conds = coverage.instrument(original, piece.tree, whole=source)
    return tree, coverage.BranchRecorder(conds, active=True)
