"""What a train step TFR302 would decorate reaches in other modules that
reads a tensor's value on the host.

Decorating a step traces everything it calls. In its own file, findings on
that code (a `.numpy()` TFR105 cannot rewrite) withhold the decorator
(`pipeline.decoration_gate`); a function of another module is checked in
that module's run, which the step's file never sees. So the project facts
record, per step, the functions of other modules it reaches (through calls
the facts resolve, a few levels deep) that call `.numpy()` or `.item()`, or
a NumPy function (pass 1 does not know on what): such a call raises on a
symbolic tensor unless a fix in that module rewrites it, so decorating the
step is not proven safe (`StepPlan.unproven`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tfrewrite.facts.index_records import ModuleIndex
    from tfrewrite.facts.project_lookup import ProjectLookup

# Methods that hand a tensor's value to Python.
_HOST_READS = frozenset({"numpy", "item"})
# NumPy names called to make a constant of a type, not to compute on values.
_NUMPY_TYPES = frozenset(
    {"float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool_", "dtype"}
)
# How many calls deep the step's callees are followed.
_DEPTH = 4


def record_host_reads_reached(steps: list[tuple[ModuleIndex, str]], lookup: ProjectLookup) -> None:
    """`ModuleIndex.host_reads_reached` of each step's module: the step's
    qualname -> the functions of other modules it reaches that read host
    values, as `module.qualname`."""
    for index, qualname in steps:
        found: set[str] = set()
        seen: set[tuple[str, str]] = set()
        pending = [(index, qualname, 0)]
        while pending:
            where, name, depth = pending.pop()
            info = where.functions.get(name)
            if info is None or (where.path, name) in seen:
                continue
            seen.add((where.path, name))
            if where is not index and _reads_host_values(info.method_calls, info.calls):
                found.add(where.qualify(name))
            if depth < _DEPTH:
                for callee in info.calls:
                    for target_index, target in lookup.self_call_targets(where, info, callee):
                        pending.append((target_index, target, depth + 1))
        if found:
            index.host_reads_reached[qualname] = tuple(sorted(found))


def _reads_host_values(methods: object, calls: list[str]) -> bool:
    """`.numpy()`/`.item()` called, or a NumPy function other than a type."""
    if not _HOST_READS.isdisjoint(methods):  # type: ignore[arg-type]
        return True
    return any(
        callee.startswith("numpy.") and callee.rpartition(".")[2] not in _NUMPY_TYPES
        for callee in calls
    )
