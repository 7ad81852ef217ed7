"""The verification checks, run inside a worker process (TensorFlow imported).

For one function, given the original module source and optionally its
rewrite:

* **equivalence** — the original run eagerly is the reference. The rewrite is
  run eagerly, traced, and traced with `autograph=False` (proof that it no
  longer needs AutoGraph), on every input of the proof set; values, shapes,
  dtypes and gradients with respect to float inputs must agree within
  `atol + rtol*|expected|`.
* **coverage** — every `tf.cond` the rewrite introduced must take both
  branches on some input of the proof set; inputs are searched (range ends,
  scaling, shifting, sign flips, fresh draws) until they do. Uncovered is
  "not proven".
* **randomness** — a function whose eager original returns different values on
  identical inputs is stochastic. Then values are not compared; instead two
  traced calls must differ (a frozen sample is the hazard), shapes and dtypes
  must match, and over `samples` calls the moments must agree: with per-call
  means m_i, |mean_o - mean_r| <= 5 * sqrt(var_o/n + var_r/n) + atol (a
  two-sample z-test at 5 standard errors), and the ratio of the standard
  deviations of all sampled values must lie in [0.75, 1.33].
* **printing** — when the eager original prints, every traced call (not only
  the first) must print the same numbers.
* **divergence of the original** — the original traced against itself eager,
  and, for each module-level constant it reads, traced again after changing
  the constant (the flag frozen at trace time).
* **XLA** — `jit_compile=True`; failure to compile is a warning.
* **train steps** — with a configured harness (`harness.py`), k steps eagerly
  against k steps traced from the same initial weights.
"""

from __future__ import annotations

import ast
import contextlib
import math
import os
import random
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import tensorflow as tf

from tfrewrite.verify import capture, coverage, inputs, loader
from tfrewrite.verify.compare import Difference, compare, describe, float_values, identical

CHECK_EAGER = "rewrite eager"
CHECK_TRACED = "rewrite traced"
CHECK_NO_AUTOGRAPH = "rewrite traced, autograph=False"
CHECK_GRADIENTS = "gradients"
CHECK_EAGER_SHAPE = "rewrite eager: shape, dtype"
CHECK_TRACED_SHAPE = "rewrite traced: shape, dtype"
CHECK_ORIGINAL_TRACED = "original traced vs eager"
CHECK_ORIGINAL_PRINTS = "original prints every call"
CHECK_ORIGINAL_GLOBALS = "original reads module flags per call"
CHECK_FRESH = "fresh random samples"
CHECK_MOMENTS = "random moments"
CHECK_PRINTS = "prints every call"
CHECK_GLOBALS = "module values read per call"


SEED = 1234


@dataclass
class Options:
    rtol: float = 1e-5
    atol: float = 1e-6
    samples: int = 200  # calls per side for the moment test
    search: int = 64  # candidate inputs tried for branch coverage
    draws: int = 3  # random base inputs
    xla: bool = True

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Options:
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})


@dataclass
class Check:
    name: str
    ok: bool = True
    max_abs: float = 0.0
    max_rel: float = 0.0
    detail: str = ""
    runs: int = 0
    traceback: str | None = None  # of the first failure, when it raised

    def add(self, diff: Difference, label: str) -> None:
        self.runs += 1
        self.max_abs = max(self.max_abs, diff.max_abs)
        self.max_rel = max(self.max_rel, diff.max_rel)
        if self.ok and not diff.ok:
            self.ok, self.detail = False, f"on {label}: {diff.detail}"

    def fail(self, detail: str, call: Call | None = None) -> None:
        self.runs += 1
        if self.ok:
            self.ok, self.detail = False, detail
            if call is not None and call.failed:
                self.traceback = call.traceback()

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "ok": self.ok,
            "max_abs": _finite(self.max_abs),
            "max_rel": _finite(self.max_rel),
            "detail": self.detail,
            "runs": self.runs,
            "traceback": self.traceback,
        }


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


@dataclass
class Outcome:
    """Everything verification found for one function."""

    function: str
    mode: str  # "rewrite" or "original"
    checks: dict[str, Check] = field(default_factory=dict)
    branches: list[dict] = field(default_factory=list)
    divergences: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    inputs: list[str] = field(default_factory=list)
    error: str | None = None
    unproven: str | None = None  # why nothing could be compared
    error_traceback: str | None = None
    stochastic: bool = False
    prints: bool = False

    def check(self, name: str) -> Check:
        return self.checks.setdefault(name, Check(name))

    @property
    def verdict(self) -> str:
        if self.error:
            return "error"
        if self.unproven:
            return "not proven"
        if self.mode == "original":
            return "diverges" if self.divergences else "consistent"
        if any(not c.ok for c in self.checks.values()):
            return "mismatch"
        if any(not (b["true"] and b["false"]) for b in self.branches) or not self.checks:
            return "not proven"
        return "equivalent"

    def to_json(self) -> dict[str, Any]:
        return {
            "function": self.function,
            "mode": self.mode,
            "verdict": self.verdict,
            "checks": [c.to_json() for c in self.checks.values()],
            "branches": self.branches,
            "divergences": self.divergences,
            "warnings": self.warnings,
            "inputs": self.inputs,
            "error": self.error,
            "traceback": self.error_traceback,
            "stochastic": self.stochastic,
            "prints": self.prints,
        }


# --- running user code -------------------------------------------------------


@contextlib.contextmanager
def _eagerly() -> Iterator[None]:
    previous = tf.config.functions_run_eagerly()
    tf.config.run_functions_eagerly(True)
    try:
        yield
    finally:
        tf.config.run_functions_eagerly(previous)


def _tensors(args: dict[str, Any]) -> dict[str, Any]:
    return {k: tf.constant(v) if isinstance(v, np.ndarray) else v for k, v in args.items()}


@dataclass
class Call:
    value: Any = None
    error: BaseException | None = None
    printed: str = ""

    @property
    def failed(self) -> bool:
        return self.error is not None

    def describe_error(self) -> str:
        assert self.error is not None
        lines = [line.strip() for line in str(self.error).strip().splitlines() if line.strip()]
        if lines and lines[0] == "in user code:":
            # AutoGraph's wrapper: the user's exception is the last line.
            return lines[-1][:300]
        return f"{type(self.error).__name__}: {(lines[0] if lines else '')[:300]}"

    def traceback(self) -> str:
        """The traceback without tfrewrite's, TensorFlow's and AutoGraph's own frames."""
        assert self.error is not None
        summary = traceback.TracebackException.from_exception(self.error)
        summary.stack = traceback.StackSummary.from_list(
            [f for f in summary.stack if not _internal_frame(f.filename)]
        )
        return "".join(summary.format())[-2500:]


_HERE = os.path.dirname(os.path.abspath(__file__))


def _internal_frame(filename: str) -> bool:
    return (
        filename.startswith(_HERE)
        or f"{os.sep}tensorflow{os.sep}" in filename
        or f"{os.sep}keras{os.sep}" in filename
        or "__autograph_generated" in filename
    )


def _call(fn: Callable, args: dict[str, Any], eager: bool = False) -> Call:
    """Call `fn` on fresh tensors, capturing what it prints and what it raises."""
    result = Call()
    with capture.capture_fds() as out:
        try:
            if eager:
                with _eagerly():
                    result.value = fn(**_tensors(args))
            else:
                result.value = fn(**_tensors(args))
        except (Exception, SystemExit) as err:  # user code: any exception is a result
            result.error = err
    result.printed = out.text
    return result


def _float_args(args: dict[str, Any]) -> list[str]:
    return [k for k, v in args.items() if isinstance(v, np.ndarray) and v.dtype.kind == "f"]


def _total(value: Any) -> tf.Tensor:
    parts = [
        tf.reduce_sum(tf.cast(t, tf.float64))
        for t in tf.nest.flatten(value)
        if tf.is_tensor(t) and t.dtype.is_floating
    ]
    return tf.add_n(parts) if parts else tf.constant(0.0, tf.float64)


def _gradient_fn(fn: Callable, names: list[str]) -> Callable:
    def gradients(**kwargs: Any) -> list[tf.Tensor]:
        watched = [kwargs[n] for n in names]
        with tf.GradientTape() as tape:
            for t in watched:
                tape.watch(t)
            total = _total(fn(**kwargs))
        return tape.gradient(total, watched, unconnected_gradients=tf.UnconnectedGradients.ZERO)

    return gradients


def _has_float_output(value: Any) -> bool:
    return any(tf.is_tensor(t) and t.dtype.is_floating for t in tf.nest.flatten(value))


# --- the verification of one function ----------------------------------------


@dataclass
class Request:
    qualname: str
    original_source: str
    rewrite_source: str | None
    path: str = "<source>"
    package: str | None = None
    specs: dict[str, Any] = field(default_factory=dict)  # param -> spec JSON
    config_key: str | None = None  # "module:function", for messages
    harness: str | None = None  # "module:build" for a train step
    options: Options = field(default_factory=Options)


class Verifier:
    def __init__(self, request: Request) -> None:
        self.request = request
        self.options = request.options
        self.outcome = Outcome(
            request.qualname, "rewrite" if request.rewrite_source is not None else "original"
        )
        self.frozen_in_original: set[str] = set()

    # Loading ---------------------------------------------------------------

    def _load(self) -> None:
        r = self.request
        self.original = loader.load_function(
            r.original_source, r.qualname, "original", r.path, r.package
        )
        configured = {k: inputs.spec_from_json(v) for k, v in r.specs.items()}
        if r.harness is None:
            self.specs = inputs.specs_for(self.original.python_function, configured)
        self.rewrite = None
        self.recorder = None
        self.instrumented = None
        if r.rewrite_source is not None:
            self.rewrite = loader.load_function(
                r.rewrite_source, r.qualname, "rewrite", r.path, r.package
            )
            piece = loader.slice_module(r.rewrite_source, r.qualname, r.path)
            tree, conds = coverage.instrument(r.original_source, piece.tree)
            if conds:
                self.recorder = coverage.BranchRecorder(conds)
                self.instrumented = loader.load_function(
                    r.rewrite_source,
                    r.qualname,
                    "rewrite-coverage",
                    r.path,
                    r.package,
                    tree=tree,
                    extra_globals={coverage.RECORDER_NAME: self.recorder},
                )

    def run(self) -> Outcome:
        try:
            self._load()
        except (Exception, SystemExit):
            self.outcome.error = "cannot load the function:\n" + traceback.format_exc(limit=6)
            return self.outcome
        try:
            self._run()
        except (Exception, SystemExit):
            self.outcome.error = traceback.format_exc(limit=8)
        return self.outcome

    def _run(self) -> None:
        # User code loaded earlier in this worker (a harness importing a
        # script) may have left `run_functions_eagerly(True)` on: every
        # "traced" run would then be eager. Each function starts from graphs.
        tf.config.run_functions_eagerly(False)
        # Reproducible runs: the same draws and the same random streams every time.
        random.seed(SEED)
        np.random.seed(SEED)
        tf.random.set_seed(SEED)
        if self.request.harness is not None:
            self._train_steps(self.request.harness)
            return
        base = [
            (f"random draw (seed {seed})", inputs.draw(self.specs, seed))
            for seed in range(self.options.draws)
        ]
        reference = _call(self.original.python_function, base[0][1], eager=True)
        if reference.failed:
            # Not an error of the environment: the synthesised inputs do not fit the function.
            self.outcome.unproven = (
                f"the original raised {reference.describe_error()} on the synthesised inputs "
                f"({self._spec_text()}); give its inputs in [tool.tfrewrite.verify] "
                f'inputs."{self.request.config_key or self.request.qualname}"'
            )
            self.outcome.warnings.append(self.outcome.unproven)
            self.outcome.error_traceback = reference.traceback()
            return
        again = _call(self.original.python_function, base[0][1], eager=True)
        self.outcome.stochastic = not again.failed and not identical(reference.value, again.value)
        self.outcome.prints = bool(reference.printed.strip())
        proof = self._proof_set(base)
        self.outcome.inputs = [label for label, _ in proof]
        self._original_divergence(proof)
        if self.rewrite is not None:
            if self.outcome.stochastic:
                self._stochastic_checks(proof)
            else:
                self._deterministic_checks(proof)
            if self.outcome.prints:
                self._print_checks(self.rewrite.python_function, proof[0], CHECK_PRINTS)
            self._global_checks(proof[0])
        if self.options.xla:
            self._xla(proof[0])

    def _train_steps(self, builder_spec: str) -> None:
        """A train step: k steps of the original eagerly against k steps of
        the rewrite (or, alone, of the original) traced, from the same weights."""
        from tfrewrite.verify import harness

        builder = harness.load_builder(builder_spec)
        subject = self.rewrite if self.rewrite is not None else self.original
        results = harness.compare_training(
            builder, self.original, subject, self.options.rtol, self.options.atol, _eagerly
        )
        self.outcome.inputs = [f"batches from {builder_spec}"]
        for name, diff in results.items():
            if self.rewrite is None and not diff.ok:
                self.outcome.divergences.append(
                    f"traced train steps differ from eager: {diff.detail}"
                )
            self.outcome.check(name).add(diff, f"the harness batches ({builder_spec})")

    def _spec_text(self) -> str:
        return ", ".join(f"{k} = {v}" for k, v in self.specs.items())

    # Inputs and coverage ------------------------------------------------------

    def _proof_set(
        self, base: list[tuple[str, dict[str, Any]]]
    ) -> list[tuple[str, dict[str, Any]]]:
        """The base draws plus inputs that take branches the draws did not."""
        proof = list(base)
        if self.recorder is None or self.instrumented is None:
            return proof
        fn = self.instrumented.python_function

        def taken(args: dict[str, Any]) -> set[tuple[int, bool]]:
            self.recorder.taken = {}
            self.recorder.active = True
            try:
                _call(fn, args, eager=True)
            finally:
                self.recorder.active = False
            return {
                (line, which) for line, whiches in self.recorder.taken.items() for which in whiches
            }

        covered: set[tuple[int, bool]] = set()
        for _, args in base:
            covered |= taken(args)
        wanted = {(line, which) for line in self.recorder.conds for which in (True, False)}
        tried = 0
        for label, args in inputs.variants(base[0][1], self.specs):
            if covered >= wanted or tried >= self.options.search:
                break
            tried += 1
            new = taken(args) - covered
            if new and not _call(self.original.python_function, args, eager=True).failed:
                covered |= new
                proof.append((label, args))
        self.recorder.taken = {}
        for line, which in covered:
            self.recorder.taken.setdefault(line, set()).add(which)
        self.outcome.branches = self.recorder.summary()
        return proof

    # Rewrite checks ------------------------------------------------------------

    def _deterministic_checks(self, proof: list[tuple[str, dict[str, Any]]]) -> None:
        rtol, atol = self.options.rtol, self.options.atol
        original = self.original.python_function
        rewrite = self.rewrite.python_function
        variants = {
            CHECK_EAGER: (rewrite, True),
            CHECK_TRACED: (tf.function(rewrite), False),
            CHECK_NO_AUTOGRAPH: (tf.function(rewrite, autograph=False), False),
        }
        grads_original = None
        grads_rewrite = None
        for label, args in proof:
            expected = _call(original, args, eager=True)
            for name, (fn, eager) in variants.items():
                check = self.outcome.check(name)
                got = _call(fn, args, eager=eager)
                if expected.failed:
                    if not got.failed or type(got.error) is not type(expected.error):
                        check.fail(
                            f"on {label}: the original raised {expected.describe_error()}, "
                            "the rewrite "
                            + (f"raised {got.describe_error()}" if got.failed else "did not")
                        )
                    else:
                        check.runs += 1
                elif got.failed:
                    hint = (
                        " (the rewrite still needs AutoGraph)"
                        if "OperatorNotAllowedInGraph" in type(got.error).__name__
                        else ""
                    )
                    check.fail(f"on {label}: raised {got.describe_error()}{hint}", got)
                else:
                    check.add(compare(expected.value, got.value, rtol, atol), label)
            names = _float_args(args)
            if expected.failed or not names or not _has_float_output(expected.value):
                continue
            if grads_original is None:
                grads_original = _gradient_fn(original, names)
                grads_rewrite = tf.function(_gradient_fn(rewrite, names))
            check = self.outcome.check(CHECK_GRADIENTS)
            want = _call(grads_original, args, eager=True)
            got = _call(grads_rewrite, args)
            if want.failed:
                continue  # not differentiable eagerly: nothing to compare
            if got.failed:
                check.fail(f"on {label}: gradient raised {got.describe_error()}", got)
            else:
                check.add(
                    compare(
                        want.value, got.value, rtol * 10, atol * 10, "d/d(" + ", ".join(names) + ")"
                    ),
                    label,
                )

    def _stochastic_checks(self, proof: list[tuple[str, dict[str, Any]]]) -> None:
        original = self.original.python_function
        rewrite = self.rewrite.python_function
        traced = tf.function(rewrite)
        label, args = proof[0]
        for name, fn, eager in (
            (CHECK_EAGER_SHAPE, rewrite, True),
            (CHECK_TRACED_SHAPE, traced, False),
        ):
            check = self.outcome.check(name)
            expected = _call(original, args, eager=True)
            got = _call(fn, args, eager=eager)
            if got.failed:
                check.fail(f"on {label}: raised {got.describe_error()}", got)
                continue
            diff = compare(
                expected.value, got.value, math.inf, math.inf
            )  # shape, dtype, structure only
            check.add(Difference(diff.ok, detail=diff.detail), label)
        fresh = self.outcome.check(CHECK_FRESH)
        first, second = _call(traced, args), _call(traced, args)
        if first.failed or second.failed:
            fresh.fail(f"on {label}: raised {(first if first.failed else second).describe_error()}")
        elif identical(first.value, second.value):
            fresh.fail(
                "frozen random value: two traced calls returned the same sample "
                f"({describe(first.value)}), the original samples anew on every call"
            )
        else:
            fresh.runs += 1
        self._moments(original, traced, args, label)

    def _moments(
        self, original: Callable, traced: Callable, args: dict[str, Any], label: str
    ) -> None:
        check = self.outcome.check(CHECK_MOMENTS)
        n = self.options.samples
        sides = []
        for fn, eager in ((original, True), (traced, False)):
            means, values = [], []
            for _ in range(n):
                call = _call(fn, args, eager=eager)
                if call.failed:
                    check.fail(f"on {label}: raised {call.describe_error()}")
                    return
                flat = float_values(call.value)
                means.append(flat.mean() if flat.size else 0.0)
                values.append(flat)
            sides.append((np.asarray(means), np.concatenate(values)))
        (m_o, v_o), (m_r, v_r) = sides
        check.runs += 2 * n
        bound = 5 * math.sqrt(m_o.var(ddof=1) / n + m_r.var(ddof=1) / n) + self.options.atol
        gap = abs(m_o.mean() - m_r.mean())
        check.max_abs = gap
        check.max_rel = gap / max(abs(m_o.mean()), 1e-30)
        std_o, std_r = v_o.std(), v_r.std()
        if gap > bound:
            check.ok = False
            check.detail = (
                f"mean over {n} calls {m_r.mean():.6g}, original {m_o.mean():.6g} "
                f"(|difference| {gap:.3g} > 5 standard errors = {bound:.3g})"
            )
        elif std_o > 0 and not 0.75 <= std_r / std_o <= 1.33:
            check.ok = False
            check.detail = (
                f"standard deviation over {n} calls {std_r:.6g}, original {std_o:.6g} "
                "(ratio outside [0.75, 1.33])"
            )

    def _print_checks(
        self,
        python_fn: Callable,
        case: tuple[str, dict[str, Any]],
        name: str,
        original_side: bool = False,
    ) -> str | None:
        """Each of three traced calls must print what one eager call of the
        original prints. Returns the failure (or None)."""
        label, args = case
        expected = _call(self.original.python_function, args, eager=True)
        traced = tf.function(python_fn)
        calls = [_call(traced, args) for _ in range(3)]
        check = None if original_side else self.outcome.check(name)
        problem = None
        if any(c.failed for c in calls):
            problem = f"raised {next(c for c in calls if c.failed).describe_error()}"
        elif not calls[1].printed.strip():
            problem = (
                "print fires once, at trace time: the second traced call printed nothing, "
                f"the original prints {expected.printed.strip()[:80]!r} on every call"
            )
        elif not self.outcome.stochastic:
            for i, c in enumerate(calls, start=1):
                ok, why = capture.same_numbers(
                    expected.printed, c.printed, self.options.rtol * 10, self.options.atol * 10
                )
                if not ok:
                    problem = (
                        f"traced call {i} printed {c.printed.strip()[:80]!r}, the original "
                        f"printed {expected.printed.strip()[:80]!r}: {why}"
                    )
                    break
        else:
            counts = {len(capture.numbers(c.printed)) for c in calls[1:]}
            if counts != {len(capture.numbers(expected.printed))}:
                problem = "traced calls print a different number of values than the original"
        if check is not None:
            if problem:
                check.fail(f"on {label}: {problem}")
            else:
                check.runs += 3
        return problem

    # Divergence in the original ------------------------------------------------

    def _original_divergence(self, proof: list[tuple[str, dict[str, Any]]]) -> None:
        before = len(self.outcome.divergences)
        self._original_traced(proof)
        if self.outcome.mode == "original":
            self._record(CHECK_ORIGINAL_TRACED, self.outcome.divergences[before:], len(proof))
        if self.outcome.prints:
            before = len(self.outcome.divergences)
            problem = self._print_checks(
                self.original.python_function, proof[0], "", original_side=True
            )
            if problem:
                self.outcome.divergences.append(f"printing: {problem}")
            if self.outcome.mode == "original":
                self._record(CHECK_ORIGINAL_PRINTS, self.outcome.divergences[before:], 3)
        if not self.outcome.stochastic and self.original.slice.flags:
            before = len(self.outcome.divergences)
            for name, message in self._frozen_globals(
                self.original, self.original.python_function, proof[0], original_side=True
            ):
                self.frozen_in_original.add(name)
                self.outcome.divergences.append(message)
            if self.outcome.mode == "original":
                self._record(
                    CHECK_ORIGINAL_GLOBALS,
                    self.outcome.divergences[before:],
                    len(self.original.slice.flags),
                )

    def _record(self, name: str, problems: list[str], runs: int) -> None:
        """In original-only mode the table lists the divergence checks too."""
        check = self.outcome.check(name)
        check.runs = runs
        if problems:
            check.ok, check.detail = False, problems[0]

    def _original_traced(self, proof: list[tuple[str, dict[str, Any]]]) -> None:
        original = self.original.python_function
        traced = tf.function(original)
        rtol, atol = self.options.rtol, self.options.atol
        if self.outcome.stochastic:
            label, args = proof[0]
            a, b = _call(traced, args), _call(traced, args)
            if a.failed:
                self.outcome.divergences.append(
                    f"traced, the original raises {a.describe_error()} on {label}; eagerly it runs"
                )
            elif identical(a.value, b.value):
                self.outcome.divergences.append(
                    "random value frozen at trace time: two traced calls both return "
                    f"{describe(a.value)}, "
                    "eagerly every call samples anew"
                )
        else:
            for label, args in proof:
                eager = _call(original, args, eager=True)
                got = _call(traced, args)
                if eager.failed:
                    continue
                if got.failed:
                    self.outcome.divergences.append(
                        f"traced, the original raises {got.describe_error()} on {label}; "
                        "eagerly it runs"
                    )
                    break
                diff = compare(eager.value, got.value, rtol, atol)
                if not diff.ok:
                    self.outcome.divergences.append(
                        f"traced differs from eager on {label}: {diff.detail}"
                    )
                    break

    def _alternatives(self, value: object, piece: loader.ModuleSlice) -> list[object]:
        if isinstance(value, bool):
            return [not value]
        if isinstance(value, int):
            return [value + 1, 0 if value else 1]
        if isinstance(value, float):
            return [value * 2 + 1.0, -value]
        if isinstance(value, str):
            strings = sorted(
                {
                    n.value
                    for n in ast.walk(piece.tree)
                    if isinstance(n, ast.Constant)
                    and isinstance(n.value, str)
                    and n.value != value
                    and len(n.value) < 40
                }
            )
            return strings[:4]
        return []

    def _frozen_globals(
        self,
        loaded: loader.LoadedFunction,
        python_fn: Callable,
        case: tuple[str, dict[str, Any]],
        original_side: bool,
    ) -> Iterator[tuple[str, str]]:
        """Change each module-level constant after tracing: a traced function
        that keeps the trace-time value has frozen it."""
        label, args = case
        rtol, atol = self.options.rtol, self.options.atol
        for name, value in self.original.slice.flags.items():
            if name not in loaded.module.__dict__ or loaded.module.__dict__[name] != value:
                continue
            for new in self._alternatives(value, self.original.slice):
                traced = tf.function(python_fn)
                if _call(traced, args).failed:
                    break
                self.original.module.__dict__[name] = new
                loaded.module.__dict__[name] = new
                try:
                    eager = _call(self.original.python_function, args, eager=True)
                    got = _call(traced, args)
                finally:
                    self.original.module.__dict__[name] = value
                    loaded.module.__dict__[name] = value
                eager_old = _call(self.original.python_function, args, eager=True)
                if eager.failed or got.failed or eager_old.failed:
                    continue
                if compare(eager_old.value, eager.value, rtol, atol).ok:
                    continue  # this value does not change the result on this input
                diff = compare(eager.value, got.value, rtol, atol)
                if not diff.ok:
                    who = "the original" if original_side else "the rewrite"
                    yield (
                        name,
                        (
                            f"`{name}` froze at its trace-time value {value!r} in {who}: "
                            f"after setting {name} = {new!r}, eager gives "
                            f"{describe(eager.value)}, traced still gives "
                            f"{describe(got.value)}"
                        ),
                    )
                break

    def _global_checks(self, case: tuple[str, dict[str, Any]]) -> None:
        if self.outcome.stochastic or not self.original.slice.flags:
            return
        check = self.outcome.check(CHECK_GLOBALS)
        for name, problem in self._frozen_globals(
            self.rewrite, self.rewrite.python_function, case, original_side=False
        ):
            if name in self.frozen_in_original:
                self.outcome.warnings.append(
                    f"the rewrite still freezes `{name}` at trace time, as the original does"
                )
            else:
                check.fail(problem)
        if check.ok:
            check.runs += 1

    # XLA ----------------------------------------------------------------------

    def _xla(self, case: tuple[str, dict[str, Any]]) -> None:
        label, args = case
        subject = self.rewrite if self.rewrite is not None else self.original
        who = "the rewrite" if self.rewrite is not None else "the function"
        if any(not c.ok for c in self.outcome.checks.values()):
            return  # already failing without XLA: reported by the other checks
        got = _call(tf.function(subject.python_function, jit_compile=True), args)
        if got.failed:
            text = str(got.error)
            op = next(
                (w for w in ("StringFormat", "PrintV2", "PyFunc", "EagerPyFunc") if w in text), None
            )
            reason = f"unsupported op {op}" if op else got.describe_error()
            self.outcome.warnings.append(
                f"{who} cannot be compiled with XLA (jit_compile=True): {reason}; Keras compiles "
                'fit with XLA by default on GPUs (jit_compile="auto")'
            )


def verify(request: Request) -> dict[str, Any]:
    """Run every check for one function; the result as JSON-ready data."""
    started = time.perf_counter()
    outcome = Verifier(request).run()
    data = outcome.to_json()
    data["seconds"] = round(time.perf_counter() - started, 3)
    return data
