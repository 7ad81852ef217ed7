"""Cheap tree walks for rules: pre-order, with the chain of ancestors, so a
rule needs no ParentNodeProvider metadata over the whole module."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Sequence

import libcst as cst

# Fields that hold only formatting (whitespace, parentheses, commas, ...):
# nothing a rule looks for lives there.
_FORMATTING_FIELD_PREFIXES = (
    "whitespace",
    "lpar",
    "rpar",
    "lbracket",
    "rbracket",
    "lbrace",
    "rbrace",
    "comma",
    "semicolon",
    "colon",
    "equal",
    "dot",
    "newline",
    "header",
    "footer",
    "leading_lines",
    "lines_after_decorators",
    "trailing_whitespace",
    "empty_lines",
    "first_line",
    "asynchronous",
    "star_tok",
)
# Classes whose dataclass field order differs from source order.
_SOURCE_ORDER = {
    cst.FunctionDef: ("decorators", "name", "params", "returns", "body"),
    cst.ClassDef: ("decorators", "name", "bases", "keywords", "body"),
    cst.IfExp: ("body", "test", "orelse"),
}
_FIELDS: dict[type, tuple[str, ...]] = {}


def _fields_of(cls: type) -> tuple[str, ...]:
    fields = _FIELDS.get(cls)
    if fields is None:
        names = _SOURCE_ORDER.get(cls) or tuple(f.name for f in dataclasses.fields(cls))
        fields = tuple(n for n in names if not n.startswith(_FORMATTING_FIELD_PREFIXES))
        _FIELDS[cls] = fields
    return fields


# What a field value is, by its exact type: a node, a sequence of nodes, or
# neither. `isinstance` against LibCST's abstract base classes goes through
# `ABCMeta.__instancecheck__` and was a tenth of a run's time (millions of
# calls); a dict lookup by type answers the same question.
_NODE, _SEQUENCE, _OTHER = 0, 1, 2
_KINDS: dict[type, int] = {}


def _kind_of(cls: type) -> int:
    kind = _KINDS.get(cls)
    if kind is None:
        if issubclass(cls, cst.CSTNode):
            kind = _NODE
        elif issubclass(cls, Sequence) and not issubclass(cls, str):
            kind = _SEQUENCE
        else:
            kind = _OTHER
        _KINDS[cls] = kind
    return kind


def child_nodes(node: cst.CSTNode) -> list[cst.CSTNode]:
    """The syntactic children of `node` in source order, without formatting
    nodes. LibCST's own `node.children` rebuilds the node to collect them,
    which costs about as much as parsing; this reads the fields directly."""
    result: list[cst.CSTNode] = []
    kinds = _KINDS
    for name in _fields_of(node.__class__):
        value = getattr(node, name)
        kind = kinds.get(value.__class__)
        if kind is None:
            kind = _kind_of(value.__class__)
        if kind == _NODE:
            result.append(value)
        elif kind == _SEQUENCE:
            for item in value:
                item_kind = kinds.get(item.__class__)
                if item_kind is None:
                    item_kind = _kind_of(item.__class__)
                if item_kind == _NODE:
                    result.append(item)
    return result


# Nodes whose bodies are another scope (see `iter_nodes`), by exact type.
_NESTED_SCOPES = frozenset({cst.FunctionDef, cst.Lambda, cst.ClassDef})


def iter_nodes(root: cst.CSTNode, into_functions: bool = True) -> Iterator[cst.CSTNode]:
    """Every node under `root` (inclusive), pre-order. With
    `into_functions=False`, nested `def`/`lambda`/`class` bodies are skipped
    (the nested node itself is still yielded). The facts of a file walk the
    same functions many times over: a walk is kept (`_walks`) and read again
    as a list until `forget_walks`."""
    global _walked
    key = (id(root), into_functions)
    kept = _walks.get(key)
    if kept is None or kept[0] is not root:
        nodes = _walk(root, into_functions)
        if _walked + len(nodes) > _MAX_WALKED:
            forget_walks()  # a long-lived process that never forgets (verify)
        _walked += len(nodes)
        kept = (root, nodes)
        _walks[key] = kept
    return iter(kept[1])


# Walks kept by `iter_nodes`, by root: the root itself is kept with its
# nodes, so its id cannot be reused while the entry stands. At most
# `_MAX_WALKED` nodes in all are listed.
_walks: dict[tuple[int, bool], tuple[cst.CSTNode, list[cst.CSTNode]]] = {}
_walked = 0
_MAX_WALKED = 2_000_000


def forget_walks() -> None:
    """Drop the kept walks: a worker holds no tree after its file."""
    global _walked
    _walks.clear()
    _walked = 0


def _walk(root: cst.CSTNode, into_functions: bool) -> list[cst.CSTNode]:
    nodes: list[cst.CSTNode] = []
    stack: list[cst.CSTNode] = [root]
    pop, extend, append = stack.pop, stack.extend, nodes.append
    while stack:
        node = pop()
        append(node)
        if not into_functions and node is not root and node.__class__ in _NESTED_SCOPES:
            continue
        children = child_nodes(node)
        children.reverse()
        extend(children)
    return nodes


def iter_expression(
    root: cst.CSTNode, stop: Callable[[cst.CSTNode], bool] = lambda node: False
) -> Iterator[cst.CSTNode]:
    """The nodes of an expression, pre-order in source order, as the code
    around it evaluates them: a `lambda` or nested `def` is not entered nor
    yielded (its body runs elsewhere), and the children of a node `stop`
    accepts are not visited (the node itself is yielded)."""
    stack: list[cst.CSTNode] = [root]
    while stack:
        node = stack.pop()
        if node.__class__ in (cst.Lambda, cst.FunctionDef):
            continue
        yield node
        if stop(node):
            continue
        children = child_nodes(node)
        children.reverse()
        stack.extend(children)


def iter_with_ancestors(
    root: cst.CSTNode, ancestors: tuple[cst.CSTNode, ...] = ()
) -> Iterator[tuple[cst.CSTNode, tuple[cst.CSTNode, ...]]]:
    """(node, ancestors from `root` down to the node's parent), pre-order."""
    stack: list[tuple[cst.CSTNode, tuple[cst.CSTNode, ...]]] = [(root, ancestors)]
    while stack:
        node, parents = stack.pop()
        yield node, parents
        below = (*parents, node)
        stack.extend((child, below) for child in reversed(child_nodes(node)))


def parent_links(root: cst.CSTNode) -> dict[int, cst.CSTNode]:
    """Each node's parent under `root`, by the child's id (formatting nodes
    left out, as `child_nodes` leaves them): one walk, for code that climbs
    from many nodes to the root."""
    parents: dict[int, cst.CSTNode] = {}
    stack = [root]
    while stack:
        node = stack.pop()
        children = child_nodes(node)
        for child in children:
            parents[id(child)] = node
        stack += children
    return parents


def calls(root: cst.CSTNode) -> Iterator[cst.Call]:
    for node in iter_nodes(root):
        if isinstance(node, cst.Call):
            yield node


def statement_children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """Child statements of a statement-level node (no descent into expressions)."""
    if isinstance(node, cst.Module):
        return list(node.body)
    result: list[cst.CSTNode] = []
    body = getattr(node, "body", None)
    if isinstance(body, cst.IndentedBlock):
        result.extend(body.body)
    elif isinstance(body, cst.SimpleStatementSuite):
        result.append(body)
    elif isinstance(body, (list, tuple)):
        result.extend(body)
    for attr in ("orelse", "finalbody"):
        other = getattr(node, attr, None)
        if other is not None:
            result.append(other)
    result.extend(getattr(node, "handlers", None) or ())
    result.extend(getattr(node, "cases", None) or ())
    return [c for c in result if _kind_of(c.__class__) == _NODE]


_SIMPLE_LINES = frozenset({cst.SimpleStatementLine, cst.SimpleStatementSuite})
_DEFINITIONS = frozenset({cst.FunctionDef, cst.ClassDef})


def iter_small_statements(
    root: cst.CSTNode, into_functions: bool = False
) -> Iterator[cst.BaseSmallStatement]:
    """Simple statements (`x = 1`, `global x`, `return`) under `root`, found
    by walking statements only: much cheaper than visiting every expression."""
    stack: list[cst.CSTNode] = [root]
    while stack:
        node = stack.pop()
        if node.__class__ in _SIMPLE_LINES:
            yield from node.body  # type: ignore[attr-defined]
            continue
        if node is not root and not into_functions and node.__class__ in _DEFINITIONS:
            continue
        stack.extend(reversed(statement_children(node)))


def iter_statement_lines(
    root: cst.CSTNode,
) -> Iterator[tuple[cst.SimpleStatementLine, cst.Module | cst.IndentedBlock]]:
    """Every simple statement line with the block that holds it, in source
    order, walking statements only."""
    if isinstance(root, (cst.Module, cst.IndentedBlock)):
        for child in root.body:
            if isinstance(child, cst.SimpleStatementLine):
                yield child, root
            else:
                yield from iter_statement_lines(child)
        return
    for name in ("body", "orelse", "finalbody", "handlers", "cases"):
        value = getattr(root, name, None)
        if isinstance(value, (list, tuple)):
            for item in value:
                yield from iter_statement_lines(item)
        elif isinstance(value, cst.CSTNode) and not isinstance(value, cst.SimpleStatementSuite):
            yield from iter_statement_lines(value)


def enclosing_statement_line(
    ancestors: Sequence[cst.CSTNode],
) -> cst.SimpleStatementLine | None:
    """The statement line a node is part of, from its ancestors (outermost
    first): where `TensorFacts.kind_at` asks what its names hold."""
    return next((a for a in reversed(ancestors) if isinstance(a, cst.SimpleStatementLine)), None)


def comments_in(node: cst.CSTNode) -> list[cst.Comment]:
    """Every comment inside `node`, in source order (comments live in
    formatting nodes, which `child_nodes` skips, so this walks them all)."""
    found: list[cst.Comment] = []
    stack: list[cst.CSTNode] = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Comment):
            found.append(current)
        stack.extend(reversed(current.children))
    return found
