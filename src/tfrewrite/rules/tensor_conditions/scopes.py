"""Pre-parse check of the tensor-condition rule, on pass-1 facts alone (no
LibCST): see `facts.rule_scopes`."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tfrewrite.facts.index import ModuleIndex
    from tfrewrite.facts.rule_scopes import TracedFacts


def tensor_if(index: ModuleIndex, traced: TracedFacts) -> bool:
    """TFR101, TFR109, TFR110: a branch in some traced function (a tested
    value, a `training` flag given to a call) or a conditional expression
    in a traced lambda: a condition that may be a tensor, or one that is a
    Python value only while parameters such as `training` are, when the
    project proves one of them a tensor (an `input_signature`, a
    `Dataset.map`, a call site passing one)."""
    from tfrewrite.facts.traced_function import tensor_arguments

    if any(lam.conditional for lam in index.traced_lambdas):
        return True
    for qualname, facts in traced.items():
        info = index.functions.get(qualname)
        if info is None:
            continue
        if info.branches:
            return True
        if info.condition_params and not info.condition_params.isdisjoint(
            tensor_arguments(info, facts)
        ):
            return True
    return False
