"""Is a name's value read after a point, or always bound again first?

An extracted train step returns the names the code after it reads: `loss`
for the epoch's log, not the `preds` and `grads` that the next section binds
afresh before it reads them. Returning what nobody reads is noise a careful
engineer would not write (`preds, loss, grads = train_step(x, y)`), and
returning too little breaks the script, so the answer is conservative: a
name counts as read unless every path from the point binds it before any
read. Paths follow Python's control flow over statement lists: both
branches of an `if`, a loop body that may run zero times or again, a `with`
body, the code after an enclosing loop or block. A function reads the names
it does not bind itself (a parameter or an assignment), a class what its body
and methods read; a `try` statement, or anything else that mentions the name
counts as a read.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import libcst as cst

from tfrewrite.facts.name_use import mentioned_names, name_use, target_names
from tfrewrite.facts.walk import iter_nodes

READ = True  # some path reads the name before binding it
BOUND = False  # every path binds it before any read


def _mentions(node: cst.CSTNode | None, name: str) -> bool:
    if isinstance(node, cst.FunctionDef):
        return name in free_names(node)
    if isinstance(node, cst.ClassDef):
        # The class body runs at its definition; its methods read the
        # enclosing scope's names they do not bind (not the class's own).
        body = list(node.body.body) if isinstance(node.body, cst.IndentedBlock) else [node.body]
        outer = [*node.decorators, *node.bases, *node.keywords, *body]
        return any(_mentions(part, name) for part in outer)
    return node is not None and name in set(mentioned_names(node))


def free_names(function: cst.FunctionDef) -> set[str]:
    """Names of the enclosing scope that defining or calling `function` may
    read: those its decorators, defaults and annotations mention, and those
    its body mentions without binding them itself (as a parameter or by an
    assignment, unless declared `global` or `nonlocal`)."""
    outside = {
        name
        for part in (*function.decorators, function.params, function.returns)
        if part is not None
        for name in mentioned_names(part)
        if not isinstance(part, cst.Parameters)
    }
    for param in iter_nodes(function.params):
        if isinstance(param, cst.Param):
            for part in (param.default, param.annotation):
                if part is not None:
                    outside |= set(mentioned_names(part))
    body = list(function.body.body) if isinstance(function.body, cst.IndentedBlock) else []
    bound = set(name_use(body).writes)
    bound |= {p.name.value for p in iter_nodes(function.params) if isinstance(p, cst.Param)}
    declared = {
        item.name.value
        for node in iter_nodes(function.body)
        if isinstance(node, (cst.Global, cst.Nonlocal))
        for item in node.names
    }
    return outside | (set(mentioned_names(function.body)) - (bound - declared))


def first_use(statements: Sequence[cst.CSTNode], name: str) -> bool | None:
    """READ, BOUND, or None when some path neither reads nor binds it."""
    for statement in statements:
        use = _statement(statement, name)
        if use is not None:
            return use
    return None


def _suite(suite: cst.BaseSuite | None, name: str) -> bool | None:
    if isinstance(suite, cst.IndentedBlock):
        return first_use(suite.body, name)
    if isinstance(suite, cst.SimpleStatementSuite):
        return _small_statements(suite.body, name)
    return None


def _small_statements(statements: Sequence[cst.BaseSmallStatement], name: str) -> bool | None:
    for small in statements:
        if isinstance(small, (cst.Assign, cst.AnnAssign)):
            if _mentions(small.value, name):
                return READ
            targets = (
                [t.target for t in small.targets]
                if isinstance(small, cst.Assign)
                else [small.target]
            )
            for target in targets:
                names, reads = target_names(target)
                if any(_mentions(r, name) for r in reads):
                    return READ
                if name in names and small.value is not None:
                    return BOUND
        elif _mentions(small, name):  # `x += 1`, `del x`, `print(x)`, `return x`
            return READ
    return None


def _either(first: bool | None, second: bool | None) -> bool | None:
    """Two alternative paths: read on either, bound only if bound on both."""
    if READ in (first, second):
        return READ
    return BOUND if first is BOUND and second is BOUND else None


def _statement(statement: cst.CSTNode, name: str) -> bool | None:
    if isinstance(statement, cst.SimpleStatementLine):
        return _small_statements(statement.body, name)
    if isinstance(statement, cst.If):
        if _mentions(statement.test, name):
            return READ
        orelse = statement.orelse
        other = (
            _statement(orelse, name)
            if isinstance(orelse, cst.If)
            else _suite(orelse.body if orelse is not None else None, name)
        )
        return _either(_suite(statement.body, name), other)
    if isinstance(statement, (cst.For, cst.While)):
        header = statement.iter if isinstance(statement, cst.For) else statement.test
        if _mentions(header, name):
            return READ
        rebound = isinstance(statement, cst.For) and name in target_names(statement.target)[0]
        body = None if rebound else _suite(statement.body, name)
        orelse = _suite(statement.orelse.body, name) if statement.orelse is not None else None
        # The body may run zero times: it can read the name, never bind it for sure.
        return READ if READ in (body, orelse) else None
    if isinstance(statement, cst.With):
        for item in statement.items:
            if _mentions(item.item, name):
                return READ
            if item.asname is not None and name in target_names(item.asname.name)[0]:
                return BOUND
        return _suite(statement.body, name)
    if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
        if _mentions(statement, name):  # a closure, a default, a class body reads it
            return READ
        return BOUND if statement.name.value == name else None
    return READ if _mentions(statement, name) else None


@dataclass(frozen=True)
class Level:
    """Where control goes after a point, one enclosing statement list at a time:
    the statements after the point (`after`), the ones before it that run
    again when the list is a loop body (`again`, empty otherwise), and the
    headers of the enclosing compound statement, read again on re-entry."""

    after: Sequence[cst.CSTNode]
    again: Sequence[cst.CSTNode] = ()
    headers: Sequence[cst.CSTNode] = ()


def read_later(name: str, levels: Sequence[Level], elsewhere: Sequence[cst.CSTNode] = ()) -> bool:
    """Whether the value `name` holds at the point may be read: `levels` go
    from the innermost statement list outwards, the last being the scope's
    own; `elsewhere` holds code that may run at any time (the functions and
    classes of the scope, which can read a global or a closure variable)."""
    if any(_mentions(node, name) for node in elsewhere):
        return True
    for level in levels:
        if any(_mentions(header, name) for header in level.headers):
            return True
        use = first_use(level.after, name)
        if use is not None:
            return use is READ
        if first_use(level.again, name) is READ:
            return True
    return False


def paths_after(
    scope: cst.CSTNode, loop: cst.For | cst.While, start: int, end: int
) -> tuple[list[Level], list[cst.CSTNode]]:
    """The `levels` and `elsewhere` of `read_later` for the point where
    `loop.body.body[start:end + 1]` ends, in `scope` (a module or a
    function): the rest of the loop body and its next iteration, then each
    enclosing statement list out to the scope's own; and the code of the
    scope that may run at any time (its functions, classes and lambdas, a
    `try` around the loop)."""
    body = list(loop.body.body)  # type: ignore[union-attr]
    levels = [Level(body[end + 1 :], body[:start], _headers(loop))]
    statements = list(scope.body if isinstance(scope, cst.Module) else scope.body.body)  # type: ignore[attr-defined]
    anytime: list[cst.CSTNode] = []
    for owner, siblings, index in reversed(_frames(statements, loop) or []):
        loops_back = isinstance(owner, (cst.For, cst.While)) and _body_of(owner) is siblings
        levels.append(
            Level(siblings[index + 1 :], siblings[:index] if loops_back else (), _headers(owner))
        )
        if isinstance(siblings[index], (cst.Try, cst.TryStar)):
            anytime.append(siblings[index])  # its handlers may run from any point
    anytime += [
        node
        for node in iter_nodes(scope)
        if node is not scope and isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda))
    ]
    return levels, anytime


def _headers(owner: cst.CSTNode | None) -> list[cst.CSTNode]:
    """What a compound statement reads each time it is entered."""
    if isinstance(owner, cst.For):
        return [owner.iter]
    if isinstance(owner, (cst.While, cst.If)):
        return [owner.test]
    if isinstance(owner, cst.With):
        return [item.item for item in owner.items]
    return []


def _body_of(owner: cst.CSTNode) -> Sequence[cst.CSTNode]:
    body = getattr(owner, "body", None)
    return body.body if isinstance(body, cst.IndentedBlock) else ()


def _suites(statement: cst.CSTNode) -> list[Sequence[cst.CSTNode]]:
    """The statement lists directly inside a compound statement."""
    suites = []
    for node in iter_nodes(statement, into_functions=False):
        if node is not statement and isinstance(node, cst.IndentedBlock):
            suites.append(node.body)
    return suites


def _frames(
    statements: Sequence[cst.CSTNode], target: cst.CSTNode
) -> list[tuple[cst.CSTNode | None, Sequence[cst.CSTNode], int]] | None:
    """The path from a statement list down to `target`: (the compound
    statement owning the list or None for the top one, the list, the index
    of the statement on the path), outermost first."""
    for index, statement in enumerate(statements):
        if statement is target:
            return [(None, statements, index)]
        if not any(n is target for n in iter_nodes(statement, into_functions=False)):
            continue
        for suite in _suites(statement):
            inner = _frames(suite, target)
            if inner is not None:
                owner = _owner_of(statement, suite)
                return [
                    (None, statements, index),
                    *[(owner if o is None else o, body, i) for o, body, i in inner],
                ]
    return None


def _owner_of(statement: cst.CSTNode, suite: Sequence[cst.CSTNode]) -> cst.CSTNode:
    """The compound statement inside `statement` (itself, an `elif`, an
    `except`) whose block is `suite`."""
    for node in iter_nodes(statement, into_functions=False):
        blocks = (getattr(node, "body", None), getattr(getattr(node, "orelse", None), "body", None))
        if any(isinstance(b, cst.IndentedBlock) and b.body is suite for b in blocks):
            return node
    return statement
