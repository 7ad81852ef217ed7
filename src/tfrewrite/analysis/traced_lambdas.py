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

from tfrewrite.analysis.index import TracedLambda
from tfrewrite.analysis.project import TracedFunction
from tfrewrite.analysis.walk import iter_with_ancestors
from tfrewrite.context import FunctionScope, RuleContext


def _normalized(code: str) -> str | None:
    try:
        return ast.unparse(ast.parse(code.strip(), mode="eval").body)
    except SyntaxError:
        return None


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
    found: list[tuple[cst.Lambda, FunctionScope]] = []
    for node, ancestors in iter_with_ancestors(ctx.module):
        if not isinstance(node, cst.Lambda):
            continue
        site = sites.get(_normalized(ctx.code(node)) or "")
        if site is None:
            continue
        outer = next((a for a in reversed(ancestors) if isinstance(a, cst.FunctionDef)), None)
        parent = ctx.scope_of(outer) if outer is not None else None
        stand_in = cst.FunctionDef(
            name=cst.Name("_lambda"),
            params=node.params,
            body=cst.IndentedBlock(body=[cst.SimpleStatementLine(body=[cst.Return(node.body)])]),
        )
        params = [p.name.value for p in [*node.params.posonly_params, *node.params.params]]
        traced = _traced("<lambda>", site, params)
        found.append((node, FunctionScope(stand_in, "<lambda>", None, parent, traced)))
    return found
