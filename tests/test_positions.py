"""`node_ranges` keeps only the ranges it needs while generating code, and
must still give LibCST's own `PositionProvider` ranges for any node, in every
statement form whose position LibCST derives from a child (`else`, `finally`,
handlers, parenthesised imports, `match` cases) and without a trailing
newline."""

from __future__ import annotations

import random

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from tfrewrite.facts.walk import iter_nodes
from tfrewrite.workspace.positions import node_ranges

SOURCE = '''\
"""Doc."""
from os import (path,
    sep as separator)
import sys; import re as regex

@decorator(1)
class C(Base, metaclass=M):
    x: int = 1

    async def f(self, a, /, b=2, *args, c, **kw):
        try:
            async with a as (b, c), d:
                pass
        except* ValueError as err:
            raise
        else:
            return [i async for i in b if i]
        finally:
            del a

def g(x):
    try:
        y = x
    except (KeyError, IndexError):
        y = 0
    except Exception:
        y = 1
    else:
        y += 1
    finally:
        pass
    while x:
        x -= 1
    else:
        x = lambda q: q if q else -q
    for i in range(3): print(i)
    match x:
        case [1, *rest] if rest:
            return {**rest}
        case {"k": v}:
            return v
        case _:
            return f"{x!r:>{10}}"
    global z
    return (yield x)'''


@pytest.mark.parametrize("trailing", ["", "\n"])
def test_ranges_equal_libcst_positions_for_any_node(trailing: str) -> None:
    module = cst.parse_module(SOURCE + trailing)
    nodes = list(iter_nodes(module))
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    rng = random.Random(0)
    for _ in range(200):
        picked = rng.sample(nodes, rng.randint(1, 3))
        assert node_ranges(module, picked) == [expected[n] for n in picked]
    assert node_ranges(module, [module]) == [expected[module]]


def test_the_lean_pass_needs_no_fallback() -> None:
    """Every range LibCST reads back is one the lean pass keeps: no `KeyError`
    sends it to the full (every node, all text) pass."""
    from tfrewrite.workspace.positions import _generate

    module = cst.parse_module(SOURCE)
    nodes = list(iter_nodes(module))
    for node in (nodes[-1], module):
        state = _generate(module, [node], lean=True)
        assert not state.pending
        assert len(state.tokens) <= 1
