"""Pre-parse check of the NumPy-math rule, on pass-1 facts alone (no
LibCST): see `facts.rule_scopes`."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tfrewrite.facts.index import ModuleIndex
    from tfrewrite.facts.rule_scopes import TracedFacts


def numpy_math(index: ModuleIndex, traced: TracedFacts) -> bool:
    """TFR104: traced code (nested functions included) calls a NumPy
    function, or `max`/`min`."""
    from tfrewrite.facts.prefilters import traced_callees

    return any(
        name.startswith("numpy.") or name in ("max", "min")
        for name in traced_callees(index, traced)
    )
