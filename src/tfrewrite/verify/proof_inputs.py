"""The inputs a function is verified on (its proof set).

Three kinds, in this order:

1. the base draws (and the short batch), given by the caller;
2. inputs on both sides of every condition the original and the rewrite
   test (`conditions`, `boundaries`): each joins the proof set when the
   original runs on it, whether or not it takes a new branch — a moved
   threshold is found between the two constants, where both versions take
   branches they also take elsewhere;
3. while some branch of a `tf.cond` the rewrite introduced has not run
   (`coverage`), generic variants (`inputs.variants`: range ends, scaling,
   shifting, sign flips, fresh draws), each kept only when it takes a
   branch not taken before.

Runs inside verification workers (TensorFlow imported).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np
import tensorflow as tf

from tfrewrite.verify import inputs
from tfrewrite.verify.compare import to_numpy
from tfrewrite.verify.conditions import Threshold
from tfrewrite.verify.coverage import BranchRecorder
from tfrewrite.verify.outcome import call, eagerly


def measurer(
    original_module: Any, rewrite_module: Any | None
) -> Callable[[Threshold, Mapping[str, Any]], Any]:
    """Evaluates a threshold's compared value (source over parameters and
    module-level names) eagerly on an input, in the module it was read from:
    a NumPy array, or None when it raised."""
    compiled: dict[Threshold, Callable | None] = {}

    def measure(threshold: Threshold, args: Mapping[str, Any]) -> Any:
        if threshold not in compiled:
            module = rewrite_module if threshold.side == "rewrite" else original_module
            text = f"lambda {', '.join(threshold.parameters)}: ({threshold.compared})"
            try:
                compiled[threshold] = eval(text, (module or original_module).__dict__)  # noqa: S307
            except SyntaxError:
                compiled[threshold] = None
        fn = compiled[threshold]
        if fn is None or any(p not in args for p in threshold.parameters):
            return None
        try:
            with eagerly():
                value = fn(**{p: _tensor(args[p]) for p in threshold.parameters})
            return to_numpy(value)
        except Exception:  # noqa: BLE001 - user code: a value that cannot be measured
            return None

    return measure


def _tensor(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return tf.constant(value)
    if isinstance(value, dict):
        return {k: _tensor(v) for k, v in value.items()}
    return value


def proof_set(
    base: list[tuple[str, dict[str, Any]]],
    specs: Mapping[str, inputs.Spec],
    original: Callable,
    boundary: Iterable[tuple[str, dict[str, Any]]],
    recorder: BranchRecorder | None,
    instrumented: Callable | None,
    search: int,
) -> list[tuple[str, dict[str, Any]]]:
    """The base draws, the boundary inputs the original runs on, and inputs
    that take branches of the introduced `tf.cond`s the others did not (at
    most `search` tried). Leaves the branches taken in `recorder`."""
    proof = list(base)
    for label, variant in boundary:
        args = {**base[0][1], **variant}
        if not call(original, args, eager=True).failed:
            proof.append((label, args))
    if recorder is None or instrumented is None:
        return proof

    def taken(args: dict[str, Any]) -> set[tuple[int, bool]]:
        recorder.taken = {}
        recorder.active = True
        try:
            call(instrumented, args, eager=True)
        finally:
            recorder.active = False
        return {(line, which) for line, whiches in recorder.taken.items() for which in whiches}

    covered: set[tuple[int, bool]] = set()
    for _, args in proof:
        covered |= taken(args)
    wanted = {(line, which) for line in recorder.conds for which in (True, False)}
    tried = 0
    for label, variant in inputs.variants(base[0][1], specs):
        if covered >= wanted or tried >= search:
            break
        # Arguments without a specification (a model from a caller) stay as they are.
        args = {**base[0][1], **variant}
        tried += 1
        new = taken(args) - covered
        if new and not call(original, args, eager=True).failed:
            covered |= new
            proof.append((label, args))
    recorder.taken = {}
    for line, which in covered:
        recorder.taken.setdefault(line, set()).add(which)
    return proof
