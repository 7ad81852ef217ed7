"""Branch coverage for the `tf.cond` calls a rewrite introduced.

A rewritten `if` is only proven when both of its branches ran on some input
and matched the original there. Eagerly, `tf.cond` calls exactly one of its
branch functions, so wrapping each branch callable in a recorder and running
the rewrite eagerly tells which branches an input takes. (Traced, both
branches are traced, so recording happens only while the recorder is active
and operations run eagerly.) A training loop is covered the same way: its
rewrite is replayed once more, eagerly and instrumented, on the same batches
(see `replay`), and a train step with a harness runs its batches eagerly.

Standard library only: this runs inside verification workers.
"""

from __future__ import annotations

import ast
import copy
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from tfrewrite.workspace.line_names import rewrite_line_name

COND_NAMES = frozenset(
    {"tensorflow.cond", "tensorflow.compat.v1.cond", "tensorflow.compat.v2.cond"}
)
RECORDER_NAME = "__tfrewrite_branch__"


def import_aliases(tree: ast.AST) -> dict[str, str]:
    """Local name -> dotted name bound by the imports anywhere in `tree`."""
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    aliases[alias.asname] = alias.name
                else:
                    top = alias.name.split(".")[0]
                    aliases[top] = top
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return aliases


def qualified_name(expr: ast.AST, aliases: dict[str, str]) -> str | None:
    """`tf.random.normal` -> `tensorflow.random.normal` (None if not a dotted name)."""
    parts: list[str] = []
    while isinstance(expr, ast.Attribute):
        parts.append(expr.attr)
        expr = expr.value
    if not isinstance(expr, ast.Name):
        return None
    head = aliases.get(expr.id)
    if head is None:
        return None
    return ".".join([head, *reversed(parts)])


def _cond_calls(tree: ast.AST) -> list[ast.Call]:
    aliases = import_aliases(tree)
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and qualified_name(node.func, aliases) in COND_NAMES
    ]


def introduced_conds(original_source: str, rewrite_tree: ast.Module) -> list[ast.Call]:
    """`tf.cond` calls in the rewrite that the original does not contain
    (compared by their code, as a multiset)."""
    try:
        original = Counter(ast.unparse(c) for c in _cond_calls(ast.parse(original_source)))
    except SyntaxError:
        original = Counter()
    aliases = import_aliases(rewrite_tree)
    introduced = []
    for node in ast.walk(rewrite_tree):
        if isinstance(node, ast.Call) and qualified_name(node.func, aliases) in COND_NAMES:
            text = ast.unparse(node)
            if original[text] > 0:
                original[text] -= 1
            else:
                introduced.append(node)
    introduced.sort(key=lambda c: (c.lineno, c.col_offset))
    return introduced


def _branch_args(call: ast.Call) -> list[tuple[bool, ast.expr, Callable[[ast.expr], None]]]:
    """(which, expression, setter) for the true and false branch arguments."""
    found = []
    for i, arg in enumerate(call.args[1:3], start=1):

        def set_positional(new: ast.expr, i: int = i) -> None:
            call.args[i] = new

        found.append((i == 1, arg, set_positional))
    for kw in call.keywords:
        if kw.arg in ("true_fn", "false_fn"):

            def set_keyword(new: ast.expr, kw: ast.keyword = kw) -> None:
                kw.value = new

            found.append((kw.arg == "true_fn", kw.value, set_keyword))
    return found


def instrument(
    original_source: str, rewrite_tree: ast.Module, whole: str | None = None
) -> tuple[ast.Module, list[int]]:
    """A copy of `rewrite_tree` whose introduced `tf.cond` branch callables
    report to `__tfrewrite_branch__(cond_line, which, fn)`; and the line of
    each introduced `tf.cond` (its identifier).

    `whole` is the rewritten file when `rewrite_tree` is built from it with
    code added (a loop replay copies the loop and the step it defines): the
    `tf.cond` calls introduced there, by their place in the file, are the
    ones instrumented, wherever the tree holds them."""
    tree = copy.deepcopy(rewrite_tree)
    lines = []
    if whole is None:
        calls = introduced_conds(original_source, tree)
    else:
        places = {
            (c.lineno, c.col_offset) for c in introduced_conds(original_source, ast.parse(whole))
        }
        calls = [c for c in _cond_calls(tree) if (c.lineno, c.col_offset) in places]
    for call in calls:
        lines.append(call.lineno)
        for which, expr, set_arg in _branch_args(call):
            wrapped = ast.Call(
                func=ast.Name(id=RECORDER_NAME, ctx=ast.Load()),
                args=[ast.Constant(call.lineno), ast.Constant(which), expr],
                keywords=[],
            )
            set_arg(ast.copy_location(wrapped, expr))
    ast.fix_missing_locations(tree)
    return tree, sorted(set(lines))


@dataclass
class BranchRecorder:
    """Records which branch of each instrumented `tf.cond` ran, while active."""

    conds: list[int]
    active: bool = False
    taken: dict[int, set[bool]] = field(default_factory=dict)

    def __call__(self, line: int, which: bool, fn: Callable) -> Callable:
        def branch(*args, **kwargs):  # type: ignore[no-untyped-def]
            if self.active and _running():
                self.taken.setdefault(line, set()).add(which)
            return fn(*args, **kwargs)

        return branch

    def missing(self) -> list[tuple[int, bool]]:
        return [
            (line, which)
            for line in self.conds
            for which in (True, False)
            if which not in self.taken.get(line, set())
        ]

    def never_taken(self, where: str, remedy: str) -> list[str]:
        """One message per branch never taken, `where` saying on what the
        branches were run and `remedy` what would reach the branch."""
        return [
            f"the {'true' if which else 'false'} branch of the tf.cond on "
            f"{rewrite_line_name(line)} was "
            f"never taken {where}; {remedy}"
            for line, which in self.missing()
        ]

    def summary(self) -> list[dict]:
        return [
            {
                "line": line,
                "true": True in self.taken.get(line, set()),
                "false": False in self.taken.get(line, set()),
            }
            for line in self.conds
        ]


def _running() -> bool:
    """Operations run now (eagerly), not traced into a graph: a Keras model
    built on symbolic inputs, or a `tf.data` map, traces both branches."""
    tf = sys.modules.get("tensorflow")
    return tf is None or bool(tf.executing_eagerly())
