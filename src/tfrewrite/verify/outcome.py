"""What verification found for one function, and how user code is called.

`Outcome` holds the checks and turns them into a verdict; `call` runs a user
function on fresh tensors, capturing what it prints and what it raises (an
exception from user code is a result, not a crash of the worker).
"""

from __future__ import annotations

import contextlib
import math
import os
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import tensorflow as tf

from tfrewrite.verify import capture, project_imports
from tfrewrite.verify.compare import Difference

SEED = 1234


@dataclass
class Options:
    rtol: float = 1e-5
    atol: float = 1e-6
    samples: int = 1000  # calls per side for the distribution tests
    search: int = 64  # candidate inputs tried for branch coverage
    draws: int = 3  # random base inputs
    xla: bool = True
    caller_seconds: float = 30.0  # building arguments by running a caller (see `caller_capture`)
    # Where the project asks TFR103's `tf.print` of a `print` without `file=`
    # to write (`print-output-stream`): "stderr" makes the original's
    # standard output expected on standard error.
    print_output_stream: str = "stdout"

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
    # The code imports a package the workers' Python lacks (said with the
    # package and who imports it): the environment's gap, not the rewrite's.
    needs_package: str | None = None
    error_traceback: str | None = None
    stochastic: bool = False
    prints: bool = False
    # The source of the harness verify wrote and ran for a train step
    # nothing in the project runs (`stand_ins`): the user's to keep.
    generated_harness: str | None = None

    def check(self, name: str) -> Check:
        return self.checks.setdefault(name, Check(name))

    @property
    def verdict(self) -> str:
        if self.needs_package:
            return "needs package"
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
            "unproven": self.unproven,
            "needs_package": self.needs_package,
            "traceback": self.error_traceback,
            "stochastic": self.stochastic,
            "prints": self.prints,
            "generated_harness": self.generated_harness,
        }


@contextlib.contextmanager
def eagerly() -> Iterator[None]:
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
    # What the call wrote to standard output and to standard error, apart:
    # a print that moved from one to the other is a difference.
    printed: capture.Printed = field(default_factory=capture.Printed)

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

    def user_line(self) -> str | None:
        """Where in the user's code the error was raised (`train.py, line 12`)."""
        assert self.error is not None
        return project_imports.user_line(self.error)

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


def call(fn: Callable, args: dict[str, Any], eager: bool = False) -> Call:
    """Call `fn` on fresh tensors, capturing what it prints and what it raises."""
    result = Call()
    with capture.capture_fds() as out:
        try:
            if eager:
                with eagerly():
                    result.value = fn(**_tensors(args))
            else:
                result.value = fn(**_tensors(args))
        except (Exception, SystemExit) as err:  # user code: any exception is a result
            result.error = err
    result.printed = capture.Printed(out.stdout, out.stderr)
    return result


def float_args(args: dict[str, Any]) -> list[str]:
    return [k for k, v in args.items() if isinstance(v, np.ndarray) and v.dtype.kind == "f"]


def total_of(value: Any) -> tf.Tensor:
    """The sum of a result's float tensors in float64: the scalar gradients and
    finite differences are taken of."""
    parts = [
        tf.reduce_sum(tf.cast(t, tf.float64))
        for t in tf.nest.flatten(value)
        if tf.is_tensor(t) and t.dtype.is_floating
    ]
    return tf.add_n(parts) if parts else tf.constant(0.0, tf.float64)


def gradient_fn(fn: Callable, names: list[str]) -> Callable:
    def gradients(**kwargs: Any) -> list[tf.Tensor]:
        watched = [kwargs[n] for n in names]
        with tf.GradientTape() as tape:
            for t in watched:
                tape.watch(t)
            total = total_of(fn(**kwargs))
        return tape.gradient(total, watched, unconnected_gradients=tf.UnconnectedGradients.ZERO)

    return gradients


def has_float_output(value: Any) -> bool:
    return any(tf.is_tensor(t) and t.dtype.is_floating for t in tf.nest.flatten(value))


def decorator_options(fn: Any) -> dict[str, Any]:
    """The options of a `tf.function` object (`input_signature`,
    `reduce_retracing`, `jit_compile`), so the rewrite is traced as it is
    written: a shape used under `reduce_retracing=True` or an
    `input_signature` is `None`, not the shape of the first input."""
    if not hasattr(fn, "python_function"):
        return {}
    options: dict[str, Any] = {}
    if getattr(fn, "input_signature", None) is not None:
        options["input_signature"] = fn.input_signature
    if getattr(fn, "_reduce_retracing", False):
        options["reduce_retracing"] = True
    if getattr(fn, "_jit_compile", None) is not None:
        options["jit_compile"] = fn._jit_compile
    return options


def describe_options(options: dict[str, Any]) -> str:
    return ", ".join(
        f"{k}=..." if k == "input_signature" else f"{k}={v!r}" for k, v in options.items()
    )
