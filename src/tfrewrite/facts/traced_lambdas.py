"""Lambdas that run traced: handed to `compile`, `Dataset.map`/`filter`,
`keras.layers.Lambda`, `tf.map_fn` and friends, or `strategy.run`.

Pass 1 records them (`ModuleIndex.traced_lambdas`, by their source); here each
becomes a `FunctionScope` around a stand-in `def` whose body returns the
lambda's own body node, so the tensor analysis can ask about its parameters
(what the tracer passes) and the code it closes over. The stand-in is not in
the module: findings may point at nodes of the lambda's body, but no fix may
edit the stand-in itself.
"""

from __future__ import annotations

import ast

import libcst as cst

from tfrewrite.facts.context import FunctionScope, RuleContext
from tfrewrite.facts.index_records import TracedLambda
from tfrewrite.facts.traced_function import TracedFunction
from tfrewrite.facts.walk import iter_nodes


def _normalized(code: str) -> str | None:
    try:
        return ast.unparse(ast.parse(code.strip(), mode="eval").body)
    except SyntaxError:
        return None


def _param_names(source: str) -> list[str]:
    """Positional parameters of a lambda written by `ast.unparse`."""
    try:
        node = ast.parse(source, mode="eval").body
    except SyntaxError:
        return []
    if not isinstance(node, ast.Lambda):
        return []
    return [a.arg for a in [*node.args.posonlyargs, *node.args.args]]


def _traced(name: str, site: TracedLambda, params: list[str]) -> TracedFunction:
    """What the tracer passes to the lambda's positional parameters."""
    tensors: list[str] = []
    likely: list[str] = []
    if site.arguments == "tensor":
        tensors = params
    elif site.arguments == "first":
        tensors = params[:1]
    elif site.arguments == "pair":
        tensors = params[:2]
    elif site.arguments == "likely":
        likely = params
    return TracedFunction(
        name,
        site.reason,
        is_loss=site.arguments == "loss",
        tensor_params=frozenset(tensors),
        likely_params=frozenset(likely),
    )


def traced_lambda_scopes(ctx: RuleContext) -> list[tuple[cst.Lambda, FunctionScope]]:
    """Each traced lambda of the module with a scope for its tensor facts."""
    if not ctx.index.traced_lambdas:
        return []
    sites = {site.source: site for site in ctx.index.traced_lambdas}
    # Parameter lists of the traced lambdas: a cheap test before the source
    # of a lambda is normalized and compared.
    heads = {tuple(_param_names(site.source)) for site in ctx.index.traced_lambdas}
    found: list[tuple[cst.Lambda, FunctionScope]] = []
    # Each function's own code (and the module's), so a lambda is seen once,
    # with the function around it.
    owners: list[tuple[cst.CSTNode, FunctionScope | None]] = [(ctx.module, None)]
    owners += [(function.node.body, function) for function in ctx.functions]
    for root, parent in owners:
        for node in iter_nodes(root, into_functions=False):
            if not isinstance(node, cst.Lambda):
                continue
            params = node.params
            names = tuple(p.name.value for p in [*params.posonly_params, *params.params])
            if names not in heads:
                continue
            site = sites.get(_normalized(ctx.code(node)) or "")
            if site is not None:
                found.append((node, _scope(node, site, parent)))
    return found


def _scope(node: cst.Lambda, site: TracedLambda, parent: FunctionScope | None) -> FunctionScope:
    """A scope for the lambda: a stand-in `def` returning its body node."""
    stand_in = cst.FunctionDef(
        name=cst.Name("_lambda"),
        params=node.params,
        body=cst.IndentedBlock(body=[cst.SimpleStatementLine(body=[cst.Return(node.body)])]),
    )
    params = [p.name.value for p in [*node.params.posonly_params, *node.params.params]]
    return FunctionScope(stand_in, "<lambda>", None, parent, _traced("<lambda>", site, params))
