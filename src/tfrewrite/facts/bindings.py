"""What a function binds: its parameters and every binding of its local names.

Tensor facts solve over every binding of a name (`iter_assignments`, with
tuple targets split by `split_target`). A rewrite that follows a name to
its value (`size_out = list(x.shape[:-1]) + [n]` given as a shape,
`loss_value = loss.numpy()` printed later, `err = np.square(...)`
averaged) may do so only when that value is the name's one binding in the
function (`single_values`): any other way of binding it (a tuple target, a
loop, `with ... as`, an import, a nested `def`) makes the value unknown.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import libcst as cst

from tfrewrite.facts.walk import child_nodes, iter_nodes

if TYPE_CHECKING:
    from tfrewrite.facts.names import NameResolver

# The walks below test a node's exact class (LibCST's node classes have no
# subclasses): `isinstance` against them goes through `ABCMeta` and cost
# more than the walk itself, once per node and class tested.
# Nodes that bind names, as `iter_assignments_here` reads them (a walk that
# meets other nodes need not ask it).
ASSIGNMENT_NODES = frozenset(
    {cst.Assign, cst.AnnAssign, cst.AugAssign, cst.For, cst.WithItem, cst.NamedExpr}
    | {cst.ExceptHandler}
)
# Nodes whose bodies are another scope.
_NESTED_SCOPES = frozenset({cst.FunctionDef, cst.ClassDef, cst.Lambda})
# The nodes `local_bindings` reads.
_LOCAL_BINDING_NODES = ASSIGNMENT_NODES | {
    cst.CompFor,
    cst.Import,
    cst.ImportFrom,
    cst.Global,
    cst.Nonlocal,
    cst.FunctionDef,
    cst.ClassDef,
    cst.MatchAs,
    cst.MatchStar,
}
_UNPACKING_TARGETS = frozenset({cst.Tuple, cst.List, cst.StarredElement})


def local_bindings(
    function: cst.FunctionDef, drawn_from: bool = False
) -> dict[str, list[cst.BaseExpression | None]]:
    """Every binding of each local name of `function` (nested functions and
    classes excluded): the assigned value for `name = value`, None for any
    other way of binding it (augmented assignment, tuple target, loop
    variable, `with ... as`, walrus, import, nested `def`, ...).

    With `drawn_from`, a name a tuple target binds is bound to what it is
    drawn from: its element of a literal tuple (`a, b = x, y`), else the
    whole value unpacked (`train_ds, test_ds = load(args)`: each is one of
    the datasets `load` returns). For facts that hold of every part of a
    value (every dataset it batches drops the remainder), not of one."""
    bindings: dict[str, list[cst.BaseExpression | None]] = {}

    def unknown(target: cst.CSTNode | None) -> None:
        for node in iter_nodes(target) if target is not None else ():
            if type(node) is cst.Name:
                bindings.setdefault(node.value, []).append(None)

    for node in iter_nodes(function.body, into_functions=False):
        if type(node) not in _LOCAL_BINDING_NODES:
            continue  # most nodes: one set lookup
        if type(node) is cst.Assign:
            for target in node.targets:
                if type(target.target) is cst.Name:
                    bindings.setdefault(target.target.value, []).append(node.value)
                elif type(target.target) in _UNPACKING_TARGETS:
                    if drawn_from and type(target.target) is not cst.StarredElement:
                        for name, value, position in split_target(target.target, node.value):
                            drawn = node.value if position is not None else value
                            bindings.setdefault(name, []).append(drawn)
                    else:
                        unknown(target.target)
        elif type(node) is cst.AnnAssign:
            if type(node.target) is cst.Name:
                bindings.setdefault(node.target.value, []).append(node.value)
        elif type(node) in (cst.AugAssign, cst.For, cst.CompFor, cst.NamedExpr):
            unknown(node.target)  # type: ignore[attr-defined]
        elif type(node) is cst.WithItem:
            if node.asname is not None:
                unknown(node.asname.name)
        elif type(node) is cst.ExceptHandler:
            if node.name is not None:
                unknown(node.name.name)
        elif type(node) is cst.Import or type(node) is cst.ImportFrom:
            if not isinstance(node.names, cst.ImportStar):
                for alias in node.names:
                    unknown(alias.asname.name if alias.asname else alias.name)
        elif type(node) is cst.Global or type(node) is cst.Nonlocal:
            for item in node.names:
                unknown(item.name)
        elif type(node) is cst.FunctionDef or type(node) is cst.ClassDef:
            if node is not function:
                unknown(node.name)
        elif type(node) is cst.MatchAs or type(node) is cst.MatchStar:
            if node.name is not None:
                unknown(node.name)
    return bindings


def single_values(function: cst.FunctionDef) -> dict[str, cst.BaseExpression]:
    """Local names of `function` bound exactly once, by `name = value`
    (parameters excluded: the call binds them too), with that value."""
    params = {p.name.value for p in all_params(function.params)}
    return {
        name: values[0]
        for name, values in local_bindings(function).items()
        if len(values) == 1 and values[0] is not None and name not in params
    }


def iter_assignments(
    body: cst.CSTNode,
) -> Iterator[tuple[cst.BaseAssignTargetExpression, cst.BaseExpression | None, bool]]:
    """(target, value, augmented) for every binding in a function body, not
    descending into nested functions, lambdas or classes. A binding whose value
    is unknown (a `for` target, `with ... as`, `except ... as`) yields None."""
    stack: list[cst.CSTNode] = [body]
    pop, extend = stack.pop, stack.extend
    while stack:
        node = pop()
        kind = type(node)
        if kind in ASSIGNMENT_NODES:
            yield from iter_assignments_here(node)
        elif kind in _NESTED_SCOPES and node is not body:
            continue
        children = child_nodes(node)
        children.reverse()
        extend(children)


def iter_assignments_here(
    node: cst.CSTNode,
) -> Iterator[tuple[cst.BaseAssignTargetExpression, cst.BaseExpression | None, bool]]:
    """The bindings `node` itself makes (not those of its children)."""
    if type(node) not in ASSIGNMENT_NODES:
        return
    if type(node) is cst.Assign:
        for target in node.targets:
            yield target.target, node.value, False
    elif type(node) is cst.AnnAssign:
        yield node.target, node.value, False
    elif type(node) is cst.AugAssign:
        yield node.target, node, True  # type: ignore[misc]
    elif type(node) is cst.For:
        # The loop itself stands for "an element of `node.iter`".
        yield node.target, node, False  # type: ignore[misc]
    elif type(node) is cst.WithItem:
        if node.asname is not None:
            yield node.asname.name, None, False
    elif type(node) is cst.NamedExpr:
        yield node.target, node.value, False
    elif type(node) is cst.ExceptHandler and node.name is not None:
        yield node.name.name, None, False


def scope_nodes(root: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Nodes under `root`, not inside nested functions, lambdas or classes."""
    stack: list[cst.CSTNode] = [root]
    while stack:
        node = stack.pop()
        yield node
        if node is not root and type(node) in _NESTED_SCOPES:
            continue
        stack.extend(child_nodes(node))


def local_names(function: cst.FunctionDef) -> set[str]:
    """Names local to `function`: its parameters and what its body binds."""
    return {p.name.value for p in all_params(function.params)} | bound_names(function.body)


def bound_names(body: cst.CSTNode) -> set[str]:
    """Local names bound anywhere in `body` (assignments, loop targets,
    `with ... as`, walrus, `except ... as`), not inside nested functions."""
    names: set[str] = set()
    for target, value, _ in iter_assignments(body):
        names.update(name for name, _, _ in split_target(target, value))
    return names


def all_params(params: cst.Parameters) -> list[cst.Param]:
    result = [*params.posonly_params, *params.params, *params.kwonly_params]
    if isinstance(params.star_arg, cst.Param):
        result.append(params.star_arg)
    if params.star_kwarg is not None:
        result.append(params.star_kwarg)
    return result


def positional_param_names(function: cst.FunctionDef) -> list[str]:
    return [p.name.value for p in [*function.params.posonly_params, *function.params.params]]


def split_target(
    target: cst.BaseExpression, value: cst.BaseExpression | None
) -> list[tuple[str, cst.BaseExpression | None, int | None]]:
    """Names bound by a target: (name, value for that name, index in a tuple)."""
    if isinstance(target, cst.Name):
        return [(target.value, value, None)]
    if isinstance(target, (cst.Tuple, cst.List)):
        result: list[tuple[str, cst.BaseExpression | None, int | None]] = []
        value_elements = (
            [e.value for e in value.elements]
            if isinstance(value, (cst.Tuple, cst.List))
            and len(value.elements) == len(target.elements)
            and not any(isinstance(e, cst.StarredElement) for e in value.elements)
            else None
        )
        for i, element in enumerate(target.elements):
            if value_elements is not None:
                result.extend(split_target(element.value, value_elements[i]))
            else:
                for name, _, _ in split_target(element.value, None):
                    result.append((name, value, i))
        return result
    return []  # attribute / subscript targets bind no local name


def target_names(target: cst.BaseExpression) -> list[str]:
    """The names an assignment target binds (`a`, `a, (b, *c)`), not the
    names an attribute or subscript target reads (`cfg.rate = ...`)."""
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [name for element in target.elements for name in target_names(element.value)]
    if isinstance(target, cst.StarredElement):
        return target_names(target.value)
    return []


def module_names_bound_to_calls(
    module: cst.Module, names: NameResolver, accepts: Callable[[str | None], bool]
) -> set[str]:
    """Module-level names bound by `name = f(...)` where `accepts` the
    qualified name of `f`: a logger (`logger = logging.getLogger(...)`), a
    NumPy generator (`rng = np.random.default_rng(0)`)."""
    found: set[str] = set()
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if (
                isinstance(small, cst.Assign)
                and isinstance(small.value, cst.Call)
                and accepts(names.qualified_name(small.value.func))
            ):
                targets = (t.target for t in small.targets)
                found.update(t.value for t in targets if isinstance(t, cst.Name))
    return found
