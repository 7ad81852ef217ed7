"""What one statement does with each name, as the dtype inference of a
rewritten `if` asks it (`cond_assign.met_tensor`): how often it reads a
name, which builtins it hands a name to, what a name meets in arithmetic or
a comparison, and which names it assigns.

A `CondSite` gathers this once per statement of its function (a function
with many conditionals asks it of the same statements after each of them);
its own module so that the site can hold it without depending on the
assignment rewrite that reads it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from tfrewrite.facts.walk import iter_nodes
from tfrewrite.rules.tensor_conditions.cond_flow import assigned_names

# Builtins that need a Python value: a tensor there needs AutoGraph or fails.
_HOST_BUILTINS = frozenset(
    {"range", "int", "float", "bool", "len", "round", "list", "tuple", "str", "enumerate"}
)


@dataclass
class StatementUses:
    """What `met_tensor` looks for in one statement (nested functions
    excluded), gathered once per statement: a function with many
    conditionals asks it of the same statements after each of them."""

    names: dict[str, int] = field(default_factory=dict)  # `Name` nodes per value
    host_calls: dict[str, list[str]] = field(default_factory=dict)  # name -> builtins given it
    operands: dict[str, list[cst.BaseExpression]] = field(default_factory=dict)
    assigned: frozenset[str] = frozenset()


def statement_uses(statement: cst.CSTNode) -> StatementUses:
    uses = StatementUses(assigned=frozenset(assigned_names(cst.Module(body=[statement]))))
    for node in iter_nodes(cst.Module(body=[statement]), into_functions=False):
        if isinstance(node, cst.Name):
            uses.names[node.value] = uses.names.get(node.value, 0) + 1
        if (
            isinstance(node, cst.Call)
            and isinstance(node.func, cst.Name)
            and node.func.value in _HOST_BUILTINS
        ):
            for arg in node.args:
                if isinstance(arg.value, cst.Name):
                    uses.host_calls.setdefault(arg.value.value, []).append(node.func.value)
        pairs: list[tuple[cst.BaseExpression, cst.BaseExpression]] = []
        if isinstance(node, cst.BinaryOperation):
            pairs = [(node.left, node.right), (node.right, node.left)]
        elif isinstance(node, cst.Comparison) and len(node.comparisons) == 1:
            other = node.comparisons[0].comparator
            pairs = [(node.left, other), (other, node.left)]
        for own, other in pairs:
            if isinstance(own, cst.Name):
                uses.operands.setdefault(own.value, []).append(other)
    return uses
