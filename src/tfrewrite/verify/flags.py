"""Module-level flags frozen at trace time, in the original and in the rewrite.

A traced function reads a module-level constant (`use_absolute_error = False`)
once, when it is traced; eagerly, every call reads the current value. Each
constant a function reads is changed after tracing, to each of a few other
values: when eagerly the result changes and the traced function still gives
the old one, the value froze. In the original that is a divergence (one the
rewrite may keep, with a warning); introduced by the rewrite it fails the
check `module values read per call`.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import Any

import tensorflow as tf

from tfrewrite.verify import loader
from tfrewrite.verify.compare import compare, describe
from tfrewrite.verify.outcome import Check, Options, call


def alternatives(value: object, piece: loader.ModuleSlice) -> list[object]:
    """Other values of a flag to set after tracing (strings: the module's own)."""
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


def frozen(
    original: loader.LoadedFunction,
    loaded: loader.LoadedFunction,
    args: dict[str, Any],
    options: Options,
) -> Iterator[tuple[str, str]]:
    """Change each module-level constant after tracing: a traced function
    that keeps the trace-time value has frozen it. `original` is the eager
    reference; `loaded` is the side traced (the original itself, or the
    rewrite)."""
    rtol, atol = options.rtol, options.atol
    who = "the original" if loaded is original else "the rewrite"
    for name, value in original.slice.flags.items():
        if name not in loaded.module.__dict__ or loaded.module.__dict__[name] != value:
            continue
        eager_old = call(original.python_function, args, eager=True)
        if eager_old.failed:
            continue
        for new in alternatives(value, original.slice):
            traced = tf.function(loaded.python_function)
            if call(traced, args).failed:
                break
            original.module.__dict__[name] = new
            loaded.module.__dict__[name] = new
            try:
                eager = call(original.python_function, args, eager=True)
                got = call(traced, args)
            finally:
                original.module.__dict__[name] = value
                loaded.module.__dict__[name] = value
            if eager.failed or got.failed:
                continue
            if compare(eager_old.value, eager.value, rtol, atol).ok:
                continue  # this value does not change the result on this input
            diff = compare(eager.value, got.value, rtol, atol)
            if not diff.ok:
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


def check_rewrite(
    check: Check,
    warnings: list[str],
    original: loader.LoadedFunction,
    rewrite: loader.LoadedFunction,
    case: tuple[str, dict[str, Any]],
    frozen_in_original: set[str],
    options: Options,
) -> None:
    """A flag the rewrite freezes fails `check`, unless the original froze
    it too (then a warning: the rewrite keeps the original's behaviour)."""
    for name, problem in frozen(original, rewrite, case[1], options):
        if name in frozen_in_original:
            if rewrite.function is rewrite.python_function:
                # The rewrite removed `@tf.function`: called directly it reads
                # the current value; only a traced caller still freezes it.
                warnings.append(
                    f"called directly, the rewrite reads `{name}` on every call; "
                    "a traced step that calls it still freezes it at trace time"
                )
            else:
                warnings.append(
                    f"the rewrite still freezes `{name}` at trace time, as the original does"
                )
        else:
            check.fail(problem)
    if check.ok:
        check.runs += 1
