"""Sources of one traced function built from a body, for before/after tests
of the rules that rewrite inside it."""

from __future__ import annotations

import textwrap


def with_body(template: str, body: str) -> str:
    """`template` with `{body}` replaced by `body`, indented as a function body."""
    return template.format(body=textwrap.indent(textwrap.dedent(body).strip("\n"), "    "))


def without_unused_numpy(source: str) -> str:
    """The source after a fix: NumPy's import goes when nothing uses it."""
    rest = source.replace("import numpy as np\n", "", 1)
    return rest if "np." not in rest else source
