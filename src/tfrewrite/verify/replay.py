"""Replay a training loop before and after a rewrite (inside a worker).

The original loop runs eagerly (every `tf.function` in it too), the rewritten
loop as written (its train step traced), each for a few batches: the first
ones and the last, plus a cut-down batch when every batch has the same size,
so a step traced for one batch size must also work for another (the short
last batch; `reduce_retracing=True` makes the batch dimension `None`). Both
start from the same seeds, and the rewrite's models are given the original's
initial weights. After each step the values the loop body binds (the loss,
the logits, a list of losses) are recorded; at the end, the weights of every
model and variable in reach. Losses and weights must agree within the
train-step tolerance (`rtol`, `atol` ×100: a few optimizer steps accumulate
float32 rounding). When the rewrite introduced `tf.cond` calls, its loop is
replayed once more, eagerly and instrumented, on the same batches: each
`tf.cond` must take both branches there, as on a function's inputs (see
`coverage`), or the loop is not proven.

The loop's inputs come from the script itself: the statements before the
loop that build the model, the optimizer and the dataset (see `loops`), or,
when the loop sits in a function with required parameters, from the code
that calls it (`main()`, the `__main__` block, a test; see `callers`) or a
harness that returns them.
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

from tfrewrite.verify import (
    appended,
    caller_capture,
    coverage,
    loader,
    loops,
    project_imports,
    remedies,
    stats,
)
from tfrewrite.verify.compare import Difference, compare, identical, same_kind, to_numpy
from tfrewrite.verify.outcome import SEED, Call, Outcome, call

CHECK_LOSSES = "train loop: values per step"
CHECK_WEIGHTS = "train loop: final weights"
CHECK_RUNS = "train loop: rewrite runs"

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
    piece = loader.slice_module(text, loops.REPLAY, path, frozenset(provided))
    appended.relocate(piece.tree, text)
    tree, conds = coverage.instrument(original, piece.tree, whole=source)
    return tree, coverage.BranchRecorder(conds, active=True)


def compare_runs(
    outcome: Outcome, want: Run, got: Run, names: list[str], rtol: float, atol: float
) -> None:
    """Record the loop checks: the rewrite runs, per-step values, final weights."""
    rtol, atol = rtol * 100, atol * 100
    runs = outcome.check(CHECK_RUNS)
    if got.error is not None:
        runs.fail(
            f"the rewritten loop raised {got.error.describe_error()} at step {len(got.steps) + 1} "
            f"(batch sizes {_sizes_text(want.batch_sizes)}); the original ran",
            got.error,
        )
        return
    runs.runs += 1
    if len(want.steps) != len(got.steps):
        runs.fail(f"the rewritten loop ran {len(got.steps)} steps, the original {len(want.steps)}")
        return
    values = outcome.check(CHECK_LOSSES)
    for i, (a, b) in enumerate(zip(want.steps, got.steps, strict=True), start=1):
        common = [n for n in names if n in a and n in b]
        diff = Difference()
        for name in common:
            diff.merge(compare(a[name], b[name], rtol, atol, f"`{name}` after step {i}"))
        values.add(diff, f"step {i}")
    weights = outcome.check(CHECK_WEIGHTS)
    for name in sorted(set(want.final) & set(got.final)):
        weights.add(
            compare(want.final[name], got.final[name], rtol, atol, f"weights of `{name}`"),
            "the last step",
        )
    if not weights.runs:
        weights.runs = 0


def _sizes_text(sizes: list[int]) -> str:
    return ", ".join(map(str, sizes)) or "unknown"


def verify_loop(
    outcome: Outcome,
    original_source: str,
    rewrite_source: str,
    original_site: tuple[str, int],
    rewrite_site: tuple[str, int],
    path: str,
    package: str | None,
    arguments: Callable[[], dict[str, Any]] | None,
    rtol: float,
    atol: float,
    step: str | None = None,
    harness_hint: str | None = None,
    rewrite_arguments: Callable[[], dict[str, Any]] | None = None,
) -> None:
    """Replay the loop before (eager) and after (as written) the rewrite and
    compare: value for value, or, when the original loop itself gives other
    values under another seed (dropout, random augmentation), by distribution
    over REPLAYS seeds per side. `rewrite_arguments` builds the rewrite's
    arguments when they come from its own module (a caller in the file)."""

    def run_original(seed: int, initial: dict | None = None) -> tuple[Run, list[str]]:
        return replay(
            original_source,
            *original_site,
            "original-loop",
            path,
            package,
            None,
            arguments,
            eager=True,
            initial=initial,
            step=step,
            seed=seed,
        )

    def run_rewrite(seed: int, initial: dict) -> tuple[Run, list[str]]:
        return replay(
            rewrite_source,
            *rewrite_site,
            "rewrite-loop",
            path,
            package,
            None,
            rewrite_arguments or arguments,
            eager=False,
            initial=initial,
            step=step,
            seed=seed,
        )

    def run_covered() -> Run:
        return replay(
            rewrite_source,
            *rewrite_site,
            "rewrite-loop-branches",
            path,
            package,
            None,
            rewrite_arguments or arguments,
            eager=True,
            initial=want.initial,
            step=step,
            covering=original_source,
        )[0]

    want, names_before = run_original(SEED)
    if want.error is not None and isinstance(want.error.error, caller_capture.CallerProblem):
        hint = harness_hint or "give the loop's function its arguments with a harness"
        outcome.unproven = f"{want.error.error}; {hint}"
        outcome.warnings.append(outcome.unproven)
        return
    if want.error is not None:
        where = (
            "building the loop's inputs from the script's own code"
            if want.error_in_setup
            else "running the original loop on the script's own data"
        )
        # An optional dependency the workers lack makes the result "needs package".
        project_imports.missing_package(want.error.error)
        hint = harness_hint or "give the loop its inputs with a harness"
        remedy = remedies.remedy(want.error.error, path)
        if remedy is not None:
            hint = f"{remedy}; or {hint}"
        line = want.error.user_line()
        at = f" at {line}" if line else ""
        outcome.unproven = f"{where} raised {want.error.describe_error()}{at}; {hint}"
        outcome.warnings.append(outcome.unproven)
        outcome.error_traceback = want.error.traceback()
        return
    if not want.steps:
        outcome.unproven = "the original loop ran no step on the script's data"
        outcome.warnings.append(outcome.unproven)
        return
    got, names_after = run_rewrite(SEED, want.initial)
    if got.error is not None and isinstance(got.error.error, caller_capture.CallerTimeout):
        # Slower on the rewrite's side only: nothing is known about the rewrite.
        outcome.unproven = f"for the rewrite, {got.error.error}"
        outcome.warnings.append(outcome.unproven)
        return
    names = [n for n in names_before if n in names_after]
    outcome.inputs = [
        f"{len(want.steps)} steps of the script's own loop, batch sizes "
        f"{_sizes_text(want.batch_sizes)}"
    ]
    exact = Outcome(outcome.function, outcome.mode)
    compare_runs(exact, want, got, names, rtol, atol)
    if got.error is None and any(not c.ok for c in exact.checks.values()):
        # Random steps, or a wrong rewrite? Another seed of the original tells.
        again, _ = run_original(SEED + 1, want.initial)
        if again.error is None and not same_run(want, again):
            originals = [want, again] + [
                run_original(SEED + k, want.initial)[0] for k in range(2, REPLAYS)
            ]
            rewrites = [got] + [run_rewrite(SEED + k, want.initial)[0] for k in range(1, REPLAYS)]
            outcome.stochastic = True
            outcome.inputs.append(
                f"the original loop is random (another seed gives other values): "
                f"{REPLAYS} replays per side with seeds {SEED}..{SEED + REPLAYS - 1}, "
                "compared by distribution"
            )
            compare_replays(outcome, originals, rewrites, names, rtol, atol)
            cover_branches(outcome, original_source, rewrite_source, run_covered)
            return
    outcome.checks.update(exact.checks)
    cover_branches(outcome, original_source, rewrite_source, run_covered)


REMEDY = "other data, or a harness whose batches reach it, must run it to prove it"


def cover_branches(
    outcome: Outcome, original_source: str, rewrite_source: str, run: Callable[[], Run]
) -> None:
    """Record which branches of the `tf.cond` calls the rewrite introduced
    the replayed batches take: `run` replays the rewritten loop once more,
    eagerly and instrumented (traced, both branches are traced whichever
    runs). A branch never taken leaves the loop not proven."""
    if any(not c.ok for c in outcome.checks.values()):
        return  # a mismatch already
    try:
        introduced = coverage.introduced_conds(original_source, ast.parse(rewrite_source))
    except SyntaxError:
        return
    if not introduced:
        return
    covered = run()
    recorder = covered.branches or coverage.BranchRecorder(sorted({c.lineno for c in introduced}))
    outcome.branches = recorder.summary()
    missing = recorder.never_taken("on the batches of the replayed loop", REMEDY)
    if missing and covered.error is not None:
        outcome.warnings.append(
            "replayed eagerly to see which branches its tf.cond calls take, the rewritten loop "
            f"raised {covered.error.describe_error()}"
        )
    outcome.warnings.extend(missing)


# --- random loops: compared by distribution over seeds -----------------------

REPLAYS = 4  # replays per side of a random loop (pooled t-test with 6 degrees of freedom)
ALPHA = 1e-3  # false-alarm rate of the whole comparison of one loop (Bonferroni)
ENTRIES = 2  # individual entries tested per quantity besides the mean of the varying ones
# Final weights also by their distance to the original's mean: a rewrite that
# trains on another loss moves the weights farther than another seed does.
# Measured on examples/eager_tutorial.py (dropout, input noise; 8 seed bases,
# `benchmarks` has the loop): distance ratio rewrite / original 0.73-0.75 for
# the correct rewrite (a rewrite replay shares its dropout masks with the
# original replay of the same seed, so it sits nearer), 10.0-10.4 when the step
# trains on shifted labels. A ratio above DISTANCE_RATIO that is also
# significant fails. On the same 8 seed bases the whole comparison passed the
# correct rewrite 8 times and failed a loss scaled by 1.05 (through the loss
# curve) and the shifted labels 8 times each.
DISTANCE_RATIO = 1.5


def same_run(a: Run, b: Run) -> bool:
    """Bit-for-bit the same recorded values and final weights."""
    if len(a.steps) != len(b.steps) or set(a.final) != set(b.final):
        return False
    for x, y in zip(a.steps, b.steps, strict=True):
        if x.keys() != y.keys() or not all(identical(x[k], y[k]) for k in x):
            return False
    return all(identical(a.final[k], b.final[k]) for k in a.final)


def _flat(value: Any) -> np.ndarray:
    """Every number of a recorded value, as one float64 vector."""
    value = to_numpy(value)
    if isinstance(value, list):
        parts = [_flat(v) for v in value]
        return np.concatenate(parts) if parts else np.zeros(0)
    if isinstance(value, dict):
        parts = [_flat(v) for v in value.values()]
        return np.concatenate(parts) if parts else np.zeros(0)
    if value.dtype.kind not in "biufc":
        return np.zeros(0)
    return value.astype(np.float64).reshape(-1)


@dataclass
class _Test:
    check: str
    label: str  # what was compared, for the message
    original: np.ndarray  # one statistic per original replay
    rewrite: np.ndarray  # the same statistic per rewrite replay
    one_sided: bool = False  # only a larger rewrite value fails (distances)


def compare_replays(
    outcome: Outcome,
    originals: list[Run],
    rewrites: list[Run],
    names: list[str],
    rtol: float,
    atol: float,
) -> None:
    """Compare a random loop's replays, several seeds per side.

    Per recorded value and step, and per model's final weights: entries that
    every seed of the original gives alike must match in every replay of the
    rewrite (within the train-step tolerance); entries that vary are compared
    by the mean of the varying entries and the ENTRIES entries that vary most,
    with a pooled t-test at the Bonferroni level ALPHA / (number of tests) and
    a gap above the tolerance; final weights also by their distance to the
    original's mean weights. An entry that varies with the seed in the
    original but never in the rewrite is randomness the rewrite froze."""
    rtol, atol = rtol * 100, atol * 100
    runs = outcome.check(CHECK_RUNS)
    for r in rewrites:
        if r.error is not None:
            runs.fail(f"the rewritten loop raised {r.error.describe_error()} under another seed")
            return
    runs.runs += len(rewrites)
    if any(len(r.steps) != len(originals[0].steps) for r in originals + rewrites):
        runs.fail("the rewritten loop ran another number of steps than the original")
        return
    tests: list[_Test] = []
    quantities: list[tuple[str, str, list[Any], list[Any]]] = []
    for i in range(len(originals[0].steps)):
        for name in names:
            if all(name in r.steps[i] for r in originals + rewrites):
                quantities.append(
                    (
                        CHECK_LOSSES,
                        f"`{name}` after step {i + 1}",
                        [r.steps[i][name] for r in originals],
                        [r.steps[i][name] for r in rewrites],
                    )
                )
    models = sorted(set.intersection(*(set(r.final) for r in originals + rewrites)))
    for name in models:
        quantities.append(
            (
                CHECK_WEIGHTS,
                f"weights of `{name}`",
                [r.final[name] for r in originals],
                [r.final[name] for r in rewrites],
            )
        )
    for check_name, label, want, got in quantities:
        check = outcome.check(check_name)
        kind = Difference()
        for value in got:
            kind.merge(same_kind(want[0], value, label))
        if not kind.ok:
            check.add(kind, "every seed")
            continue
        a = np.stack([_flat(v) for v in want])
        b = np.stack([_flat(v) for v in got])
        tolerance = atol + rtol * np.abs(a[0])
        # Entries the same under every seed on each side (the batches, a
        # frozen counter) are compared value for value; the others by
        # distribution (an accuracy over 512 examples may by chance not move
        # under four seeds of one side, and move under the other's).
        fixed = (a.max(axis=0) == a.min(axis=0)) & (b.max(axis=0) == b.min(axis=0))
        check.add(_fixed_entries(a, b, fixed, tolerance, label), "every seed")
        varying = np.flatnonzero(~fixed)
        if not varying.size:
            continue
        tests.append(
            _Test(
                check_name,
                f"{label}: mean of the entries that vary",
                a[:, varying].mean(1),
                b[:, varying].mean(1),
            )
        )
        spread = np.vstack([a, b])[:, varying].std(axis=0)
        for j in varying[np.argsort(-spread)[:ENTRIES]]:
            tests.append(_Test(check_name, f"{label}: entry {int(j)}", a[:, j], b[:, j]))
        if check_name == CHECK_WEIGHTS and len(want) > 2:
            tests.append(_distance_test(a, b, label))
    level = ALPHA / max(1, len(tests))
    for test in tests:
        outcome.check(test.check).add(
            _judge(test, level, rtol, atol), f"seeds {SEED}..{SEED + len(test.original) - 1}"
        )


def _fixed_entries(
    a: np.ndarray, b: np.ndarray, fixed: np.ndarray, tolerance: np.ndarray, label: str
) -> Difference:
    """Entries every seed of the original gives alike: exact in every rewrite replay."""
    if not fixed.any():
        return Difference()
    err = np.abs(b[:, fixed] - a[0, fixed])
    err = np.where(np.isnan(err) & np.isnan(b[:, fixed]) & np.isnan(a[0, fixed]), 0.0, err)
    err = np.where(np.isnan(err), np.inf, err)
    max_abs = float(err.max())
    bad = err > tolerance[fixed]
    if not bad.any():
        return Difference(True, max_abs)
    row, j = np.unravel_index(int(np.argmax(bad)), bad.shape)
    entry = int(np.flatnonzero(fixed)[j])
    return Difference(
        False,
        max_abs,
        detail=f"{label}: entry {entry} is {b[row, entry]:.6g} under every seed of the "
        f"rewrite, {a[0, entry]:.6g} under every seed of the original",
    )


def _distance_test(a: np.ndarray, b: np.ndarray, label: str) -> _Test:
    """Distances to the mean of the original replays but the first: each
    original replay's own left out, so both sides are measured alike."""
    n = a.shape[0]
    own = [
        float(np.linalg.norm(a[r] - np.delete(a, [0, r] if r else [0], axis=0).mean(0)))
        for r in range(1, n)
    ]
    reference = a[1:].mean(axis=0)
    theirs = [float(np.linalg.norm(row - reference)) for row in b]
    return _Test(
        CHECK_WEIGHTS,
        f"{label}: distance to the original's mean weights",
        np.array(own),
        np.array(theirs),
        one_sided=True,
    )


def _judge(test: _Test, level: float, rtol: float, atol: float) -> Difference:
    a, b = test.original, test.rewrite
    gap = float(b.mean() - a.mean())
    scale = abs(float(a.mean()))
    rel = abs(gap) / scale if scale else 0.0
    # Frozen: every seed gives the original another value (a continuous
    # quantity; an accuracy over a batch may repeat by chance), and the
    # rewrite one value under every seed.
    continuous = np.unique(a).size == a.size
    if continuous and a.std() > atol + rtol * scale and b.std() == 0 and not test.one_sided:
        return Difference(
            False,
            abs(gap),
            rel,
            f"{test.label}: {b[0]:.6g} under every seed in the rewrite, while the original "
            f"varies ({a.min():.6g} to {a.max():.6g}): the rewrite froze a random value",
        )
    p = stats.pooled_t_p(a, b)
    if test.one_sided:
        significant = gap > 0 and p / 2 < level and b.mean() > DISTANCE_RATIO * a.mean()
    else:
        significant = p < level and abs(gap) > atol + rtol * scale
    if not significant:
        return Difference(True, abs(gap), rel)
    return Difference(
        False,
        abs(gap),
        rel,
        f"{test.label}: {b.mean():.6g} on average over the rewrite's seeds, "
        f"{a.mean():.6g} over the original's (spread {a.std(ddof=1):.3g} and "
        f"{b.std(ddof=1):.3g}; t-test p = {p:.2g} < {level:.2g})",
    )
