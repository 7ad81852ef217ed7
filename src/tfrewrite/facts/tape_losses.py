"""Tape losses in pass 1: the two-argument calls whose result a
`GradientTape` differentiates (`loss = dice(y, p)` then
`tape.gradient(loss, ...)`), recorded as `TapeLoss`es so the project facts
know those functions run in a training step.

Asked only of a file that opens a tape, after the visitor is done: it walks
the scopes that can hold a tape once more, which the visitor's single pass
does not need for anything else.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable

from tfrewrite.facts.call_evidence import EXTERNAL_ROOTS
from tfrewrite.facts.function_facts import opens_tape
from tfrewrite.facts.index_records import ModuleIndex, TapeLoss


def _scope_nodes(body: list[ast.stmt]) -> list[ast.AST]:
    """Every node of a scope's body, not descending into nested definitions."""
    result: list[ast.AST] = []
    stack: list[ast.AST] = list(reversed(body))
    while stack:
        node = stack.pop()
        result.append(node)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        stack.extend(reversed(list(ast.iter_child_nodes(node))))
    return result


def _loss_calls(value: ast.AST) -> list[ast.Call]:
    """`f(...)` itself, or the calls added up in `f(a, b) + reg(w)`."""
    if isinstance(value, ast.Call):
        return [value]
    if isinstance(value, ast.BinOp):
        return [*_loss_calls(value.left), *_loss_calls(value.right)]
    return []


def _is_pair(call: ast.Call) -> bool:
    """`f(labels, predictions)`: two positional arguments, nothing else."""
    return len(call.args) == 2 and not call.keywords


def tape_scopes(tape_functions: Iterable[str]) -> set[str]:
    """The functions that open a tape (`tape_functions`, by qualname), and
    those they are nested in."""
    scopes: set[str] = set()
    for qualname in tape_functions:
        parts = qualname.split(".")
        scopes.update(".".join(parts[:n]) for n in range(1, len(parts) + 1))
    return scopes


def record_tape_losses(
    index: ModuleIndex,
    resolve: Callable[[ast.AST], str | None],
    body: list[ast.stmt],
    qualname: str,
    tape_scopes: set[str],
) -> None:
    """Record in `index` the calls whose result, assigned inside a
    GradientTape block, is what `tape.gradient` differentiates; recurse into
    the nested scopes that can hold a tape (`tape_scopes`, and every class).
    `resolve` names a callee through the file's imports."""
    nodes = _scope_nodes(body)
    differentiated = {
        node.args[0].id
        for node in nodes
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "gradient"
        and node.args
        and isinstance(node.args[0], ast.Name)
    }
    for node in nodes:
        if opens_tape(node, resolve):
            for stmt in _scope_nodes(node.body):
                if not isinstance(stmt, (ast.Assign, ast.AnnAssign)) or stmt.value is None:
                    continue
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                if not any(isinstance(t, ast.Name) and t.id in differentiated for t in targets):
                    continue
                for call in _loss_calls(stmt.value):
                    callee = resolve(call.func)
                    pair = _is_pair(call)
                    # A library call of other arity (`tf.reduce_sum(h)`) is no
                    # loss the project defines.
                    if callee and (pair or callee.split(".", 1)[0] not in EXTERNAL_ROOTS):
                        index.tape_losses.append(TapeLoss(callee, qualname, stmt.lineno, pair))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            inner = f"{qualname}.{node.name}" if qualname else node.name
            if isinstance(node, ast.ClassDef) or inner in tape_scopes:
                record_tape_losses(index, resolve, node.body, inner, tape_scopes)
