"""Qualified names for LibCST expressions, through the file's imports.

The aliases come from pass 1's index (`import tensorflow as tf` gives
`tf -> tensorflow`), so no rule re-reads imports: `tf.random.normal`,
`tensorflow.random.normal` and `from tensorflow.random import normal` all
resolve to `tensorflow.random.normal`. TensorFlow's private path to Keras
resolves to the public one (`keras_names.canonical_name`).
"""

from __future__ import annotations

import libcst as cst

from tfrewrite.facts.canonical_names import canonical_name

# Preferred local names when tfrewrite must add an import itself.
DEFAULT_ALIASES = {"tensorflow": "tf", "numpy": "np"}


def dotted_name(node: cst.BaseExpression) -> str | None:
    """`a.b.c` for a Name/Attribute chain, else None."""
    parts: list[str] = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if isinstance(node, cst.Name):
        parts.append(node.value)
        return ".".join(reversed(parts))
    return None


class NameResolver:
    def __init__(self, imports: dict[str, str]) -> None:
        self.imports = imports

    def qualified_name(self, node: cst.BaseExpression) -> str | None:
        """The dotted name an expression refers to, or None when it is not an
        imported name (a local variable, a call result, a literal)."""
        name = dotted_name(node)
        if name is None:
            return None
        head, _, rest = name.partition(".")
        target = self.imports.get(head)
        if target is None:
            return None
        return canonical_name(f"{target}.{rest}" if rest else target)

    def alias_for(self, module: str) -> str | None:
        """The local name under which `module` is imported as a whole (`tf` for
        `tensorflow`), or None when the file does not import it that way."""
        candidates = [local for local, target in self.imports.items() if target == module]
        if not candidates:
            return None
        preferred = DEFAULT_ALIASES.get(module)
        return preferred if preferred in candidates else sorted(candidates)[0]

    def tensorflow_alias(self) -> tuple[str, bool]:
        """(name to write for TensorFlow, whether an import must be added)."""
        alias = self.alias_for("tensorflow")
        if alias is not None:
            return alias, False
        return DEFAULT_ALIASES["tensorflow"], True
