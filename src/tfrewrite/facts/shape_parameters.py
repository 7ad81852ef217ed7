"""Parameters a function gives TensorFlow as a shape or a count.

`def coords_grid(batch_size, h, w): ... tf.tile(c, (batch_size, 1, 1, 1))`:
what a caller passes for `batch_size` ends up as a shape entry. A caller
that passes a static batch dimension (`bs, h, w, _ = image.shape`, then
`coords_grid(bs, h, w)`) fails once the trace does not know the batch, as
if it had written the shape itself (TFR107, which reports the argument).
Pass 1 records these parameters per function (`FunctionInfo.shape_params`,
on `ast` alone); the project facts tell each module what the functions it
calls take so (`ModuleIndex.callee_shape_params`, `callee_facts`).
"""

from __future__ import annotations

import ast
from collections.abc import Collection, Iterator

from tfrewrite.facts.vocabulary import (
    COUNT_ARGUMENTS,
    HOST_SHAPE_ARGUMENTS,
    PYTHON_COUNT_ARGUMENTS,
    SHAPE_ARGUMENTS,
)


def shape_parameter_names(call: ast.Call, callee: str | None, params: Collection[str]) -> set[str]:
    """The names of `params` that `call` of a TensorFlow op gives as its
    shape or a count: the argument itself, an entry of a shape list, or a
    term of arithmetic there (`batch_size * n`)."""
    if not callee:
        return set()
    places: tuple[tuple[int, str], ...] = ()
    if callee in SHAPE_ARGUMENTS:
        places = (SHAPE_ARGUMENTS[callee],)
    places += COUNT_ARGUMENTS.get(callee, ()) + PYTHON_COUNT_ARGUMENTS.get(callee, ())
    places += HOST_SHAPE_ARGUMENTS.get(callee, ())
    found: set[str] = set()
    for position, keyword in places:
        value = _argument(call, position, keyword)
        if value is None:
            continue
        entries = value.elts if isinstance(value, (ast.List, ast.Tuple)) else [value]
        for entry in entries:
            found.update(name for name in _terms(entry) if name in params)
    return found


def _argument(call: ast.Call, position: int, keyword: str) -> ast.expr | None:
    for kw in call.keywords:
        if kw.arg == keyword:
            return kw.value
    positional = [a for a in call.args if not isinstance(a, ast.Starred)]
    if len(positional) != len(call.args) or len(positional) <= position:
        return None
    return positional[position]


def _terms(node: ast.expr) -> Iterator[str]:
    """The names arithmetic adds up or scales (`b * h * w`, `-n`)."""
    if isinstance(node, ast.Name):
        yield node.id
    elif isinstance(node, ast.BinOp):
        yield from _terms(node.left)
        yield from _terms(node.right)
    elif isinstance(node, ast.UnaryOp):
        yield from _terms(node.operand)
