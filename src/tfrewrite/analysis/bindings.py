"""Every binding of a function's local names, with the value each assigns.

A rewrite that follows a name to its value (`size_out = list(x.shape[:-1])
+ [n]` given as a shape, `loss_value = loss.numpy()` printed later, `err =
np.square(...)` averaged) may do so only when that value is the name's one
binding in the function: any other way of binding it (a tuple target, a
loop, `with ... as`, an import, a nested `def`) makes the value unknown.
"""

from __future__ import annotations

import libcst as cst

from tfrewrite.analysis.walk import iter_nodes


def local_bindings(function: cst.FunctionDef) -> dict[str, list[cst.BaseExpression | None]]:
    """Every binding of each local name of `function` (nested functions and
    classes excluded): the assigned value for `name = value`, None for any
    other way of binding it (augmented assignment, tuple target, loop
    variable, `with ... as`, walrus, import, nested `def`, ...)."""
    bindings: dict[str, list[cst.BaseExpression | None]] = {}

    def unknown(target: cst.CSTNode | None) -> None:
        for node in iter_nodes(target) if target is not None else ():
            if isinstance(node, cst.Name):
                bindings.setdefault(node.value, []).append(None)

    for node in iter_nodes(function.body, into_functions=False):
        if isinstance(node, cst.Assign):
            for target in node.targets:
                if isinstance(target.target, cst.Name):
                    bindings.setdefault(target.target.value, []).append(node.value)
                elif isinstance(target.target, (cst.Tuple, cst.List, cst.StarredElement)):
                    unknown(target.target)
        elif isinstance(node, cst.AnnAssign) and isinstance(node.target, cst.Name):
            bindings.setdefault(node.target.value, []).append(node.value)
        elif isinstance(node, (cst.AugAssign, cst.For, cst.CompFor, cst.NamedExpr)):
            unknown(node.target)
        elif isinstance(node, cst.WithItem) and node.asname is not None:
            unknown(node.asname.name)
        elif isinstance(node, cst.ExceptHandler) and node.name is not None:
            unknown(node.name.name)
        elif isinstance(node, (cst.Import, cst.ImportFrom)) and not isinstance(
            node.names, cst.ImportStar
        ):
            for alias in node.names:
                unknown(alias.asname.name if alias.asname else alias.name)
        elif isinstance(node, (cst.Global, cst.Nonlocal)):
            for item in node.names:
                unknown(item.name)
        elif isinstance(node, (cst.FunctionDef, cst.ClassDef)) and node is not function:
            unknown(node.name)
        elif isinstance(node, (cst.MatchAs, cst.MatchStar)) and node.name is not None:
            unknown(node.name)
    return bindings


def single_values(function: cst.FunctionDef) -> dict[str, cst.BaseExpression]:
    """Local names of `function` bound exactly once, by `name = value`
    (parameters excluded: the call binds them too), with that value."""
    params = {p.name.value for p in _params(function.params)}
    return {
        name: values[0]
        for name, values in local_bindings(function).items()
        if len(values) == 1 and values[0] is not None and name not in params
    }


def _params(params: cst.Parameters) -> list[cst.Param]:
    found = [*params.posonly_params, *params.params, *params.kwonly_params]
    found += [p for p in (params.star_arg, params.star_kwarg) if isinstance(p, cst.Param)]
    return found
