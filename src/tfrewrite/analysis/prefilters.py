"""Pass-1 questions that let a rule skip a file without parsing it with LibCST.

Parsing with LibCST is most of the cost of a check, and most files that a
rule could look at hold nothing it reports. These helpers answer, from the
standard `ast` tree or the `ModuleIndex`, questions whose "no" proves a rule
has nothing to find; every "maybe" keeps the file. They must stay at least as
generous as the rules they guard: a test per prefilter checks a file it must
not skip.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tfrewrite.analysis.index import ModuleIndex

# Builtins whose result is a Python value whatever they are given (the
# tensor analysis treats every call outside the TensorFlow namespaces so).
_PYTHON_VALUED_BUILTINS = frozenset({"isinstance", "issubclass", "hasattr", "callable", "len"})


def condition_self_reads(
    test: ast.expr, resolve: Callable[[ast.AST], str | None]
) -> frozenset[str] | None:
    """Whether the condition `test` of an `if`, `while` or conditional
    expression can be a tensor, as the tensor analysis decides it.

    None: it may be (it reads a name, calls something, indexes...). Otherwise
    the `self` attributes it reads: it is a Python value unless one of them
    holds a variable, which the analysis assumes only of an attribute some
    method assigns from a call (`self.w = tf.Variable(...)`). The shapes
    accepted here are ones the analysis never takes for a tensor: literals,
    `is` / `is not` tests, `isinstance(...)` and the like, attributes
    (`self.flag`, `x.shape`), and `and` / `or` / `not` and comparisons of
    those. A name, or a call of anything else, may be a tensor."""
    reads: set[str] = set()
    return frozenset(reads) if _python_condition(test, resolve, reads) else None


def _python_condition(
    node: ast.expr, resolve: Callable[[ast.AST], str | None], reads: set[str]
) -> bool:
    """As the condition translator walks a condition: through `and`, `or`
    and `not`, and link by link through a comparison."""
    if isinstance(node, ast.BoolOp):
        return all(_python_condition(v, resolve, reads) for v in node.values)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return _python_condition(node.operand, resolve, reads)
    if isinstance(node, ast.Compare):
        return _python_comparison(node, resolve, reads)
    return _python_value(node, resolve, reads)


def _python_comparison(
    node: ast.Compare, resolve: Callable[[ast.AST], str | None], reads: set[str]
) -> bool:
    """Each link `a op b` is a Python value: an identity test; a membership
    test, unless it is the whole condition and tests a tensor against a
    literal tuple, list or set (`t in (a, b)` compares `t == a`); or a
    comparison of two Python values."""
    operands = [node.left, *node.comparators]
    chained = len(node.ops) > 1
    for i, op in enumerate(node.ops):
        left, right = operands[i], operands[i + 1]
        if isinstance(op, (ast.Is, ast.IsNot)):
            continue
        if isinstance(op, (ast.In, ast.NotIn)) and (
            chained
            or not isinstance(right, (ast.Tuple, ast.List, ast.Set))
            or _python_value(left, resolve, reads)
        ):
            continue
        if not (_python_value(left, resolve, reads) and _python_value(right, resolve, reads)):
            return False
    return True


# Expressions the tensor analysis never takes for tensors, whatever they
# hold: literals, displays, comprehensions, f-strings, lambdas.
_NEVER_TENSORS = (
    ast.Constant,
    ast.Tuple,
    ast.List,
    ast.Set,
    ast.Dict,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
    ast.JoinedStr,
    ast.Lambda,
)


def _python_value(
    node: ast.expr, resolve: Callable[[ast.AST], str | None], reads: set[str]
) -> bool:
    """A value the tensor analysis (`TensorFacts.kind`) cannot take for a
    tensor: an attribute of anything but `self` (`x.shape`, `layer.built`),
    an item or arithmetic of such values, `isinstance(...)` and the like;
    `self.attr` when no method assigns it a variable (recorded in `reads`)."""
    if isinstance(node, _NEVER_TENSORS):
        return True
    if isinstance(node, ast.Attribute):
        if isinstance(node.value, ast.Name) and node.value.id == "self":
            reads.add(node.attr)
        return True
    if isinstance(node, ast.Subscript):
        return _python_value(node.value, resolve, reads)
    if isinstance(node, ast.BinOp):
        return _python_value(node.left, resolve, reads) and _python_value(
            node.right, resolve, reads
        )
    if isinstance(node, ast.UnaryOp) and not isinstance(node.op, ast.Not):
        return _python_value(node.operand, resolve, reads)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return resolve(node.func) in _PYTHON_VALUED_BUILTINS
    return False


def self_attribute_from_call(node: ast.Assign | ast.AnnAssign) -> str | None:
    """`x` for `self.x = f(...)` (or `self.x: T = f(...)`): an attribute the
    tensor analysis may take for a variable (`attribute_facts`)."""
    if isinstance(node, ast.Assign):
        if len(node.targets) != 1:
            return None
        target = node.targets[0]
    else:
        target = node.target
    if (
        isinstance(node.value, ast.Call)
        and isinstance(target, ast.Attribute)
        and isinstance(target.value, ast.Name)
        and target.value.id == "self"
    ):
        return target.attr
    return None


def traced_callees(index: ModuleIndex, traced_qualnames: Iterable[str]) -> set[str]:
    """Every callee named in this file's traced code: the calls of each
    traced function and of everything defined inside it (a nested function,
    a method of a nested class), and those in default arguments, which a
    function nested in traced code evaluates while traced."""
    roots = tuple(traced_qualnames)
    if not roots:
        return set()
    prefixes = tuple(f"{q}." for q in roots)
    found = set(index.default_calls)
    for qualname, info in index.functions.items():
        if qualname in roots or qualname.startswith(prefixes):
            found.update(info.calls)
    return found
