"""An import that code written into a file needs (`import tensorflow as tf`).

The fact model names these when it tells a rule how to refer to a module in
the file (`RuleContext.tensorflow`), and fixes carry them (`CstFix.imports`)
for the pipeline to add: a plain value, so it lives at the lowest layer that
speaks of it, below the rewrite code that builds fixes.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ImportRequest:
    """`import module as alias` (obj None) or `from module import obj as alias`."""

    module: str
    obj: str | None = None
    alias: str | None = None
