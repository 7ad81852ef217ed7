"""Data flow around one `if` statement, for rewriting it as `tf.cond`.

`tf.cond` runs each branch as a function and merges what the branches
return, so a rewrite must know, as AutoGraph's control-flow converter does:
which names a branch modifies that are read after the `if` (the outputs),
which names are surely defined before it (so a branch that leaves one alone
can pass the old value through), and which names a branch reads before
assigning (they become parameters of the branch function, because a name
assigned anywhere in a Python function is local to all of it).

Everything here is syntactic and conservative: an over-approximated read
only makes an output or a parameter more; a construct not understood makes a
refusal, never a guess.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import libcst as cst

from tfrewrite.facts.bindings import bound_names, target_names
from tfrewrite.facts.block_exits import Statement, always_exits, block_statements
from tfrewrite.facts.walk import child_nodes, iter_nodes

_LOOPS = (cst.For, cst.While)


# -- statement lists -----------------------------------------------------------------


def is_pass(statement: Statement) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and all(
        isinstance(s, cst.Pass) for s in statement.body
    )


# -- reads and writes ----------------------------------------------------------------


def reads(node: cst.CSTNode) -> set[str]:
    """Names `node` may read (over-approximated: the free names of nested
    functions and lambdas count, and reads inside comprehensions). A nested
    function's own parameters and locals are not reads: a branch that defines
    `def _w_if_true(): w = ...` does not read the `w` around it."""
    found: set[str] = set()
    stack: list[cst.CSTNode] = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Name):
            found.add(current.value)
            continue
        if isinstance(current, (cst.Attribute, cst.Arg, cst.NamedExpr)):
            # `x.attr` reads `x`, `f(k=v)` reads `v`, `(n := v)` reads `v`:
            # the attribute, keyword and bound name are not reads.
            stack.append(current.value)
            continue
        if isinstance(current, (cst.Assign, cst.AnnAssign)):
            targets = (
                [t.target for t in current.targets]
                if isinstance(current, cst.Assign)
                else [current.target]
            )
            for target in targets:
                stack.extend(_target_reads(target))
            if current.value is not None:
                stack.append(current.value)
            continue
        if isinstance(current, cst.AugAssign):
            stack.extend([current.target, current.value])
            continue
        if isinstance(current, cst.For):
            stack.extend(_target_reads(current.target))
            stack.extend([current.iter, current.body])
            if current.orelse is not None:
                stack.append(current.orelse)
            continue
        if isinstance(current, cst.WithItem):
            stack.append(current.item)
            continue
        if isinstance(current, cst.FunctionDef):
            stack.extend([*current.decorators, current.params])
            found |= _free_reads(current)
            continue
        if isinstance(current, cst.Lambda):
            stack.append(current.params)
            found |= reads(current.body) - set(_lambda_params(current))
            continue
        if isinstance(current, cst.Param):
            if current.default is not None:
                stack.append(current.default)
            continue
        if isinstance(current, (cst.Import, cst.ImportFrom, cst.Global, cst.Nonlocal)):
            continue
        if isinstance(current, cst.ExceptHandler):
            if current.type is not None:
                stack.append(current.type)
            stack.append(current.body)
            continue
        stack.extend(child_nodes(current))
    return found


def _free_reads(function: cst.FunctionDef) -> set[str]:
    """The names a nested function reads from the scopes around it."""
    local = (assigned_names(function.body) | set(function_params(function))) - scope_declarations(
        function
    )
    return reads(function.body) - local


def _lambda_params(function: cst.Lambda) -> list[str]:
    p = function.params
    params = [*p.posonly_params, *p.params, *p.kwonly_params]
    if isinstance(p.star_arg, cst.Param):
        params.append(p.star_arg)
    if p.star_kwarg is not None:
        params.append(p.star_kwarg)
    return [param.name.value for param in params]


def _target_reads(target: cst.BaseExpression) -> list[cst.CSTNode]:
    """What an assignment target reads: `d[k] = v` reads `d` and `k`."""
    if isinstance(target, cst.Name):
        return []
    if isinstance(target, (cst.Tuple, cst.List)):
        return [r for e in target.elements for r in _target_reads(e.value)]
    if isinstance(target, cst.StarredElement):
        return _target_reads(target.value)
    return [target]


def assigned_names(node: cst.CSTNode) -> set[str]:
    """Names bound anywhere under `node` (not inside nested functions),
    including `def`/`class` names and imports."""
    names = bound_names(node)
    for current in iter_nodes(node, into_functions=False):
        if isinstance(current, (cst.FunctionDef, cst.ClassDef)) and current is not node:
            names.add(current.name.value)
        elif isinstance(current, (cst.Import, cst.ImportFrom)) and not isinstance(
            current.names, cst.ImportStar
        ):
            for alias in current.names:
                if alias.asname is not None:
                    names.update(target_names(alias.asname.name))  # type: ignore[arg-type]
                else:
                    names.add(_dotted(alias.name).split(".")[0])
    return names


def assigned_in_order(node: cst.CSTNode) -> list[str]:
    """The names `assigned_names` finds, in the order they are first bound
    (source order; the value of `x = y = v` binds `x` before `y`)."""
    names = assigned_names(node)
    order: list[str] = []
    for current in iter_nodes(node, into_functions=False):
        targets: list[cst.BaseExpression] = []
        if isinstance(current, cst.Assign):
            targets = [t.target for t in current.targets]
        elif isinstance(current, (cst.AnnAssign, cst.AugAssign, cst.NamedExpr, cst.For)):
            targets = [current.target]
        elif isinstance(current, cst.WithItem) and current.asname is not None:
            targets = [current.asname.name]
        elif isinstance(current, cst.ExceptHandler) and current.name is not None:
            targets = [current.name.name]
        elif isinstance(current, (cst.FunctionDef, cst.ClassDef)) and current is not node:
            targets = [current.name]
        for target in targets:
            for name in target_names(target):
                if name not in order:
                    order.append(name)
    order += sorted(names - set(order))  # imports
    return [name for name in order if name in names]


def _dotted(node: cst.BaseExpression) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{_dotted(node.value)}.{node.attr.value}"
    return ""


def definitely_assigned(statements: Sequence[Statement]) -> set[str]:
    """Names every path through `statements` assigns (no exception, no early
    exit assumed: a path that returns never reaches what follows anyway)."""
    names: set[str] = set()
    for statement in statements:
        names |= _definitely_assigned_one(statement)
    return names


def _definitely_assigned_one(statement: Statement) -> set[str]:
    if isinstance(statement, cst.SimpleStatementLine):
        names: set[str] = set()
        for small in statement.body:
            if isinstance(small, cst.Assign):
                for target in small.targets:
                    names.update(target_names(target.target))
            elif isinstance(small, cst.AnnAssign) and small.value is not None:
                names.update(target_names(small.target))
            elif isinstance(small, cst.AugAssign):
                names.update(target_names(small.target))
            elif isinstance(small, (cst.Import, cst.ImportFrom)):
                names |= assigned_names(small)
        return names
    if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
        return {statement.name.value}
    if isinstance(statement, cst.With):
        names = {
            n for item in statement.items if item.asname for n in target_names(item.asname.name)
        }
        return names | definitely_assigned(block_statements(statement.body))
    if isinstance(statement, cst.If):
        if statement.orelse is None:
            return set()
        body_statements = block_statements(statement.body)
        other_statements = block_statements(statement.orelse)
        body = definitely_assigned(body_statements)
        other = definitely_assigned(other_statements)
        # Only the branches that fall through reach what follows.
        if always_exits(body_statements):
            return other if not always_exits(other_statements) else body | other
        if always_exits(other_statements):
            return body
        return body & other
    return set()


def read_before_assigned(statements: Sequence[Statement]) -> set[str]:
    """Names some path through `statements` may read before assigning them
    (the names a branch function needs from outside)."""
    needed: set[str] = set()
    _scan_needs(statements, set(), needed)
    return needed


def _scan_needs(statements: Sequence[Statement], assigned: set[str], needed: set[str]) -> set[str]:
    assigned = set(assigned)
    for statement in statements:
        if isinstance(statement, cst.If):
            needed |= reads(statement.test) - assigned
            body = _scan_needs(block_statements(statement.body), assigned, needed)
            other = _scan_needs(block_statements(statement.orelse), assigned, needed)
            assigned = body & other
        elif isinstance(statement, cst.With):
            for item in statement.items:
                needed |= reads(item.item) - assigned
                if item.asname is not None:
                    assigned.update(target_names(item.asname.name))
            assigned = _scan_needs(block_statements(statement.body), assigned, needed)
        elif isinstance(statement, cst.For):
            needed |= reads(statement.iter) - assigned
            inner = assigned | set(target_names(statement.target))
            _scan_needs(block_statements(statement.body), inner, needed)
            _scan_needs(block_statements(statement.orelse), assigned, needed)
        elif isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                needed |= reads(small) - assigned
                assigned |= _definitely_assigned_one(cst.SimpleStatementLine(body=[small]))
        else:
            needed |= reads(statement) - assigned
            assigned |= _definitely_assigned_one(statement)
    return assigned


# -- control flow --------------------------------------------------------------------


def contains_return(node: cst.CSTNode) -> bool:
    return any(isinstance(n, cst.Return) for n in iter_nodes(node, into_functions=False))


def returns_in(node: cst.CSTNode) -> list[cst.Return]:
    return [n for n in iter_nodes(node, into_functions=False) if isinstance(n, cst.Return)]


# -- where an `if` sits --------------------------------------------------------------


@dataclass(frozen=True)
class Placement:
    """Where a statement sits in its function: the chain of (block, index)
    from the function body down to the statement, and the compound
    statements in between."""

    function: cst.FunctionDef
    blocks: tuple[tuple[tuple[Statement, ...], int], ...]  # outermost first
    compounds: tuple[cst.CSTNode, ...]  # statements enclosing it, outermost first

    @property
    def top_level_index(self) -> int:
        return self.blocks[0][1]


def placement(
    function: cst.FunctionDef, ancestors: Sequence[cst.CSTNode], node: Statement
) -> Placement:
    """The placement of `node`, from its ancestors inside `function`
    (ancestors start at or above `function`)."""
    chain = list(ancestors)
    start = max(i for i, a in enumerate(chain) if a is function)
    chain = [*chain[start + 1 :], node]
    blocks: list[tuple[tuple[Statement, ...], int]] = []
    compounds: list[cst.CSTNode] = []
    for position, current in enumerate(chain):
        if isinstance(current, cst.IndentedBlock) and position + 1 < len(chain):
            child = chain[position + 1]
            body = tuple(current.body)
            index = next(i for i, s in enumerate(body) if s is child)
            blocks.append((body, index))
        elif (
            isinstance(current, cst.If)
            and position + 1 < len(chain)
            and chain[position + 1] is current.orelse
            and isinstance(current.orelse, cst.If)
        ):
            blocks.append(((current.orelse,), 0))  # `elif`: a block of one statement
        if isinstance(current, cst.BaseCompoundStatement) and current is not node:
            compounds.append(current)
    return Placement(function, tuple(blocks), tuple(compounds))


def defined_before(
    place: Placement,
    flow: Callable[[Statement], tuple[frozenset[str], frozenset[str]]] | None = None,
) -> set[str]:
    """Names surely bound when control reaches the statement: parameters and
    names assigned by statements that precede it on every path. `flow` may
    remember `statement_flow` per statement."""
    params = function_params(place.function)
    names = set(params)
    for body, index in place.blocks:
        if flow is None:
            names |= definitely_assigned(body[:index])
        else:
            for statement in body[:index]:
                names |= flow(statement)[1]
    for compound in place.compounds:
        if isinstance(compound, cst.With):
            names.update(
                n for item in compound.items if item.asname for n in target_names(item.asname.name)
            )
        elif isinstance(compound, cst.For):
            names.update(target_names(compound.target))
    return names


def function_params(function: cst.FunctionDef) -> list[str]:
    p = function.params
    params = [*p.posonly_params, *p.params, *p.kwonly_params]
    if isinstance(p.star_arg, cst.Param):
        params.append(p.star_arg)
    if p.star_kwarg is not None:
        params.append(p.star_kwarg)
    return [param.name.value for param in params]


def statement_flow(statement: Statement) -> tuple[frozenset[str], frozenset[str]]:
    """What one statement may read before assigning, and what it surely
    assigns: the per-statement facts `live_after` combines."""
    return (
        frozenset(read_before_assigned([statement])),
        frozenset(_definitely_assigned_one(statement)),
    )


def live_after(
    place: Placement,
    flow: Callable[[Statement], tuple[frozenset[str], frozenset[str]]] = statement_flow,
) -> set[str]:
    """Names that may be read after the statement before being reassigned:
    the rest of each enclosing block, and the whole of any enclosing loop
    (its next iteration). `flow` may remember `statement_flow` per
    statement (a function with many conditionals asks it of the same ones)."""
    live: set[str] = set()
    killed: set[str] = set()
    levels = list(zip(place.blocks, _block_owners(place), strict=True))
    for (body, index), owner in reversed(levels):
        for statement in body[index + 1 :]:
            needs, assigns = flow(statement)
            live |= needs - killed
            killed |= assigns
        if isinstance(owner, _LOOPS):
            live |= reads(owner)
        elif isinstance(owner, cst.Try):
            live |= reads(owner)
    return live


def closure_reads(
    function: cst.FunctionDef, runs_now: Callable[[cst.Call], bool] = lambda call: False
) -> set[str]:
    """Free names of the functions and lambdas nested in `function`: a
    closure may read them whenever it is called, so they count as live. A
    lambda passed to a call that runs it right away (`runs_now`, such as
    `tf.cond`) is no closure: its reads are reads of that statement."""
    free: set[str] = set()
    immediate: set[int] = set()
    for node in iter_nodes(function.body):
        if isinstance(node, cst.Call) and runs_now(node):
            immediate.update(id(a.value) for a in node.args if isinstance(a.value, cst.Lambda))
        if isinstance(node, cst.FunctionDef):
            local = assigned_names(node.body) | set(function_params(node))
            free |= reads(node.body) - local
        elif isinstance(node, cst.Lambda) and id(node) not in immediate:
            free |= reads(node.body) - set(_lambda_params(node))
    return free


def named_closures(function: cst.FunctionDef) -> dict[str, set[str]]:
    """The nested functions of `function` bound to a name (`def f` or
    `f = lambda: ...`), each with the free names it may read when called,
    including through the other named closures it uses.

    A branch turned into a function binds its names locally, so a closure
    defined outside the branch would no longer see the branch's assignments."""
    found: dict[str, set[str]] = {}
    for node in iter_nodes(function.body):
        if isinstance(node, cst.FunctionDef):
            local = assigned_names(node.body) | set(function_params(node))
            found[node.name.value] = reads(node.body) - local
        elif (
            isinstance(node, cst.Assign)
            and isinstance(node.value, cst.Lambda)
            and len(node.targets) == 1
            and isinstance(node.targets[0].target, cst.Name)
        ):
            params = node.value.params
            names = {
                p.name.value
                for p in [*params.posonly_params, *params.params, *params.kwonly_params]
            }
            found[node.targets[0].target.value] = reads(node.value.body) - names
    changed = True
    while changed:
        changed = False
        for free in found.values():
            extra = set().union(*(found[other] for other in free if other in found)) - free
            if extra:
                free |= extra
                changed = True
    return found


def rebinding_closures(function: cst.FunctionDef) -> dict[str, set[str]]:
    """The nested functions of `function` that rebind outer names with
    `nonlocal` or `global`, each with those names: calling one in a branch
    is a Python effect that tracing runs whichever way the condition goes."""
    found: dict[str, set[str]] = {}
    for node in iter_nodes(function.body):
        if isinstance(node, cst.FunctionDef):
            declared = scope_declarations(node)
            if declared:
                found[node.name.value] = declared
    return found


def scope_declarations(function: cst.FunctionDef) -> set[str]:
    """Names the function declares `global` or `nonlocal`."""
    declared: set[str] = set()
    for node in iter_nodes(function, into_functions=False):
        if isinstance(node, (cst.Global, cst.Nonlocal)):
            declared.update(item.name.value for item in node.names)
    return declared


def is_generator(function: cst.FunctionDef) -> bool:
    return any(isinstance(n, cst.Yield) for n in iter_nodes(function, into_functions=False))


def bound_by_definition(statements: Sequence[Statement]) -> set[str]:
    """Names bound by `def`, `class` or `import` in `statements`: Python
    objects that cannot be outputs of a `tf.cond`."""
    names: set[str] = set()
    for node in iter_nodes(cst.Module(body=list(statements)), into_functions=False):
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            names.add(node.name.value)
        elif isinstance(node, (cst.Import, cst.ImportFrom)):
            names |= assigned_names(node)
    return names


def _block_owners(place: Placement) -> list[cst.CSTNode | None]:
    """The compound statement owning each block in `place.blocks` (None for
    the function body)."""
    owners: list[cst.CSTNode | None] = [None]
    for body, _ in place.blocks[1:]:
        owner = next(
            (c for c in place.compounds if any(s is body[0] for s in _direct_blocks_statements(c))),
            None,
        )
        owners.append(owner)
    return owners


def _direct_blocks_statements(compound: cst.CSTNode) -> list[Statement]:
    result: list[Statement] = []
    for attr in ("body", "orelse", "finalbody"):
        part = getattr(compound, attr, None)
        if isinstance(part, cst.If):
            result.append(part)
        elif isinstance(part, (cst.Else, cst.Finally, cst.BaseSuite)):
            result.extend(
                block_statements(part.body if isinstance(part, (cst.Else, cst.Finally)) else part)
            )
    for handler in getattr(compound, "handlers", ()) or ():
        result.extend(block_statements(handler.body))
    return result
