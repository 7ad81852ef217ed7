"""Which methods a call reaches through classes, beyond the one it names.

`K.rnn(self.step, ...)` in a base class runs a subclass's `step` for an
object of the subclass (`overrides`), and `CorrBlock(f1, f2)` in traced
code runs `CorrBlock.__init__` in that trace, computing with the caller's
tensors when it calls TensorFlow (`init_computes`). The project facts mark
those methods traced (`project.compute_facts`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from tfrewrite.facts.index_records import ModuleIndex

if TYPE_CHECKING:
    from collections.abc import Iterable


def own_methods_called(index: ModuleIndex, qualname: str, owner: str) -> set[str]:
    """The methods of its own object the method `qualname` of the class
    `owner` calls, as pass 1 recorded its calls: `self.prepare(x)`, and
    `call` and `__call__` for `self(x)`. They run within its trace."""
    info = index.functions.get(qualname)
    if info is None:
        return set()
    prefix = index.qualify(owner) + "."
    called = {
        c[len(prefix) :] for c in info.calls if c.startswith(prefix) and "." not in c[len(prefix) :]
    }
    if "self" in info.calls:
        called |= {"call", "__call__"}
    return called


def methods_reached(index: ModuleIndex, owner: str, method: str) -> set[str]:
    """The methods of the class `owner` that calling its `method` runs on
    the same object, itself included, through `own_methods_called`."""
    reached: set[str] = set()
    todo = [method]
    while todo:
        name = todo.pop()
        if name in reached or f"{owner}.{name}" not in index.functions:
            continue
        reached.add(name)
        todo += own_methods_called(index, f"{owner}.{name}", owner)
    return reached


class Lookup(Protocol):
    """How the project resolves a dotted reference (`project_lookup.ProjectLookup`)."""

    def find(self, name: str, index: ModuleIndex) -> Iterable[tuple[ModuleIndex, str]]: ...

    def held_method(self, name: str) -> list[tuple[ModuleIndex, str]]: ...

    def held_callee(self, name: str) -> list[tuple[ModuleIndex, str]]: ...


def overrides(
    indexes: list[ModuleIndex], lookup: Lookup
) -> dict[tuple[str, str], list[tuple[ModuleIndex, str]]]:
    """(module path, `Base.method`) -> the methods of the project's direct
    subclasses that override it: where a call of `self.method` in `Base`
    may land."""
    found: dict[tuple[str, str], list[tuple[ModuleIndex, str]]] = {}
    for index in indexes:
        for qualname, info in index.classes.items():
            for base in info.bases:
                for base_index, base_qualname in lookup.find(base, index):
                    if base_qualname not in base_index.classes:
                        continue
                    for method in info.methods:
                        overridden = f"{base_qualname}.{method}"
                        if overridden in base_index.functions:
                            key = (base_index.path, overridden)
                            found.setdefault(key, []).append((index, f"{qualname}.{method}"))
    return found


def init_computes(index: ModuleIndex, class_qualname: str) -> bool:
    """Whether the class's `__init__` computes with TensorFlow, itself or
    through a method of the class (`self.corr = self.correlation(a, b)`),
    rather than only keeping its configuration: then, built in traced code,
    it computes with the caller's tensors in the trace."""
    info = index.functions.get(f"{class_qualname}.__init__")
    if info is None:
        return False
    own = (f"{index.qualify(class_qualname)}.", f"{class_qualname}.")
    methods = [
        index.functions.get(f"{class_qualname}.{callee.rpartition('.')[2]}")
        for callee in info.calls
        if callee.startswith(own)
    ]
    return any(
        callee.startswith("tensorflow.")
        for called in [info, *(m for m in methods if m is not None)]
        for callee in called.calls
    )
