"""Python handed to `tf.py_function` / `tf.numpy_function`: it runs eagerly.

`tf.py_function(draw, inp=[key], Tout=...)` inside a traced function (a
`Dataset.map` function, a `@tf.function`) calls `draw` as plain Python on
every call, with eager tensors (`py_function`) or NumPy arrays
(`numpy_function`): `k.numpy()` works there and `np.random.choice` draws
afresh each time (measured on TensorFlow 2.21). So a function or lambda
handed to one is eager code, whatever traces the code around it, and so is
what it calls. Pass 1 records both (`ModuleIndex.eager_functions`,
`ModuleIndex.eager_spans`): tracing does not spread into them, and no
finding about traced code is made inside them.
"""

from __future__ import annotations

import ast

# The TensorFlow functions that run a Python callable eagerly, with the
# keyword naming it (it is otherwise their first positional argument).
EAGER_WRAPPERS = frozenset(
    {
        "tensorflow.py_function",
        "tensorflow.numpy_function",
        "tensorflow.compat.v1.py_func",
        "tensorflow.compat.v1.numpy_function",
        "tensorflow.compat.v1.py_function",
    }
)
_CALLABLE_KEYWORDS = ("func", "fn")


def eager_callable(node: ast.Call, callee: str | None) -> ast.expr | None:
    """The callable `node` runs eagerly, when it calls an eager wrapper."""
    if callee not in EAGER_WRAPPERS:
        return None
    if node.args and not isinstance(node.args[0], ast.Starred):
        return node.args[0]
    for keyword in node.keywords:
        if keyword.arg in _CALLABLE_KEYWORDS:
            return keyword.value
    return None


def character_span(node: ast.expr, lines: list[str]) -> tuple[int, int, int, int]:
    """`node`'s first line, first column, last line and end column, with
    1-based columns counted in characters, as findings place themselves
    (`ast` counts UTF-8 bytes)."""
    end_line = node.end_lineno or node.lineno
    end_offset = node.end_col_offset if node.end_col_offset is not None else 0
    return (
        node.lineno,
        _characters(lines, node.lineno, node.col_offset) + 1,
        end_line,
        _characters(lines, end_line, end_offset) + 1,
    )


def _characters(lines: list[str], line: int, byte_offset: int) -> int:
    if not 0 < line <= len(lines):
        return byte_offset
    text = lines[line - 1]
    if text.isascii():
        return byte_offset
    return len(text.encode("utf-8")[:byte_offset].decode("utf-8", errors="ignore"))


def within(spans: list[tuple[int, int, int, int]], line: int, column: int) -> bool:
    """Whether (line, column), 1-based, lies inside one of `spans`."""
    return any((first, start) <= (line, column) < (last, end) for first, start, last, end in spans)
