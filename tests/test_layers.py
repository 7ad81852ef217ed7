"""tfrewrite's modules form layers that import only downward, with no import
cycles. Read from the source with `ast` (nothing of tfrewrite is imported):
every import counts, at module level, inside functions and under
`TYPE_CHECKING`, since each is a dependency the code states.

Layers, top to bottom; a module may import its own layer and those below:

- entry points: the command line, the API, the language server, the
  configuration, the rule docs and the codemods;
- `verify/`: proving rewrites, beside the pipeline that makes them;
- `pipeline/`: discovery, both passes, fix rounds, fixing;
- `report/`: rendering findings (it documents rules, in SARIF);
- `rules/`: the registry and the rules, one folder per hazard family;
- `rewrite/`: rewrite code two or more families share;
- `facts/`: the fact model the rules read;
- `workspace/`, `findings`, and the package itself (its version).
"""

from __future__ import annotations

import ast
from collections.abc import Collection, Iterator, Mapping
from functools import cache
from pathlib import Path

PACKAGE = "tfrewrite"
SOURCE = Path(__file__).resolve().parent.parent / "src" / PACKAGE

# Top to bottom. A name covers the module so named and everything under it;
# the bare package name covers only `tfrewrite/__init__.py`.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "entry points",
        (
            "tfrewrite.__main__",
            "tfrewrite.cli",
            "tfrewrite.api",
            "tfrewrite.server",
            "tfrewrite.docs",
            "tfrewrite.codemod",
            "tfrewrite.codemods",
        ),
    ),
    ("verify", ("tfrewrite.verify",)),
    # `[tool.tfrewrite]` settings: read by the entry points and by verify.
    ("settings", ("tfrewrite.config",)),
    ("pipeline", ("tfrewrite.pipeline",)),
    ("report", ("tfrewrite.report",)),
    ("rules", ("tfrewrite.rules",)),
    ("rewrite", ("tfrewrite.rewrite",)),
    ("facts", ("tfrewrite.facts",)),
    ("workspace and findings", ("tfrewrite.workspace", "tfrewrite.findings", "tfrewrite")),
)


def _modules() -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its own name)."""
    modules = {}
    for path in SOURCE.rglob("*.py"):
        parts = path.relative_to(SOURCE.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path
    return modules


def _imported(node: ast.AST, package: str, modules: dict[str, Path]) -> Iterator[str]:
    """The package's modules an import statement names: `from a.b import c`
    names `a.b.c` when that is a module, else `a.b`."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.name in modules:
                yield alias.name
    elif isinstance(node, ast.ImportFrom):
        base = node.module or ""
        if node.level:
            parts = package.split(".")[: len(package.split(".")) - node.level + 1]
            base = ".".join([*parts, base] if base else parts)
        for alias in node.names:
            if f"{base}.{alias.name}" in modules:
                yield f"{base}.{alias.name}"
            elif base in modules:
                yield base


@cache
def _edges() -> dict[str, frozenset[str]]:
    """Each module and the package's modules it imports, anywhere in it
    (read once for all the tests)."""
    modules = _modules()
    edges: dict[str, frozenset[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        edges[name] = frozenset(
            target
            for node in ast.walk(tree)
            for target in _imported(node, package, modules)
            if target != name
        )
    return edges


def _layer(module: str) -> int | None:
    """The position of `module`'s layer in `LAYERS`, by its longest prefix."""
    best: tuple[int, int] | None = None
    for position, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            covers = module == prefix or (prefix != PACKAGE and module.startswith(prefix + "."))
            if covers and (best is None or len(prefix) > best[0]):
                best = (len(prefix), position)
    return None if best is None else best[1]


def _cycles(edges: Mapping[str, Collection[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's
    algorithm, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, targets = work[-1]
            target = next(targets, None)
            if target is not None:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(edges[target]))))
                elif target in on_stack:
                    low[node] = min(low[node], index[target])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_import_graph_is_read() -> None:
    edges = _edges()
    assert "tfrewrite.pipeline.engine" in edges
    assert "tfrewrite.findings" in edges["tfrewrite.pipeline.engine"]


def test_every_module_has_a_layer() -> None:
    unplaced = sorted(name for name in _edges() if _layer(name) is None)
    assert not unplaced, f"modules in no layer of LAYERS: {unplaced}"


def test_no_import_cycles() -> None:
    edges = _edges()
    problems = []
    for component in _cycles(edges):
        inside = sorted(
            f"{source} -> {target}"
            for source in component
            for target in edges[source]
            if target in component
        )
        problems.append(f"cycle among {component}: {'; '.join(inside)}")
    assert not problems, "\n".join(problems)


def test_imports_point_down_the_layers() -> None:
    edges = _edges()
    upward = []
    for source in sorted(edges):
        for target in sorted(edges[source]):
            low, high = _layer(source), _layer(target)
            if low is not None and high is not None and high < low:
                upward.append(f"{source} ({LAYERS[low][0]}) imports {target} ({LAYERS[high][0]})")
    assert not upward, "imports up the layers:\n" + "\n".join(upward)


def test_the_cycle_finder_finds_cycles() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert _cycles(edges) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []
