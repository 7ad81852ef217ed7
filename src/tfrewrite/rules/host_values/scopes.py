"""Pre-parse checks of the host-value rules (print, `.numpy()`, logging), on
pass-1 facts alone (no LibCST): see `facts.rule_scopes`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tfrewrite.facts.rule_scopes import traced_infos

if TYPE_CHECKING:
    from tfrewrite.facts.index import ModuleIndex
    from tfrewrite.facts.rule_scopes import TracedFacts


# Writes to a standard stream: a `print` with `end=""` (TFR103).
STREAM_WRITES = frozenset({"sys.stdout.write", "sys.stderr.write"})


def prints(index: ModuleIndex, traced: TracedFacts) -> bool:
    """TFR103: some traced function calls `print` (or `tf.print`) or writes to
    `sys.stdout` / `sys.stderr`."""
    return any(
        any(
            name == "print" or name.endswith(".print") or name in STREAM_WRITES
            for name in info.calls
        )
        for info in traced_infos(index, traced)
    )


def host_conversion(index: ModuleIndex, traced: TracedFacts) -> bool:
    """TFR105: a traced function calls `.numpy()`, `.item()`, a host
    conversion builtin, `len` or Keras' `get_value` (calls are recorded by
    name)."""
    from tfrewrite.facts.vocabulary import HOST_CONVERSIONS, LENGTH_READS

    return any(
        not info.method_calls.isdisjoint(("numpy", "item", "get_value"))
        or not HOST_CONVERSIONS.isdisjoint(info.calls)
        or not LENGTH_READS.isdisjoint(info.calls)
        or any(name.endswith(".get_value") for name in info.calls)
        for info in traced_infos(index, traced)
    )


def python_logging(index: ModuleIndex, traced: TracedFacts) -> bool:
    """TFR205: traced code, and some function calls Python logging
    (`FunctionInfo.calls_python_logging`: pass 1's answer to the question
    the rule asks on LibCST, `vocabulary.is_logging_call`)."""
    return bool(traced) and any(info.calls_python_logging for info in index.functions.values())


def tensor_iteration(index: ModuleIndex, traced: TracedFacts) -> bool:
    """TFR108: a traced function unpacks a tensor or hands one to `zip`,
    `list`, ... (`FunctionInfo.iterates_tensor`), or loops over what may be
    a tensor (`FunctionInfo.loops_over_value`)."""
    return any(
        info.iterates_tensor or info.loops_over_value for info in traced_infos(index, traced)
    )
