"""One train step for identical tape blocks: reuse a step already defined.

A script that trains the same way in several sections (meta-training, then
evaluation, then a final fine-tuning) would otherwise get `train_step`,
`train_step_2` and `train_step_3` with the same body. A careful engineer
defines the step once and calls it from each loop: the step an earlier fix
defined before the loop (in the same statement list, so it runs first) is
called instead when its code is the new step's under another name, maybe
with a `return` the new call site ignores or the `reduce_retracing=True`
a loop with a short last batch needed, and nothing else binds its name.
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from tfrewrite.facts.bindings import iter_assignments
from tfrewrite.facts.walk import iter_nodes


def same_step(
    module: cst.Module,
    siblings: Sequence[cst.CSTNode],
    outer: cst.CSTNode,
    variants: Sequence[cst.FunctionDef],
) -> str | None:
    """The name of a step defined before `outer`, in the same statement list,
    that is one of the `variants` of the new step under another name (or that
    and then a `return` whose values the new call site does not need), bound
    nowhere else: the loop calls it rather than define a copy (`train_step`
    and `train_step_2`)."""
    position = next((i for i, s in enumerate(siblings) if s is outer), 0)
    wanted = {_code_without_name(module, v) for v in variants}
    returns = _returns(variants[0])
    for earlier in siblings[:position]:
        if not isinstance(earlier, cst.FunctionDef):
            continue
        name = earlier.name.value
        candidates = [earlier]
        body = list(getattr(earlier.body, "body", ()))
        if body and not returns and _returns(earlier):
            candidates.append(earlier.with_changes(body=earlier.body.with_changes(body=body[:-1])))
        codes = {_code_without_name(module, c) for c in candidates}
        if wanted & codes and _bound_once(module, name):
            return name
    return None


def _returns(function: cst.FunctionDef) -> bool:
    body = list(getattr(function.body, "body", ()))
    return (
        bool(body)
        and isinstance(body[-1], cst.SimpleStatementLine)
        and isinstance(body[-1].body[0], cst.Return)
    )


def _code_without_name(module: cst.Module, function: cst.FunctionDef) -> str:
    return module.code_for_node(
        function.with_changes(name=cst.Name("_"), leading_lines=[], lines_after_decorators=[])
    )


def _bound_once(module: cst.Module, name: str) -> bool:
    """`name` is bound by one definition in the whole file, and nothing else."""
    definitions = sum(
        1
        for node in iter_nodes(module)
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)) and node.name.value == name
    )
    rebound = any(
        name in {n.value for n in iter_nodes(target) if isinstance(n, cst.Name)}
        for target, _value, _augmented in iter_assignments(module)
    )
    return definitions == 1 and not rebound
