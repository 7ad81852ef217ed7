"""Rewriting an `if` that returns as `return tf.cond(...)`.

As AutoGraph's `return_statements` converter does, early returns are made
explicit first: the statements after an `if` whose branch may return move
into each branch that falls through, so every branch ends in a `return` and
the `if` ends the function. Then each branch becomes a lambda (one returned
expression) or a small function, and the values both branches return must
agree in dtype.
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from tfrewrite.facts.block_exits import Statement, always_exits, block_statements
from tfrewrite.rewrite.fixes import NodeEdit
from tfrewrite.rules.tensor_conditions.cond_codegen import (
    Branch,
    Refusal,
    ReturnNormalizer,
    UnmergeableBranches,
    assemble,
    branch_value_code,
    cond_call,
    function_branch,
    has_comment,
    lambda_branch,
    template,
)
from tfrewrite.rules.tensor_conditions.cond_dtypes import match_dtypes, value_kind
from tfrewrite.rules.tensor_conditions.cond_effects import branch_problem
from tfrewrite.rules.tensor_conditions.cond_flow import (
    Placement,
    assigned_names,
    is_generator,
    returns_in,
)
from tfrewrite.rules.tensor_conditions.cond_site import CondSite


def rewrite_returning(
    site: CondSite, node: cst.If, place: Placement, condition: str
) -> list[NodeEdit]:
    for compound in place.compounds:
        if not isinstance(compound, (cst.If, cst.With)):
            kind = type(compound).__name__.lower()
            raise Refusal(
                f"it returns from inside a `{kind}` block, so the rest of the function "
                "cannot move into its branches"
            )
    if is_generator(site.scope.node):
        raise Refusal("the function is a generator, where `return` ends the iteration")
    function_body = site.scope.node.body
    if not isinstance(function_body, cst.IndentedBlock):
        raise Refusal("the function body is on one line")
    statements = list(function_body.body)
    anchor = place.top_level_index
    defined = site.defined_before(place)

    def convert(normalized: cst.If) -> list[Statement]:
        return _returning_cond(site, normalized, node, place, condition, defined)

    normalizer = ReturnNormalizer(node, convert)
    new_tail = normalizer.block(statements[anchor:])
    edits = [NodeEdit(statements[anchor], cst.FlattenSentinel(new_tail))]
    edits += [NodeEdit(s, cst.RemovalSentinel.REMOVE) for s in statements[anchor + 1 :]]
    return edits


def _returning_cond(
    site: CondSite,
    normalized: cst.If,
    original: cst.If,
    place: Placement,
    condition: str,
    defined: set[str],
) -> list[Statement]:
    sides = {
        "true": block_statements(normalized.body),
        "false": block_statements(normalized.orelse),
    }
    for side, statements in sides.items():
        other = "false" if side == "true" else "true"
        if not always_exits(statements):
            raise Refusal(
                f"the {other} branch returns a value but the {side} branch does not, and "
                "nothing after the `if` returns"
            )
        for ret in _returns(statements):
            if ret.value is None:
                raise Refusal(f"the {side} branch has a `return` without a value")
        problem = branch_problem(
            statements, site.ctx.names, side, allow_return=True
        ) or site.branch_scope_problem(side, statements)
        if problem:
            raise Refusal(problem)
        for inner in statements:
            if site.nested_tensor_conditionals(cst.Module(body=[inner])):
                raise Refusal(
                    f"the {side} branch would hold another tensor `if` (rewrite that first)"
                )
    sides = _reconcile_returns(site, sides)
    branches = {}
    for side, statements in sides.items():
        suite = normalized.body if side == "true" else normalized.orelse
        branches[side] = _return_branch(site, side, statements, suite, defined, place)
    prefix = "return "
    text = cond_call(
        site.tf, condition, branches["true"], branches["false"], prefix, site.indent_of(place)
    )
    return assemble(branches["true"], branches["false"], text, original.leading_lines)


def _reconcile_returns(
    site: CondSite, sides: dict[str, list[Statement]]
) -> dict[str, list[Statement]]:
    """Match the dtypes of what the branches return: a Python number facing
    a floating-point tensor takes its dtype."""
    values = {side: [r.value for r in _returns(s)] for side, s in sides.items()}
    unstable = assigned_names(cst.Module(body=[*sides["true"], *sides["false"]]))
    replace: dict[int, cst.BaseExpression] = {}
    for t in values["true"]:
        for f in values["false"]:
            assert t is not None and f is not None
            pairs = _element_pairs(t, f)
            if pairs is None:
                raise Refusal("the branches return tuples of different lengths")
            for a, b in pairs:
                kinds = (value_kind(a, site.facts), value_kind(b, site.facts))
                try:
                    matched = match_dtypes(
                        "the value returned", (a, b), kinds, site.facts, unstable, site.tf
                    )
                except UnmergeableBranches:
                    raise
                except ValueError as error:
                    raise Refusal(str(error)) from None
                replace.update(matched.replace)
                site.note_unsafe(matched.unsafe)
    if not replace:
        return sides
    transformer = _Replace(replace)
    return {
        side: [s.visit(transformer) for s in statements]  # type: ignore[misc]
        for side, statements in sides.items()
    }


def _return_branch(
    site: CondSite,
    side: str,
    statements: list[Statement],
    suite: cst.BaseSuite | cst.If | cst.Else | None,
    defined: set[str],
    place: Placement,
) -> Branch:
    only = statements[0] if len(statements) == 1 else None
    if (
        only is not None
        and isinstance(only, cst.SimpleStatementLine)
        and len(only.body) == 1
        and isinstance(only.body[0], cst.Return)
        and not has_comment(only, suite if isinstance(suite, cst.BaseSuite) else None)
        and not (isinstance(suite, cst.Else) and has_comment(suite))
    ):
        value = only.body[0].value
        assert value is not None
        # A multi-line expression reads better in a function, unless it is a
        # `tf.cond` an earlier round wrote for a nested conditional.
        code = branch_value_code(site.ctx, value, site.tf, site.indent_of(place) + 4)
        if code is not None:
            return lambda_branch([code])
    params = site.params(side, statements, [], defined)
    name = site.function_name(side, [], place)
    suite_template, leading = template(suite)
    return function_branch(name, params, statements, None, suite_template, leading)


def _returns(statements: Sequence[Statement]) -> list[cst.Return]:
    return [r for s in statements for r in returns_in(s)]


def _element_pairs(
    a: cst.BaseExpression, b: cst.BaseExpression
) -> list[tuple[cst.BaseExpression, cst.BaseExpression]] | None:
    if isinstance(a, cst.Tuple) and isinstance(b, cst.Tuple):
        if len(a.elements) != len(b.elements):
            return None
        return [(x.value, y.value) for x, y in zip(a.elements, b.elements, strict=True)]
    return [(a, b)]


class _Replace(cst.CSTTransformer):
    """Replace expressions by identity."""

    def __init__(self, replace: dict[int, cst.BaseExpression]) -> None:
        self.replace = replace

    def on_leave(self, original_node, updated_node):  # type: ignore[override]
        return self.replace.get(id(original_node), updated_node)
