"""Functions that reach a tracer through a parameter of the function that
hands it over: `AudioSet.create(self, map_fn=None)` does `ds.map(map_fn)`,
and a script calls `AudioSet(...).create(map_fn=lambda items: crop(items))`:
`crop` runs traced, in the dataset's map, though nothing in its own module
says so. The callee is matched by its name and the keyword (`HandedCallable`):
the object a method is called on is often built inline, of a class the
script imports. A function handed positionally fills the parameter at its
place (`self._dataset(gen, load_fn)` for `_dataset(self, gen, map_fn)`),
and one bound by `functools.partial` is handed as the function it binds."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from tfrewrite.facts.index_records import HandedCallable, ModuleIndex, TracedSite
from tfrewrite.facts.project_lookup import ProjectLookup
from tfrewrite.workspace.line_names import path_line


@dataclass(frozen=True)
class HandedTarget:
    """A project function a tracer runs because a call handed it over."""

    index: ModuleIndex
    qualname: str
    handed: HandedCallable
    handed_in: ModuleIndex  # the module of the call that handed it

    def given_at(self) -> str:
        """Where the call handing it over is (`train.py:20`)."""
        module = self.handed_in
        return path_line(module.path, self.handed.lineno, module.cell_starts)


# (callee name, keyword) -> each call handing a function over so, with its module.
_ByKeyword = dict[tuple[str, str], list[tuple[ModuleIndex, HandedCallable]]]


class HandedCallables:
    """The keyword-handed functions of the whole project, by (callee name,
    keyword), built on the first question."""

    def __init__(self, indexes: list[ModuleIndex], lookup: ProjectLookup) -> None:
        self._indexes = indexes
        self._lookup = lookup
        self._by_keyword: _ByKeyword | None = None

    def targets(self, index: ModuleIndex, site: TracedSite) -> list[HandedTarget]:
        """What the tracer of `site` runs when its target is a parameter of
        the function the site is in: the functions calls of that function
        hand over as that keyword."""
        caller = index.functions.get(site.caller)
        if caller is None or site.target not in caller.params:
            return []
        if self._by_keyword is None:
            self._by_keyword = defaultdict(list)
            for other in self._indexes:
                for handed in other.handed_callables:
                    self._by_keyword[(handed.method, handed.keyword)].append((other, handed))
        method = site.caller.rpartition(".")[2]
        slots = [site.target, f"#{_position(caller.params, site.target)}"]
        return [
            HandedTarget(target_index, target, handed, other)
            for slot in slots
            for other, handed in self._by_keyword.get((method, slot), ())
            for name in handed.functions
            for target_index, target in self._lookup.find(name, other)
            if target in target_index.functions
        ]


def _position(params: list[str], name: str) -> int:
    """Where a call's positional arguments fill `name`: a method's own
    object (`self`, `cls`) is the one before the parentheses."""
    position = params.index(name)
    return position - 1 if params and params[0] in ("self", "cls") else position
