"""Writing `tf.cond` the way a careful engineer would.

A branch that computes one expression per output becomes a `lambda`; a
block becomes a small function defined right before the `tf.cond` that uses
it, keeping the original statements (and their comments) as they were. A
name the branch reads before assigning becomes a parameter of that function,
because a name assigned anywhere in a Python function is local to all of it.

Early returns are made explicit first (AutoGraph's `return_statements`
converter does the same with flags): the statements after an `if` whose
branch may return move into each branch that falls through, so every branch
ends in a `return` and the `if` ends the function.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import libcst as cst

from tfrewrite.facts.block_exits import Statement, always_exits, block_statements
from tfrewrite.facts.context import RuleContext
from tfrewrite.facts.names import NameResolver
from tfrewrite.facts.walk import comments_in, iter_nodes
from tfrewrite.rules.tensor_conditions.cond_flow import (
    contains_return,
)

MAX_LINE = 88
# Statements after an early-return `if` may be copied into both of its
# branches; beyond this many copies, the rewrite would read worse than the
# original.
MAX_DUPLICATED_STATEMENTS = 4


class Refusal(Exception):
    """A rewrite that cannot be done; the message is the finding's reason."""


class UnmergeableBranches(Refusal, ValueError):
    """The branches give values no conditional can merge (a tensor against
    `None`, a string, a Python container): AutoGraph's own conversion fails
    on them too, so the original runs only where its condition is Python."""


def has_comment(*nodes: cst.CSTNode | None) -> bool:
    """Whether any of `nodes` holds a comment (a lambda would lose it)."""
    return any(comments_in(n) for n in nodes if n is not None)


def statement(code: str) -> Statement:
    return cst.parse_statement(code)


# -- branch functions ------------------------------------------------------------------


@dataclass(frozen=True)
class Branch:
    """One branch, ready to be written: either a lambda body or a function."""

    callable_code: str  # what goes into `tf.cond(...)`: `lambda: x` or `_true_fn`
    definition: cst.FunctionDef | None = None


def lambda_branch(expressions: Sequence[str]) -> Branch:
    if not expressions:
        return Branch("lambda: None")
    if len(expressions) == 1:
        return Branch(f"lambda: {expressions[0]}")
    return Branch(f"lambda: ({', '.join(expressions)})")


def function_branch(
    name: str,
    params: Sequence[str],
    statements: Sequence[Statement],
    returned: str | None,
    template: cst.BaseSuite | None,
    leading_lines: Sequence[cst.EmptyLine] = (),
) -> Branch:
    """`def name(params): <statements>; return <returned>`; `template` is the
    original suite, whose header comment (`if c:  # note`) and footer stay."""
    body = list(statements)
    if returned is not None:
        body.append(statement(f"return {returned}\n"))
    if not body:
        body.append(statement("pass\n"))
    if isinstance(template, cst.IndentedBlock):
        suite = template.with_changes(body=body, indent=None)
    else:
        suite = cst.IndentedBlock(body=body)
    definition = cst.ensure_type(
        statement(f"def {name}({', '.join(params)}):\n    pass\n"), cst.FunctionDef
    )
    definition = definition.with_changes(body=suite, leading_lines=list(leading_lines))
    call = f"lambda: {name}({', '.join(params)})" if params else name
    return Branch(call, definition)


def cond_call(
    tf: str, condition: str, true: Branch, false: Branch, prefix: str, indent: int
) -> str:
    """`<prefix>tf.cond(c, t, f)`, one argument per line when too long (an
    argument that is itself a multi-line `tf.cond` is indented one more level)."""
    parts = (condition, true.callable_code, false.callable_code)
    one_line = f"{prefix}{tf}.cond({', '.join(parts)})"
    if "\n" not in one_line and len(one_line) + indent <= MAX_LINE:
        return one_line
    args = "".join(textwrap.indent(f"{a},", "    ") + "\n" for a in parts)
    return f"{prefix}{tf}.cond(\n{args})"


def branch_value_code(
    ctx: RuleContext, node: cst.BaseExpression, tf: str, indent: int
) -> str | None:
    """A branch value as lambda-body text (`indent`: the column its `lambda:`
    starts at):
    its source when on one line; a
    `tf.cond` (one an earlier round wrote for a nested conditional) laid out
    again for its new depth; None for other multi-line values, which read
    better as a function."""
    code = expression_code(ctx, node)
    fits = "\n" not in code and len("lambda: ") + len(code) + indent <= MAX_LINE
    if fits or not _is_cond_call(ctx, node):
        return code if "\n" not in code else None
    assert isinstance(node, cst.Call)
    parts: list[str] = []
    for position, arg in enumerate(node.args):
        value = arg.value
        if position > 0 and isinstance(value, cst.Lambda) and not _has_params(value):
            body = branch_value_code(ctx, value.body, tf, indent + 4)
            if body is None:
                return None
            parts.append(f"lambda: {body}")
            continue
        text = expression_code(ctx, value)
        if "\n" in text:
            return None
        parts.append(text)
    condition, true, false = parts
    return cond_call(tf, condition, Branch(true), Branch(false), "", indent + len("lambda: "))


def _is_cond_call(ctx: RuleContext, node: cst.BaseExpression) -> bool:
    return (
        isinstance(node, cst.Call)
        and ctx.names.qualified_name(node.func) in ("tensorflow.cond", "keras.ops.cond")
        and len(node.args) == 3
        and all(a.keyword is None and not a.star for a in node.args)
        and not has_comment(node)
    )


def _has_params(node: cst.Lambda) -> bool:
    p = node.params
    return bool(p.posonly_params or p.params or p.kwonly_params or p.star_kwarg) or isinstance(
        p.star_arg, cst.Param
    )


def assemble(
    true: Branch,
    false: Branch,
    cond_statement: str,
    leading_lines: Sequence[cst.EmptyLine],
) -> list[Statement]:
    """The branch functions (if any), then the `tf.cond` statement; the
    comments above the original `if` go above the first of them."""
    result: list[Statement] = [b.definition for b in (true, false) if b.definition is not None]
    result.append(statement(cond_statement + "\n"))
    if leading_lines:
        first = result[0]
        result[0] = first.with_changes(leading_lines=[*leading_lines, *first.leading_lines])
    return result


# -- early returns ---------------------------------------------------------------------


def _suite(original: cst.BaseSuite, statements: list[Statement]) -> cst.BaseSuite:
    if isinstance(original, cst.IndentedBlock):
        return original.with_changes(body=statements)
    return cst.IndentedBlock(body=statements)


def _orelse(
    original: cst.If | cst.Else | None, statements: list[Statement]
) -> cst.If | cst.Else | None:
    if not statements:
        return None
    if isinstance(original, cst.If) and len(statements) == 1 and isinstance(statements[0], cst.If):
        return statements[0]  # still an `elif`
    if isinstance(original, cst.Else):
        return original.with_changes(body=_suite(original.body, statements))
    return cst.Else(body=cst.IndentedBlock(body=statements))


class ReturnNormalizer:
    """Rewrites a tail of a function so that every `if` that may return ends
    the function, and turns `target` (wherever it lands, possibly in several
    copies) into statements with `convert`."""

    def __init__(self, target: cst.If, convert: Callable[[cst.If], list[Statement]]) -> None:
        self.target = target
        self.convert = convert
        self.duplicated = 0

    def block(self, statements: Sequence[Statement]) -> list[Statement]:
        for i, current in enumerate(statements):
            if isinstance(current, cst.If) and contains_return(current):
                return [*statements[:i], *self.if_(current, list(statements[i + 1 :]))]
            if isinstance(current, cst.With) and contains_return(current):
                rest = list(statements[i + 1 :])
                return [*statements[:i], self.with_(current, rest), *rest]
        return list(statements)

    def with_(self, node: cst.With, rest: list[Statement]) -> Statement:
        """A `with` block that may return: code after it cannot move inside
        (the context would then cover it), so it must be unreachable; it
        stays where it is."""
        body = block_statements(node.body)
        if rest and not always_exits(body):
            raise Refusal(
                "code after a `with` block that returns on some paths cannot move into the block"
            )
        return node.with_changes(body=_suite(node.body, self.block(body)))

    def if_(self, node: cst.If, rest: list[Statement]) -> list[Statement]:
        body = block_statements(node.body)
        other = block_statements(node.orelse)
        body_falls = not always_exits(body)
        other_falls = not always_exits(other)
        if rest and body_falls and other_falls:
            self.duplicated += len(rest)
            if self.duplicated > MAX_DUPLICATED_STATEMENTS:
                raise Refusal(
                    f"the {len(rest)} statements after an `if` that returns on some paths would "
                    "have to be copied into both of its branches"
                )
        new_body = self.block(body + rest if body_falls else body)
        new_other = self.block(other + rest if other_falls else other)
        new_node = node.with_changes(
            body=_suite(node.body, new_body), orelse=_orelse(node.orelse, new_other)
        )
        if node is self.target:
            return self.convert(new_node)
        return [new_node]


# -- source text ---------------------------------------------------------------------


def template(
    suite: cst.BaseSuite | cst.If | cst.Else | None,
) -> tuple[cst.BaseSuite | None, list[cst.EmptyLine]]:
    if isinstance(suite, cst.Else):
        return suite.body, list(suite.leading_lines)
    if isinstance(suite, cst.BaseSuite):
        return suite, []
    return None, []


def expression_code(ctx: RuleContext, node: cst.BaseExpression) -> str:
    code = ctx.code(node).strip()
    if isinstance(node, cst.Tuple) and not node.lpar:
        return f"({code})"
    return code


def lambda_body(ctx: RuleContext, node: cst.BaseExpression) -> str:
    """A value as a lambda body: without redundant outer parentheses."""
    if node.lpar and not isinstance(node, (cst.Tuple, cst.GeneratorExp, cst.Lambda, cst.NamedExpr)):
        node = node.with_changes(lpar=[], rpar=[])
    return expression_code(ctx, node)


def walrus_target(node: cst.CSTNode) -> str | None:
    """The name the first `:=` in `node` binds in the enclosing scope (one
    inside a nested function or lambda binds there, and does not count)."""
    for current in iter_nodes(node, into_functions=False):
        if isinstance(current, cst.NamedExpr) and isinstance(current.target, cst.Name):
            return current.target.value
    return None


def is_keras_ops(namespace: str, resolver: NameResolver) -> bool:
    """Whether generated code calls `keras.ops` (a loss written only with
    `keras.ops` keeps running on every Keras backend) rather than TensorFlow."""
    qualified = resolver.qualified_name(cst.parse_expression(namespace))
    return qualified in ("keras.ops", "tensorflow.keras.ops")
