"""Module names bound to Python literals: flags, numbers, strings.

A module-level `DEBUG = True` or `num_classes = 10` is a constant when no
other binding of the name gives it another value: TFR307 reads a flag bound
once to `True` as the literal itself, and TFR201 reports a literal the
module rebinds (its value is frozen at the first trace) unless every binding
restates the same literal (a notebook that sets `num_classes = 10` again in
a later section). Both read one record: every module-level binding of each
name, with the literal it binds.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from tfrewrite.facts.bindings import target_names
from tfrewrite.facts.walk import iter_small_statements, statement_children


def literal_source(node: cst.BaseExpression) -> str | None:
    """The source of a Python literal (`10`, `-1.0`, `"name"`, `True`,
    `None`), None for any other expression."""
    if _is_python_literal(node):
        return cst.Module([]).code_for_node(node)
    return None


def _is_python_literal(node: cst.BaseExpression) -> bool:
    if isinstance(node, (cst.Integer, cst.Float, cst.SimpleString, cst.ConcatenatedString)):
        return True
    if isinstance(node, cst.Name):
        return node.value in ("True", "False", "None")
    if isinstance(node, cst.UnaryOperation):
        return _is_python_literal(node.expression)
    return False


@dataclass(frozen=True)
class ModuleLiterals:
    """Every binding of each module name, as the source of the literal it
    binds or None for any other binding (another value, a tuple target, a
    loop variable, an augmented or bare annotated assignment, a `global`
    declaration)."""

    bindings: dict[str, tuple[str | None, ...]]

    def literal_names(self) -> set[str]:
        """Names some binding of which is a literal: the values tracing freezes."""
        return {
            name
            for name, values in self.bindings.items()
            if any(value is not None for value in values)
        }

    def constants(self) -> dict[str, str]:
        """name -> literal for names every binding of which is that same
        literal: bound more than once, yet never to another value, nothing
        is frozen."""
        return {
            name: values[0]
            for name, values in self.bindings.items()
            if values[0] is not None and len(set(values)) == 1
        }


def module_literals(module: cst.Module) -> ModuleLiterals:
    """The module-level bindings of `module` (compound statements included,
    not the bodies of functions and classes) with the literal each binds,
    and every `global` declaration as a binding of no known value."""
    found: dict[str, list[str | None]] = {}

    def add(names: list[str], value: str | None) -> None:
        for name in names:
            found.setdefault(name, []).append(value)

    for small in iter_small_statements(module, into_functions=True):
        if isinstance(small, cst.Global):
            add([item.name.value for item in small.names], None)
    stack: list[cst.CSTNode] = list(module.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            continue
        if isinstance(node, cst.For):
            add(target_names(node.target), None)
        if isinstance(node, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            for small in node.body:
                if isinstance(small, cst.Assign):
                    value = literal_source(small.value)
                    for target in small.targets:
                        add(target_names(target.target), value)
                elif isinstance(small, (cst.AugAssign, cst.AnnAssign)):
                    literal = None
                    if isinstance(small, cst.AnnAssign) and small.value is not None:
                        literal = literal_source(small.value)
                    add(target_names(small.target), literal)
            continue
        stack.extend(statement_children(node))
    return ModuleLiterals({name: tuple(values) for name, values in found.items()})
