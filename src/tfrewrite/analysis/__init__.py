"""Shared analysis: what every rule asks instead of re-deriving.

- `index`: pass 1, a cheap per-file summary built with the standard `ast`
  parser (several times faster than LibCST) so the project can be indexed in
  full before any file is parsed with LibCST.
- `project`: the cross-file facts derived from every index (which functions run
  traced, and why).
- `names`: import aliases to qualified names, for LibCST expressions.
- `tensors`: which expressions are tensors, conservatively.
"""
