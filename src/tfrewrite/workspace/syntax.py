"""Which Python a file needs, for syntax errors the running interpreter
reports on code that a newer Python parses.

LibCST's parser accepts newer grammar than the interpreter tfrewrite may run
on (`type X = ...` and `def f[T]` are Python 3.12, `t"..."` is 3.14), so a file
the standard `ast` rejects but LibCST reads is most likely newer Python, and
the node types say which version.
"""

from __future__ import annotations

import sys

import libcst as cst

# Node types that first appeared in the given Python version.
_NEWER_NODES: tuple[tuple[str, str], ...] = (
    ("TemplatedString", "3.14"),
    ("TypeAlias", "3.12"),
    ("TypeParameters", "3.12"),
)


class _Finder(cst.CSTVisitor):
    def __init__(self) -> None:
        self.versions: set[str] = set()

    def on_visit(self, node: cst.CSTNode) -> bool:
        for name, version in _NEWER_NODES:
            if type(node).__name__ == name:
                self.versions.add(version)
        return True


def newer_python_hint(source: str) -> str:
    """A sentence to add to a syntax error, or "" when the file is simply broken."""
    running = f"{sys.version_info.major}.{sys.version_info.minor}"
    try:
        module = cst.parse_module(source)
    except Exception:  # noqa: BLE001 - not newer syntax: a plain syntax error
        return ""
    finder = _Finder()
    module.visit(finder)
    versions = [v for v in sorted(finder.versions, key=_key) if _key(v) > _key(running)]
    if versions:
        needed = versions[-1]
        return (
            f" (this is Python {needed} syntax; tfrewrite runs on Python {running}: "
            f"run it with Python {needed} or newer)"
        )
    return (
        f" (Python {running}, which tfrewrite runs on, cannot parse this; "
        "a newer Python may: run tfrewrite with it)"
    )


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))
