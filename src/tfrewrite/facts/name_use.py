"""Which names a block of statements reads and writes, in order: what an
extracted train step takes as arguments and returns, what a loop rebinds.
LibCST only; a leaf of the fact model (it asks nothing of the other facts).
"""

from __future__ import annotations

from collections.abc import Container, Iterator
from dataclasses import dataclass

import libcst as cst

from tfrewrite.facts.walk import child_nodes, iter_nodes


@dataclass
class NameUse:
    reads: list[str]  # names read before any write in the block, in order
    writes: list[str]  # names written, in order
    all_reads: set[str]


def mentioned_names(node: cst.CSTNode, skip: Container[int] = ()) -> Iterator[str]:
    """Every plain name under `node` that reads or binds a name of the
    enclosing scope, in source order, except attribute names (`x.attr`
    mentions `x`), keyword names (`f(k=v)` mentions `v`), what lies under a
    node whose `id` is in `skip`, and the names a comprehension or a lambda
    binds for itself (`v` in `sum(v * n for v, n in pairs)` is not the `v`
    of the enclosing scope)."""
    # Each node with the names local to the comprehensions and lambdas around it.
    stack: list[tuple[cst.CSTNode, frozenset[str]]] = [(node, frozenset())]
    while stack:
        current, local = stack.pop()
        if id(current) in skip:
            continue
        if isinstance(current, cst.Name):
            if current.value not in local:
                yield current.value
        elif isinstance(current, (cst.Attribute, cst.Arg)):
            stack.append((current.value, local))
        elif isinstance(current, _COMPREHENSIONS):
            bound = local | _comprehension_targets(current.for_in)
            if isinstance(current, cst.DictComp):
                results: list[cst.CSTNode] = [current.key, current.value]
            else:
                results = [current.elt]
            parts = [(result, bound) for result in results]
            comp: cst.CompFor | None = current.for_in
            while comp is not None:
                # The outermost iterable is evaluated in the enclosing scope.
                parts.append((comp.iter, local if comp is current.for_in else bound))
                parts += [(condition.test, bound) for condition in comp.ifs]
                comp = comp.inner_for_in
            stack.extend(reversed(parts))
        elif isinstance(current, cst.Lambda):
            params = current.params
            names = {
                p.name.value
                for p in [*params.posonly_params, *params.params, *params.kwonly_params]
            }
            for star in (params.star_arg, params.star_kwarg):
                if isinstance(star, cst.Param):
                    names.add(star.name.value)
            defaults = [
                p.default
                for p in [*params.posonly_params, *params.params, *params.kwonly_params]
                if p.default is not None
            ]
            stack.append((current.body, local | names))
            stack.extend((d, local) for d in reversed(defaults))
        else:
            stack.extend((child, local) for child in reversed(child_nodes(current)))


_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)


def _comprehension_targets(comp: cst.CompFor | None) -> frozenset[str]:
    """The names every `for` of a comprehension binds."""
    names: set[str] = set()
    while comp is not None:
        names.update(n.value for n in iter_nodes(comp.target) if isinstance(n, cst.Name))
        comp = comp.inner_for_in
    return frozenset(names)


def target_names(target: cst.BaseExpression) -> tuple[list[str], list[cst.CSTNode]]:
    """(names bound by an assignment target, sub-expressions it reads)."""
    if isinstance(target, cst.Name):
        return [target.value], []
    if isinstance(target, (cst.Tuple, cst.List)):
        names: list[str] = []
        reads: list[cst.CSTNode] = []
        for element in target.elements:
            n, r = target_names(element.value)
            names += n
            reads += r
        return names, reads
    if isinstance(target, cst.StarredElement):
        return target_names(target.value)
    return [], [target]  # attribute / subscript: reads its base


class _NameCollector:
    """Reads and writes of plain names in statement order (a conservative
    approximation: every `Name` in a load position counts as a read)."""

    def __init__(self) -> None:
        self.reads: list[str] = []
        self.writes: list[str] = []
        self.all_reads: set[str] = set()

    def read(self, name: str) -> None:
        self.all_reads.add(name)
        if name not in self.writes and name not in self.reads:
            self.reads.append(name)

    def write(self, name: str) -> None:
        if name not in self.writes:
            self.writes.append(name)

    def expression(self, node: cst.CSTNode) -> None:
        for name in mentioned_names(node):
            self.read(name)

    def assign(self, target: cst.BaseExpression) -> None:
        """An assignment target: what it reads (`d[k] = v` reads `d` and
        `k`), then the names it binds."""
        names, reads = target_names(target)
        for r in reads:
            self.expression(r)
        for n in names:
            self.write(n)

    def statement(self, node: cst.CSTNode) -> None:
        if isinstance(node, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            for small in node.body:
                self.statement(small)
        elif isinstance(node, cst.Assign):
            self.expression(node.value)
            for target in node.targets:
                self.assign(target.target)
        elif isinstance(node, cst.AnnAssign):
            if node.value is not None:
                self.expression(node.value)
            self.assign(node.target)
        elif isinstance(node, cst.AugAssign):
            self.expression(node.value)
            self.expression(node.target)
            names, _ = target_names(node.target)
            for n in names:
                self.write(n)
        elif isinstance(node, cst.With):
            for item in node.items:
                self.expression(item.item)
                if item.asname is not None:
                    self.assign(item.asname.name)
            self.block(node.body)
        elif isinstance(node, cst.For):
            self.expression(node.iter)
            names, _ = target_names(node.target)
            for n in names:
                self.write(n)
            self.block(node.body)
            if node.orelse is not None:
                self.block(node.orelse.body)
        elif isinstance(node, cst.If):
            self.expression(node.test)
            self.block(node.body)
            if node.orelse is not None:
                orelse = node.orelse
                if isinstance(orelse, cst.If):
                    self.statement(orelse)
                else:
                    self.block(orelse.body)
        elif isinstance(node, cst.While):
            self.expression(node.test)
            self.block(node.body)
        elif isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            self.write(node.name.value)
        else:
            self.expression(node)

    def block(self, suite: cst.BaseSuite) -> None:
        if isinstance(suite, cst.IndentedBlock):
            for statement in suite.body:
                self.statement(statement)
        elif isinstance(suite, cst.SimpleStatementSuite):
            self.statement(suite)


def name_use(statements: list[cst.CSTNode]) -> NameUse:
    collector = _NameCollector()
    for statement in statements:
        collector.statement(statement)
    return NameUse(collector.reads, collector.writes, collector.all_reads)
