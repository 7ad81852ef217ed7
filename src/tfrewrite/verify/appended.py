"""Functions verify appends to a script keep the script's line numbers.

A loop replay or a caller stub is built from statements of the script and
appended to it as text (the loader slices and compiles text). Compiled as
written, its statements would carry the lines of the appended text, past the
end of the file: a failure in the replayed loop would be reported at "line
269" of a 253-line file. `append_function` remembers where each node of the
appended function stands in the script, and `relocate` (called by the loader
on the parsed text) puts those locations back before compiling, so
tracebacks, messages and `inspect.getsource` of a nested step all point at
the script's own lines.

Its statements come from module level (a `__main__` block, top-level code),
where `from dataloader import *` is allowed; inside a function it is a
`SyntaxError`. The appended function does the same import when it runs:
the module's public names (its `__all__`, or every name without a leading
underscore) bound in the script's globals, as at module level.

Standard library only: this runs inside verification workers.
"""

from __future__ import annotations

import ast

_LOCATIONS = ("lineno", "col_offset", "end_lineno", "end_col_offset")
_KEPT = 32  # appended texts remembered (a worker loads a few per target)

# text -> (name of the appended function, locations of its nodes in walk order)
_appended: dict[str, tuple[str, list[tuple[int, int, int, int] | None]]] = {}


# `from MODULE import *` run inside a function: the names bound as at module level.
_STAR_IMPORT = (
    "globals().update((lambda m: {{n: getattr(m, n) for n in getattr(m, '__all__', "
    "[n for n in vars(m) if not n.startswith('_')])}})"
    "(__import__('importlib').import_module({module!r}, __package__)))"
)


class _StarImports(ast.NodeTransformer):
    """`from MODULE import *` as the expression that does it inside a function."""

    def visit_ImportFrom(self, node: ast.ImportFrom) -> ast.stmt:
        if not any(alias.name == "*" for alias in node.names):
            return node
        module = "." * node.level + (node.module or "")
        statement = ast.parse(_STAR_IMPORT.format(module=module)).body[0]
        for child in ast.walk(statement):
            ast.copy_location(child, node)
        return statement


def append_function(source: str, function: ast.FunctionDef) -> str:
    """`source` with `function` appended as text, remembered so that
    `relocate` gives its nodes the locations they have in `function`."""
    function = _StarImports().visit(function)
    code = ast.unparse(function)
    text = source.rstrip("\n") + "\n\n\n" + code + "\n"
    reparsed = ast.parse(code).body[0]
    before, after = list(ast.walk(function)), list(ast.walk(reparsed))
    same = len(before) == len(after)
    if same and all(type(a) is type(b) for a, b in zip(before, after, strict=True)):
        _appended.pop(text, None)
        _appended[text] = (function.name, [_location(node) for node in before])
        while len(_appended) > _KEPT:
            del _appended[next(iter(_appended))]
    return text


def relocate(tree: ast.Module, text: str) -> None:
    """Give the appended function in `tree` (parsed from `text`) the
    locations its nodes had when it was appended. Nothing changes when
    `text` was not built by `append_function` or the tree differs."""
    entry = _appended.get(text)
    if entry is None:
        return
    name, locations = entry
    function = next(
        (s for s in reversed(tree.body) if isinstance(s, ast.FunctionDef) and s.name == name), None
    )
    if function is None:
        return
    nodes = list(ast.walk(function))
    if len(nodes) != len(locations):
        return
    for node, location in zip(nodes, locations, strict=True):
        if location is not None and hasattr(node, "lineno"):
            for attr, value in zip(_LOCATIONS, location, strict=True):
                setattr(node, attr, value)


def _location(node: ast.AST) -> tuple[int, int, int, int] | None:
    if not all(isinstance(getattr(node, attr, None), int) for attr in _LOCATIONS):
        return None
    return tuple(getattr(node, attr) for attr in _LOCATIONS)  # type: ignore[return-value]
