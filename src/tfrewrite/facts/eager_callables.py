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
from collections.abc import Callable

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


# Tests true only when TensorFlow runs eagerly: inside a trace they are
# False, so the code they guard never runs traced. (Not
# `executing_eagerly_outside_functions`, which a trace from eager code
# answers True.)
_EAGER_TESTS = frozenset({"tensorflow.executing_eagerly", "tensorflow.compat.v1.executing_eagerly"})


def eager_only_statements(node: ast.If, resolve: Callable[[ast.AST], str | None]) -> list[ast.stmt]:
    """The statements of an `if` that run only eagerly: its body when its
    test requires `tf.executing_eagerly()` (alone or as a term of an `and`;
    the `if` itself from its test on when that term comes first), its
    `else` when the test is `not tf.executing_eagerly()`. A traced
    function takes the other way at trace time, so nothing there is traced
    code (`if tf.executing_eagerly(): print(x.numpy())`)."""

    def eager_test(test: ast.expr) -> bool:
        if isinstance(test, ast.Call) and not test.args and not test.keywords:
            return resolve(test.func) in _EAGER_TESTS
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
            return any(eager_test(value) for value in test.values)
        return False

    test = node.test
    if eager_test(test):
        if isinstance(test, ast.BoolOp) and eager_test(test.values[0]):
            # `if tf.executing_eagerly() and x > 0:` when traced stops at the
            # first term: the test's other terms run only eagerly too.
            return [node, *node.body]  # type: ignore[list-item]
        return node.body
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) and eager_test(test.operand):
        return node.orelse
    return []


def statements_span(statements: list[ast.stmt], lines: list[str]) -> tuple[int, int, int, int]:
    """The span from the first statement's start to the last one's end."""
    first, _, _, _ = character_span(statements[0], lines)  # type: ignore[arg-type]
    _, _, last, end = character_span(statements[-1], lines)  # type: ignore[arg-type]
    return first, 1, last, end


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
