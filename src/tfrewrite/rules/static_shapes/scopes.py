"""Pre-parse check of the static-shape rule, on pass-1 facts alone (no
LibCST): see `facts.rule_scopes`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tfrewrite.facts.rule_scopes import traced_infos

if TYPE_CHECKING:
    from tfrewrite.facts.index import ModuleIndex
    from tfrewrite.facts.rule_scopes import TracedFacts


def static_shape(index: ModuleIndex, traced: TracedFacts) -> bool:
    """TFR107: traced code, and a call of an op taking a shape or a count,
    or a list display repeated where a static shape is read (`[start] *
    x.shape[0]`)."""
    from tfrewrite.facts.vocabulary import (
        COUNT_ARGUMENTS,
        HOST_SHAPE_ARGUMENTS,
        PYTHON_COUNT_ARGUMENTS,
        SHAPE_ARGUMENTS,
    )

    if not traced:
        return False
    if not (
        index.called_names.isdisjoint(SHAPE_ARGUMENTS)
        and index.called_names.isdisjoint(COUNT_ARGUMENTS)
        and index.called_names.isdisjoint(PYTHON_COUNT_ARGUMENTS)
        and index.called_names.isdisjoint(HOST_SHAPE_ARGUMENTS)
    ):
        return True
    # A static dimension handed to a project function that makes it a shape.
    helpers = index.callee_shape_params
    for info in traced_infos(index, traced):
        if info.repeats_list and info.reads_static_shape:
            return True
        if helpers and info.reads_static_shape and not helpers.keys().isdisjoint(info.calls):
            return True
    return False
