"""Positions of a few nodes, computed without LibCST's metadata wrapper.

`MetadataWrapper.resolve(PositionProvider)` re-visits the whole module and
generates its code; tfrewrite needs positions only for the nodes it reports,
in files that have findings. This drives the same position-recording code
generation directly and stops as soon as the last requested node has been
generated (findings early in a file cost a fraction of the file), keeping
neither the generated text nor the range of every node: only the requested
nodes and those LibCST reads back to place a statement (its body, its last
small statement, an `else`), a few per statement instead of one per token.
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider
from libcst.metadata.position_provider import PositionProvidingCodegenState

# Nodes whose range LibCST reads back while generating a parent statement
# (`record_syntactic_position(start_node=..., end_node=...)`).
_READ_BACK = (
    cst.BaseSuite,
    cst.BaseStatement,
    cst.BaseSmallStatement,
    cst.Else,
    cst.Finally,
    cst.ExceptHandler,
    cst.ExceptStarHandler,
    cst.MatchCase,
    cst.ImportAlias,
    cst.RightParen,
)


class _AllFound(Exception):
    pass


class _StoppingState(PositionProvidingCodegenState):
    """Records positions like LibCST's, and stops once every wanted node is done."""

    pending: set[int]
    lean: bool = True

    def add_token(self, value: str) -> None:
        if self.lean:
            self.tokens[-1:] = [value]  # the last token only: `Module` asks whether there is one
        else:
            self.tokens.append(value)
        self._update_position(value)

    def add_indent_tokens(self) -> None:
        for token in self.indent_tokens:
            self.add_token(token)

    def after_codegen(self, node: cst.CSTNode) -> None:
        pending = self.pending
        wanted = id(node) in pending
        if wanted or not self.lean or isinstance(node, _READ_BACK):
            super().after_codegen(node)
        else:
            self._stack.pop()
        if wanted:
            pending.discard(id(node))
            if not pending:
                raise _AllFound


def _generate(module: cst.Module, nodes: Sequence[cst.CSTNode], lean: bool) -> _StoppingState:
    state = _StoppingState(
        default_indent=module.default_indent,
        default_newline=module.default_newline,
        provider=PositionProvider(),
    )
    state.pending = {id(n) for n in nodes}
    state.lean = lean
    try:
        module._codegen(state)
    except _AllFound:
        pass
    except KeyError:
        # Unwinding after the stop may ask for positions never generated.
        if state.pending:
            raise
    return state


def node_ranges(module: cst.Module, nodes: Sequence[cst.CSTNode]) -> list[CodeRange]:
    """The `PositionProvider` range of each node (lines 1-based, columns 0-based)."""
    try:
        state = _generate(module, nodes, lean=True)
    except KeyError:  # pragma: no cover - LibCST read back a node not in `_READ_BACK`
        state = _generate(module, nodes, lean=False)
    computed = state.provider._computed  # type: ignore[attr-defined]
    if any(n not in computed for n in nodes):  # pragma: no cover - LibCST internals changed
        computed = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    return [computed[n] for n in nodes]
