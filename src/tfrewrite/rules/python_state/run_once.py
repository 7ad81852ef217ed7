"""Set-up that runs once, traced or not: state created under a test that
holds only until it exists (`if self.v is None: self.v = tf.Variable(...)`,
`global _acc; if _acc is None: _acc = Accuracy()`). Eagerly the first call
creates it; traced, the first trace does, and the traces after it skip the
branch as the eager calls after the first do. Asked by TFR204 (variables
created once) and TFR202 (a write that is no per-call effect)."""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from tfrewrite.facts.names import dotted_name
from tfrewrite.facts.walk import iter_nodes


def tests_unset_state(test: cst.BaseExpression) -> bool:
    """A test that something is not set up yet: an identity comparison
    (`self.v is None`), or a flag named for it (`not self.built`)."""
    for node in iter_nodes(test):
        if isinstance(node, cst.ComparisonTarget) and isinstance(
            node.operator, (cst.Is, cst.IsNot)
        ):
            return True
        if isinstance(node, cst.Name) and "built" in node.value:
            return True
        if isinstance(node, cst.Attribute) and "built" in node.attr.value:
            return True
    return False


def under_unset_test(ancestors: Sequence[cst.CSTNode]) -> bool:
    """Whether a node lies in the body of an `if` that `tests_unset_state`."""
    return any(isinstance(a, cst.If) and tests_unset_state(a.test) for a in ancestors)


def lazy_initialisations(body: cst.CSTNode) -> set[int]:
    """Ids of the assignments that set a name or attribute only while it is
    unset: in the body of `if x is None:` (or `if not x:`) assigning `x`."""
    found: set[int] = set()
    for node in iter_nodes(body, into_functions=False):
        if not isinstance(node, cst.If):
            continue
        unset = _unset_names(node.test)
        if not unset:
            continue
        for inner in iter_nodes(node.body, into_functions=False):
            if isinstance(inner, cst.Assign) and all(
                dotted_name(t.target) in unset for t in inner.targets
            ):
                found.add(id(inner))
    return found


def _unset_names(test: cst.BaseExpression) -> set[str]:
    """The names `test` checks are unset: `x is None`, `not x`."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        name = dotted_name(test.expression)
        return {name} if name else set()
    if (
        isinstance(test, cst.Comparison)
        and len(test.comparisons) == 1
        and isinstance(test.comparisons[0].operator, cst.Is)
        and isinstance(test.comparisons[0].comparator, cst.Name)
        and test.comparisons[0].comparator.value == "None"
    ):
        name = dotted_name(test.left)
        return {name} if name else set()
    return set()
