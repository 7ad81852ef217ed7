"""Positions of a few nodes, computed without LibCST's metadata wrapper.

`MetadataWrapper.resolve(PositionProvider)` re-visits the whole module and
generates its code; tfrewrite needs positions only for the nodes it reports,
in files that have findings. This drives the same position-recording code
generation directly and stops as soon as the last requested node has been
generated (findings early in a file cost a fraction of the file).
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider
from libcst.metadata.position_provider import PositionProvidingCodegenState


class _AllFound(Exception):
    pass


class _StoppingState(PositionProvidingCodegenState):
    """Records positions like LibCST's, and stops once every wanted node is done."""

    pending: set[int]

    def after_codegen(self, node: cst.CSTNode) -> None:
        super().after_codegen(node)
        pending = self.pending
        if id(node) in pending:
            pending.discard(id(node))
            if not pending:
                raise _AllFound


def node_ranges(module: cst.Module, nodes: Sequence[cst.CSTNode]) -> list[CodeRange]:
    """The `PositionProvider` range of each node (lines 1-based, columns 0-based)."""
    provider = PositionProvider()
    state = _StoppingState(
        default_indent=module.default_indent,
        default_newline=module.default_newline,
        provider=provider,
    )
    state.pending = {id(n) for n in nodes}
    try:
        module._codegen(state)
    except _AllFound:
        pass
    except KeyError:
        # Unwinding after the stop may ask for positions never generated.
        if state.pending:
            raise
    computed = provider._computed
    if any(n not in computed for n in nodes):  # pragma: no cover - LibCST internals changed
        computed = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    return [computed[n] for n in nodes]
