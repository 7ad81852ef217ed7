"""Changes a rewrite makes on purpose, which the reference adopts.

Most rewrites must keep what the original computes. One changes it on
purpose: `model(x)` → `model(x, training=True)` in a train step (TFR304),
because without it dropout and batch normalisation silently run in inference
mode while training. Compared with the original as written, every such step
would differ. So the reference is the original with the same keyword added
to the same calls, and the result says so; everything else the rewrite did is
still compared against the original.

Standard library only.
"""

from __future__ import annotations

import ast


def _training_true(call: ast.Call) -> bool:
    return any(
        kw.arg == "training" and isinstance(kw.value, ast.Constant) and kw.value.value is True
        for kw in call.keywords
    )


def _without_training(call: ast.Call) -> str:
    bare = ast.Call(call.func, call.args, [kw for kw in call.keywords if kw.arg != "training"])
    return ast.unparse(bare)


def _calls(tree: ast.Module) -> list[tuple[str, ast.Call]]:
    """(qualname of the enclosing function, "" outside functions; call) for every call."""
    out: list[tuple[str, ast.Call]] = []

    def visit(node: ast.AST, where: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                visit(child, f"{where}.{child.name}" if where else child.name)
                continue
            if isinstance(child, ast.Call):
                out.append((where, child))
            visit(child, where)

    visit(tree, "")
    return out


def adopt_training_flag(original: str, rewrite: str) -> tuple[str, list[int]]:
    """`original` with `training=True` added to the calls the rewrite added it
    to, matched by their text in the same function (or, for a call the
    rewrite moved into a new function, such as an extracted train step, in a
    place the rewrite left no such call); and the original lines changed. The
    source is returned unchanged when there is nothing to adopt."""
    try:
        before, after = ast.parse(original), ast.parse(rewrite)
    except SyntaxError:
        return original, []
    scopes_before = {where for where, _ in _calls(before)}
    added: set[tuple[str, str]] = set()
    moved: set[str] = set()
    left: set[tuple[str, str]] = set()
    for where, call in _calls(after):
        if _training_true(call):
            text = _without_training(call)
            added.add((where, text))
            if where not in scopes_before:
                moved.add(text)
        elif not any(kw.arg == "training" for kw in call.keywords):
            left.add((where, ast.unparse(call)))
    lines: list[int] = []
    for where, call in _calls(before):
        if any(kw.arg == "training" for kw in call.keywords):
            continue
        text = ast.unparse(call)
        if (where, text) in added or (text in moved and (where, text) not in left):
            call.keywords.append(ast.keyword("training", ast.Constant(True)))
            lines.append(call.lineno)
    if not lines:
        return original, []
    ast.fix_missing_locations(before)
    return ast.unparse(before) + "\n", sorted(set(lines))
