"""Pre-parse check of the static-shape rule, on pass-1 facts alone (no
LibCST): see `facts.rule_scopes`."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tfrewrite.facts.index import ModuleIndex
    from tfrewrite.facts.rule_scopes import TracedFacts


def static_shape(index: ModuleIndex, traced: TracedFacts) -> bool:
    """TFR107: traced code, and a call of an op taking a shape or a count."""
    from tfrewrite.facts.vocabulary import (
        COUNT_ARGUMENTS,
        PYTHON_COUNT_ARGUMENTS,
        SHAPE_ARGUMENTS,
    )

    return bool(traced) and not (
        not index.callee_shape_params
        and index.called_names.isdisjoint(SHAPE_ARGUMENTS)
        and index.called_names.isdisjoint(COUNT_ARGUMENTS)
        and index.called_names.isdisjoint(PYTHON_COUNT_ARGUMENTS)
    )
