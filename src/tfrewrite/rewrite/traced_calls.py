"""Calls to a module's functions in traced code, and binding their arguments.

Host-side libraries (`numpy.random`, `random`, NumPy math) run once, while a
function is traced. Rules that rewrite such calls into TensorFlow ops find them
with `iter_module_calls`, read their arguments with `bind` and, when a call
cannot be rewritten faithfully, raise `Refusal` with the reason, which ends up
in the finding's message.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import libcst as cst

from tfrewrite.facts.context import FunctionScope, RuleContext
from tfrewrite.facts.tensors import TensorFacts
from tfrewrite.facts.walk import iter_with_ancestors


class Refusal(Exception):
    """A call that cannot be rewritten faithfully; `str(self)` says why."""


# -- finding the calls ---------------------------------------------------------------


@dataclass(frozen=True)
class SampleSite:
    """A call to a random function in traced code.

    `target` is the node a fix replaces: the call itself, or the
    `<call>.astype(dtype)` call around it (whose dtype folds into `dtype=`).
    `ancestors` are the ancestors of `target`, outermost first.
    """

    call: cst.Call
    qualified: str
    target: cst.BaseExpression
    astype: cst.Call | None
    ancestors: tuple[cst.CSTNode, ...]
    facts: TensorFacts
    function: FunctionScope | None = None  # the innermost function around the call

    @property
    def function_name(self) -> str:
        """`normal` for `numpy.random.normal`."""
        return self.qualified.rsplit(".", 1)[-1]


def iter_module_calls(ctx: RuleContext, module_prefix: str) -> Iterator[SampleSite]:
    """Calls in traced code whose callee is `module_prefix.<name>`: the whole
    body of every outermost traced function, nested functions and lambdas
    included (they run traced too), except a nested function the project
    facts say runs eagerly (handed to `tf.py_function`). Default arguments
    and decorators are evaluated when the `def` runs, not traced, and are
    not visited."""
    for function in ctx.traced_functions():
        for node, ancestors in iter_with_ancestors(function.node.body, (function.node,)):
            if not isinstance(node, cst.Call):
                continue
            qualified = module_function(ctx, node, module_prefix)
            if qualified is not None and not _in_eager_function(ctx, ancestors):
                yield sample_site(ctx, function, node, qualified, tuple(ancestors))


def _in_eager_function(ctx: RuleContext, ancestors: Sequence[cst.CSTNode]) -> bool:
    """Whether a nested function among `ancestors` runs eagerly."""
    for node in ancestors[1:]:
        if isinstance(node, cst.FunctionDef):
            scope = ctx.scope_of(node)
            if scope is not None and scope.runs_traced is None:
                return True
    return False


def module_function(ctx: RuleContext, call: cst.Call, module_prefix: str) -> str | None:
    """The qualified name of `call`'s callee when it is a function of the
    module `module_prefix` (`numpy.random.normal`), else None: a method of
    one of its classes (`numpy.random.Generator.normal`) is not."""
    qualified = ctx.names.qualified_name(call.func)
    prefix = module_prefix + "."
    if qualified is None or not qualified.startswith(prefix) or "." in qualified[len(prefix) :]:
        return None
    return qualified


def sample_site(
    ctx: RuleContext,
    function: FunctionScope,
    call: cst.Call,
    qualified: str,
    ancestors: tuple[cst.CSTNode, ...],
) -> SampleSite:
    """A draw as a sample site: its target is the call, or the
    `<call>.astype(dtype)` around it (folded into `dtype=`)."""
    target: cst.BaseExpression = call
    astype: cst.Call | None = None
    target_ancestors = ancestors
    if (
        len(ancestors) >= 2
        and isinstance(ancestors[-1], cst.Attribute)
        and ancestors[-1].value is call
        and ancestors[-1].attr.value == "astype"
        and isinstance(ancestors[-2], cst.Call)
        and ancestors[-2].func is ancestors[-1]
    ):
        astype = ancestors[-2]
        target = astype
        target_ancestors = ancestors[:-2]
    scope = ctx.innermost_scope(function, ancestors)
    return SampleSite(call, qualified, target, astype, target_ancestors, ctx.tensors(scope), scope)


# -- binding arguments ---------------------------------------------------------------


def bind(call: cst.Call, params: Sequence[str], required: int = 0) -> dict[str, cst.BaseExpression]:
    """The argument expressions of `call` by parameter name, for a function
    whose parameters are `params` (positional-or-keyword, the first `required`
    of them without a default)."""
    bound: dict[str, cst.BaseExpression] = {}
    position = 0
    for arg in call.args:
        if arg.star:
            raise Refusal(
                f"the unpacked argument `{arg.star}{_code(arg.value)}` hides which "
                "parameters are passed"
            )
        if arg.keyword is None:
            if position >= len(params):
                raise Refusal(f"it takes at most {len(params)} positional arguments")
            bound[params[position]] = arg.value
            position += 1
            continue
        keyword = arg.keyword.value
        if keyword not in params:
            raise Refusal(f"the argument `{keyword}=` has no `tf.random` counterpart")
        bound[keyword] = arg.value
    missing = [p for p in params[:required] if p not in bound]
    if missing:
        raise Refusal(f"the required argument `{missing[0]}` is missing")
    return bound


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def is_none(node: cst.BaseExpression | None) -> bool:
    return node is None or (isinstance(node, cst.Name) and node.value == "None")


def is_number_literal(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
        node = node.expression
    return isinstance(node, (cst.Integer, cst.Float))


def is_integer_literal(node: cst.BaseExpression, value: int | None = None) -> bool:
    """An integer literal (optionally equal to `value`), a leading minus allowed."""
    sign = 1
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        sign, node = -1, node.expression
    if not isinstance(node, cst.Integer) or node.lpar:
        return False
    return value is None or sign * int(node.evaluated_value) == value
