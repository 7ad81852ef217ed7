"""The LibCST parse of pass 2 and of every fix round.

Its own module so that both the pass over a file (`rule_pass`) and the fix
rounds under it (`fix_rounds`) parse the same way without one importing the
other. LibCST is imported only when something is parsed: the main process
imports this module and may settle every file without it.
"""

from __future__ import annotations

import gc
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import libcst as cst


def _skip_validation(node: cst.CSTNode) -> None:
    """`CSTNode.__post_init__` while LibCST's parser builds a tree (see `parse_module`)."""


def parse_module(source: str) -> cst.Module:
    """`libcst.parse_module`, without the check every node runs on its own
    fields as it is built (the parser only builds valid nodes, and the
    checks took a tenth or more of the parse; LibCST's own source notes the
    waste), and without cyclic garbage collection while the tree is built
    (it holds no cycles, yet the collector walked its growing young part
    again and again: another tenth). Nodes that rules build later are
    checked as usual."""
    import libcst as cst

    collecting = gc.isenabled()
    gc.disable()
    validate = cst.CSTNode.__dict__.get("__post_init__")
    try:
        if validate is None:  # another LibCST layout: parse as usual
            return cst.parse_module(source)
        cst.CSTNode.__post_init__ = _skip_validation  # type: ignore[method-assign]
        try:
            return cst.parse_module(source)
        finally:
            cst.CSTNode.__post_init__ = validate  # type: ignore[method-assign]
    finally:
        if collecting:
            gc.enable()
