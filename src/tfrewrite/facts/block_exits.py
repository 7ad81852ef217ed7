"""Whether a block of statements leaves on every path: the control-flow fact
a `tf.cond` rewrite asks of a branch (it returns or raises, so nothing after
the `if` runs there), and TFR207 asks of an `except` handler (it raises
again, so the failure is the same traced or eager). Syntactic and
conservative: a construct not understood does not leave."""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

Statement = cst.BaseStatement
# What leaves a block for `always_exits` by default.
RETURN_OR_RAISE = (cst.Return, cst.Raise)


def block_statements(suite: cst.BaseSuite | cst.Else | cst.If | None) -> list[Statement]:
    """The statements of an `if`/`else` body as a list; an `elif` is the one
    statement of the `else` it stands for; a one-line suite becomes a line."""
    if suite is None:
        return []
    if isinstance(suite, cst.If):
        return [suite]
    if isinstance(suite, cst.Else):
        return block_statements(suite.body)
    if isinstance(suite, cst.IndentedBlock):
        return list(suite.body)
    if isinstance(suite, cst.SimpleStatementSuite):
        return [cst.SimpleStatementLine(body=suite.body)]
    return []


def small_statements(statement: Statement) -> Sequence[cst.BaseSmallStatement]:
    return statement.body if isinstance(statement, cst.SimpleStatementLine) else ()


def always_exits(
    statements: Sequence[Statement],
    exits: tuple[type[cst.BaseSmallStatement], ...] = RETURN_OR_RAISE,
) -> bool:
    """Every path through `statements` ends in one of `exits` (a `return` or
    a `raise`; `(cst.Raise,)` for a handler that must fail again)."""
    for statement in statements:
        if any(isinstance(s, exits) for s in small_statements(statement)):
            return True
        if isinstance(statement, cst.If) and statement.orelse is not None:
            if always_exits(block_statements(statement.body), exits) and always_exits(
                block_statements(statement.orelse), exits
            ):
                return True
        if isinstance(statement, cst.With) and always_exits(
            block_statements(statement.body), exits
        ):
            return True
    return False
