"""What a `tf.cond` branch may not do.

Tracing runs both branches of a `tf.cond` once, whichever way the condition
goes, and runs each as a function. So a branch may hold TensorFlow ops and
variable updates (they stay in the graph and run only when taken), but not
Python effects (`print`, appends, attribute or item assignment, `del`,
`raise`), which would run for both branches at trace time, nor control flow
that leaves the branch (`break`, `continue`, `yield`, `return` where the `if`
does not end the function).
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from tfrewrite.facts.block_exits import Statement
from tfrewrite.facts.names import NameResolver
from tfrewrite.facts.prefilters import MUTATING_METHODS
from tfrewrite.facts.vocabulary import VARIABLE_WRITES
from tfrewrite.facts.walk import child_nodes

_LOOPS = (cst.For, cst.While)
_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)

# -- what a branch may not do --------------------------------------------------------


def branch_problem(
    statements: Sequence[Statement],
    resolver: NameResolver,
    branch: str,
    allow_return: bool,
    expression: bool = False,
) -> str | None:
    """Why `statements` cannot become a branch function, or None. With
    `expression`, the statements wrap the two values of `A if c else B`,
    whose calls are made for their values, not their effects."""
    for statement in statements:
        problem = _statement_problem(statement, resolver, branch, allow_return, False, expression)
        if problem:
            return problem
    return None


def _statement_problem(
    node: cst.CSTNode,
    resolver: NameResolver,
    branch: str,
    allow_return: bool,
    in_loop: bool,
    expression: bool = False,
) -> str | None:
    if isinstance(node, _SCOPES):
        return None
    if isinstance(node, (cst.Break, cst.Continue)) and not in_loop:
        word = "break" if isinstance(node, cst.Break) else "continue"
        return f"the {branch} branch contains `{word}`, which cannot leave a `tf.cond` branch"
    if isinstance(node, (cst.Yield, cst.Await)):
        word = "yield" if isinstance(node, cst.Yield) else "await"
        return f"the {branch} branch contains `{word}`"
    if isinstance(node, (cst.Global, cst.Nonlocal)):
        word = "global" if isinstance(node, cst.Global) else "nonlocal"
        return f"the {branch} branch declares `{word}` names, which a branch function cannot update"
    if isinstance(node, cst.Return) and not allow_return:
        return f"the {branch} branch returns while the `if` does not end the function"
    if isinstance(node, (cst.Raise, cst.Assert)):
        word = "raise" if isinstance(node, cst.Raise) else "assert"
        return (
            f"the {branch} branch uses `{word}`, which tracing would run for both branches "
            "(use `tf.debugging` assertions)"
        )
    if isinstance(node, cst.Del):
        return (
            f"the {branch} branch uses `del`, a Python side effect tracing would run for "
            "both branches"
        )
    if isinstance(node, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
        targets = (
            [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
        )
        for target in targets:
            for part in _flatten_target(target):
                if isinstance(part, (cst.Attribute, cst.Subscript)):
                    return (
                        f"the {branch} branch assigns `{_code(part)}`, a Python side effect "
                        "tracing would run for both branches"
                    )
    if isinstance(node, cst.Call):
        problem = _call_problem(node, resolver, branch)
        if problem:
            return problem
    if isinstance(node, cst.Expr) and isinstance(node.value, cst.Call) and not expression:
        problem = _call_problem(node.value, resolver, branch) or _expression_call_problem(
            node.value, resolver, branch
        )
        if problem:
            return problem
    loop = in_loop or isinstance(node, _LOOPS)
    for child in child_nodes(node):
        inner_loop = in_loop if child is getattr(node, "orelse", None) else loop
        problem = _statement_problem(child, resolver, branch, allow_return, inner_loop, expression)
        if problem:
            return problem
    return None


def _flatten_target(target: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(target, (cst.Tuple, cst.List)):
        return [p for e in target.elements for p in _flatten_target(e.value)]
    if isinstance(target, cst.StarredElement):
        return _flatten_target(target.value)
    return [target]


def _call_problem(call: cst.Call, resolver: NameResolver, branch: str) -> str | None:
    func = call.func
    if (
        isinstance(func, cst.Name)
        and func.value == "print"
        and resolver.qualified_name(func) is None
    ):
        return (
            f"the {branch} branch calls `print`, which tracing runs once for both branches "
            "(use `tf.print`)"
        )
    # A container's mutation: tracing would run it for both branches.
    if isinstance(func, cst.Attribute) and func.attr.value in MUTATING_METHODS:
        qualified = resolver.qualified_name(func)
        if not (qualified and qualified.startswith("tensorflow.")):
            return (
                f"the {branch} branch calls `{_code(func)}`, a Python side effect "
                "tracing would run for both branches"
            )
    return None


def _expression_call_problem(call: cst.Call, resolver: NameResolver, branch: str) -> str | None:
    """A call made for its effect: TensorFlow ops and variable updates stay in
    the branch function; anything else may be a Python side effect."""
    qualified = resolver.qualified_name(call.func)
    if qualified and qualified.startswith(("tensorflow.", "keras.")):
        return None
    if isinstance(call.func, cst.Attribute) and call.func.attr.value in VARIABLE_WRITES:
        return None
    return (
        f"the {branch} branch calls `{_code(call.func)}` for its effect, which tracing "
        "would run for both branches"
    )


def _code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)
