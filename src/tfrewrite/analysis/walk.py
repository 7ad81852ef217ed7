"""Cheap tree walks for rules: pre-order, with the chain of ancestors, so a
rule needs no ParentNodeProvider metadata over the whole module."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst


def iter_nodes(root: cst.CSTNode, into_functions: bool = True) -> Iterator[cst.CSTNode]:
    """Every node under `root` (inclusive), pre-order. With
    `into_functions=False`, nested `def`/`lambda`/`class` bodies are skipped
    (the nested node itself is still yielded)."""
    stack: list[cst.CSTNode] = [root]
    while stack:
        node = stack.pop()
        yield node
        if not into_functions and node is not root and isinstance(
            node, (cst.FunctionDef, cst.Lambda, cst.ClassDef)
        ):
            continue
        stack.extend(reversed(node.children))


def iter_with_ancestors(
    root: cst.CSTNode, ancestors: tuple[cst.CSTNode, ...] = ()
) -> Iterator[tuple[cst.CSTNode, tuple[cst.CSTNode, ...]]]:
    """(node, ancestors from `root` down to the node's parent), pre-order."""
    stack: list[tuple[cst.CSTNode, tuple[cst.CSTNode, ...]]] = [(root, ancestors)]
    while stack:
        node, parents = stack.pop()
        yield node, parents
        below = (*parents, node)
        stack.extend((child, below) for child in reversed(node.children))


def calls(root: cst.CSTNode) -> Iterator[cst.Call]:
    for node in iter_nodes(root):
        if isinstance(node, cst.Call):
            yield node
