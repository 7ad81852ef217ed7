"""Training loops as units of verification, found and turned into replays.

A train step decorated by a rewrite (TFR302), a tape block extracted from a
loop into a step (TFR303), a loss moved into the tape (TFR305): each is proven
by running the loop that trains, before and after the rewrite, for a few
batches from the same initial weights. The loop is found where the script
has it (module level, `if __name__ == "__main__":`, or a function), and a
*replay* function is built around it:

    def __tfrewrite_replay__(<the scope function's parameters>):
        global <names a module-level loop binds>
        <the statements before the loop that bind what it reads>
        __tfrewrite_start__(locals())
        for x, y in __tfrewrite_sample__(dataset):      # every loop on the path
            try:
                <the loop body, as written>
            finally:
                __tfrewrite_record__(locals())          # the innermost loop only

`__tfrewrite_sample__` keeps the first batches and the last (the short one),
so a few steps stand for an epoch, and an outer loop (epochs) runs two passes;
`while` loops on the path are bounded by `__tfrewrite_limit__`. Everything
before the loop that is not needed, and
everything after it, is left out, so verifying never trains a whole model.

Standard library only: the command line uses it to find loops, the worker to
build replays.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from tfrewrite.facts.index import is_update_call
from tfrewrite.facts.index import opens_tape as _opens_tape
from tfrewrite.verify.appended import append_function
from tfrewrite.verify.module_slice import (
    bound_names,
    find_definition,
    is_main_guard,
    no_arguments,
    own_scope_nodes,
)

REPLAY = "__tfrewrite_replay__"
SAMPLE = "__tfrewrite_sample__"
LIMIT = "__tfrewrite_limit__"
RECORD = "__tfrewrite_record__"
START = "__tfrewrite_start__"
MAIN = "__main__"  # the scope of `if __name__ == "__main__":` blocks
OUTER = 2  # passes of an outer loop on the path (epochs): the epoch boundary is crossed once

# Calls on a needed name that are kept before the loop (they set it up) and
# calls that are not (they train, save or show).
_SETUP_SKIP = frozenset(
    {"fit", "evaluate", "predict", "save", "save_weights", "summary", "show", "plot", "savefig"}
)


@dataclass
class LoopSite:
    """A loop that trains, in a scope: where it is and what it reaches."""

    scope: str  # "" for module level, MAIN, or the qualname of a function
    index: int  # ordinal of its outermost loop among the scope's outermost loops
    line: int  # line of the outermost loop
    innermost: int  # line of the innermost loop on the path to the step
    header: str  # `for x, y in dataset`, for messages
    params: list[str] = field(default_factory=list)  # required parameters of the scope
    trains: bool = True  # the loop reaches a tape or a train step (else it only iterates)


def _scopes(tree: ast.Module) -> Iterator[tuple[str, list[ast.stmt], ast.AST | None]]:
    """(scope name, body, function node) for the module, main guards and every function."""
    yield "", tree.body, None
    for stmt in tree.body:
        if is_main_guard(stmt):
            yield MAIN, stmt.body, None  # type: ignore[attr-defined]

    def visit(body: list[ast.stmt], prefix: str) -> Iterator[tuple[str, list[ast.stmt], ast.AST]]:
        for stmt in body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                yield prefix + stmt.name, stmt.body, stmt
                yield from visit(stmt.body, f"{prefix}{stmt.name}.")
            elif isinstance(stmt, ast.ClassDef):
                yield from visit(stmt.body, f"{prefix}{stmt.name}.")

    yield from visit(tree.body, "")


def _method_class(tree: ast.Module, scope: str) -> str | None:
    """The class of a method scope `Class.method` whose first parameter is `self`."""
    cls_name, _, method = scope.partition(".")
    if not method or "." in method:
        return None
    for stmt in tree.body:
        if isinstance(stmt, ast.ClassDef) and stmt.name == cls_name:
            for item in stmt.body:
                if (
                    isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))
                    and item.name == method
                    and item.args.args
                    and item.args.args[0].arg == "self"
                ):
                    return cls_name
    return None


def _outer_loops(body: list[ast.stmt], main_guard_too: bool = False) -> Iterator[ast.stmt]:
    """The outermost loops of a body, looking into if/with/try but not into loops or defs."""
    for stmt in body:
        if isinstance(stmt, (ast.For, ast.While)):
            yield stmt
        elif isinstance(stmt, (ast.If, ast.With, ast.Try)):
            if is_main_guard(stmt) and not main_guard_too:
                continue
            for block in _blocks(stmt):
                yield from _outer_loops(block)


def _blocks(stmt: ast.stmt) -> list[list[ast.stmt]]:
    if isinstance(stmt, ast.If):
        return [stmt.body, stmt.orelse]
    if isinstance(stmt, ast.With):
        return [stmt.body]
    if isinstance(stmt, ast.Try):
        return [stmt.body, *(h.body for h in stmt.handlers), stmt.orelse, stmt.finalbody]
    if isinstance(stmt, (ast.For, ast.While)):
        return [stmt.body, stmt.orelse]
    return []


def calls_name(name: str) -> Callable[[ast.AST], bool]:
    """A step predicate: a call of `name(...)` or `obj.name(...)`."""

    def predicate(node: ast.AST) -> bool:
        if not isinstance(node, ast.Call):
            return False
        func = node.func
        return (isinstance(func, ast.Name) and func.id == name) or (
            isinstance(func, ast.Attribute) and func.attr == name
        )

    return predicate


def opens_tape(node: ast.AST) -> bool:
    """A step predicate: a `with tf.GradientTape() as tape:` block (the
    fact pass 1 records, `index.opens_tape`, on names as spelled)."""
    return _opens_tape(node)


def applies_gradients(node: ast.AST) -> bool:
    """A call that applies gradients (`index.is_update_call`): `apply_gradients`,
    `minimize`, Keras 3's `optimizer.apply`, `w.assign_sub(lr * dw)`."""
    return isinstance(node, ast.Call) and is_update_call(node)


def reaches_step(name: str | None) -> Callable[[ast.AST], bool]:
    """The step of a loop: a tape block, or a call of the named train step."""
    by_name = calls_name(name) if name else None
    return lambda node: opens_tape(node) or (by_name is not None and by_name(node))


def _train_step_names(tree: ast.Module) -> set[str]:
    """Functions of the module that train: they open a tape or apply gradients."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
            opens_tape(n) or applies_gradients(n) for n in own_scope_nodes(node)
        ):
            names.add(node.name)
    return names


def trains_in(tree: ast.Module) -> Callable[[ast.AST], bool]:
    """A step predicate when no step is named: a tape block, or a call of a
    function of the module that trains (the loop of `main()` calling the
    decorated `train_step`)."""
    names = _train_step_names(tree)
    return lambda node: opens_tape(node) or any(calls_name(n)(node) for n in names)


def _path(loop: ast.stmt, step: Callable[[ast.AST], bool]) -> list[ast.stmt] | None:
    """The loops from `loop` down to the innermost one whose body reaches the step."""
    inner = [
        n
        for n in own_scope_nodes(loop)
        if n is not loop
        and isinstance(n, (ast.For, ast.While))
        and any(step(m) for m in own_scope_nodes(n))
    ]
    if not any(step(m) for m in own_scope_nodes(loop)):
        return None
    path = [loop]
    while True:
        children = [
            n
            for n in inner
            if any(n is m for b in _blocks(path[-1]) for s in b for m in own_scope_nodes(s))
        ]
        # The nearest: a child loop not inside another child loop.
        nearest = [
            c
            for c in children
            if not any(c is not o and any(c is m for m in own_scope_nodes(o)) for o in children)
        ]
        if not nearest:
            return path
        path.append(nearest[0])


def _required(function: ast.AST | None, method: bool = False) -> list[str]:
    """Parameters without defaults (`self` of a method is made by verify)."""
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return []
    args = function.args
    positional = [*args.posonlyargs, *args.args]
    if method:
        positional = positional[1:]
        required_kw = [
            a.arg for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is None
        ]
        defaults = len(args.defaults)
        return [a.arg for a in positional[: len(positional) - defaults]] + required_kw
    required = [a.arg for a in positional[: len(positional) - len(args.defaults)]]
    required += [a.arg for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is None]
    return required


def loop_sites(source: str, step: Callable[[ast.AST], bool]) -> list[LoopSite]:
    """Every outermost loop that reaches the step, in every scope."""
    tree = ast.parse(source)
    sites = []
    for scope, body, function in _scopes(tree):
        for index, loop in enumerate(_outer_loops(body)):
            path = _path(loop, step)
            if path is None:
                continue
            innermost = path[-1]
            sites.append(
                LoopSite(
                    scope,
                    index,
                    loop.lineno,
                    innermost.lineno,
                    _header(innermost),
                    _required(function, _method_class(tree, scope) is not None),
                )
            )
    return sites


def changed_loops(original: str, rewrite: str) -> list[tuple[str, int]]:
    """(scope, index) of outermost loops whose text the rewrite changed."""
    before, after = _loop_texts(original), _loop_texts(rewrite)
    return [key for key, text in after.items() if key in before and before[key] != text]


def _loop_texts(source: str) -> dict[tuple[str, int], str]:
    tree = ast.parse(source)
    return {
        (scope, index): ast.dump(loop)
        for scope, body, _ in _scopes(tree)
        for index, loop in enumerate(_outer_loops(body))
    }


def site_at(source: str, scope: str, index: int, step: str | None = None) -> LoopSite | None:
    """The index-th outermost loop of a scope (described by its innermost
    loop that reaches the step, when there is one)."""
    tree = ast.parse(source)
    for name, body, function in _scopes(tree):
        if name != scope:
            continue
        for i, loop in enumerate(_outer_loops(body)):
            if i == index:
                found = _path(loop, reaches_step(step)) or _path(loop, trains_in(tree))
                inner = (found or [loop])[-1]
                return LoopSite(
                    scope,
                    i,
                    loop.lineno,
                    inner.lineno,
                    _header(inner),
                    _required(function, _method_class(tree, scope) is not None),
                    found is not None,
                )
    return None


def _header(loop: ast.stmt) -> str:
    if isinstance(loop, ast.For):
        target = loop.target
        text = (
            ", ".join(ast.unparse(e) for e in target.elts)
            if isinstance(target, ast.Tuple) and target.elts
            else ast.unparse(target)
        )
        return f"for {text} in {ast.unparse(loop.iter)}"
    return f"while {ast.unparse(loop.test)}"  # type: ignore[attr-defined]


# --- building the replay -----------------------------------------------------


class ReplayError(Exception):
    """The loop cannot be replayed (the message says what to supply)."""


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _binds(stmt: ast.stmt) -> set[str]:
    names = bound_names(stmt)
    if names is not None:
        return names
    out: set[str] = set()
    for node in ast.walk(stmt):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            out.add(node.id)
    return out


def _method_calls(stmt: ast.stmt) -> set[tuple[str, str]]:
    """(receiver, method) of calls such as `model.build(...)` in a statement."""
    out = set()
    for node in ast.walk(stmt):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
        ):
            out.add((node.func.value.id, node.func.attr))
    return out


def _trains(stmt: ast.stmt) -> bool:
    return any(opens_tape(n) for n in ast.walk(stmt)) or any(
        method in _SETUP_SKIP for _, method in _method_calls(stmt)
    )


def _setup(preceding: list[ast.stmt], needed: set[str], module_level: bool) -> list[ast.stmt]:
    """The statements before the loop that bind (or set up) what it reads,
    found backwards; at module level the loader already ran the bindings,
    so only set-up calls (`model.build(...)`) are added."""
    kept: list[ast.stmt] = []
    needed = set(needed)
    for stmt in reversed(preceding):
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue  # a nested definition: kept whole by the replay below
        if is_main_guard(stmt) or _trains(stmt):
            continue
        binds = _binds(stmt) if not isinstance(stmt, ast.Expr) else set()
        sets_up = isinstance(stmt, ast.Expr) and any(
            receiver in needed for receiver, _ in _method_calls(stmt)
        )
        if module_level and not sets_up:
            continue
        if binds & needed or sets_up:
            kept.append(stmt)
            needed |= _names(stmt)
    kept.reverse()
    return kept


def _definitions(body: list[ast.stmt], before: int) -> list[ast.stmt]:
    """Nested defs before the loop (an extracted train step defined in the function)."""
    return [
        s
        for s in body[:before]
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    ]


class _Instrument(ast.NodeTransformer):
    """Sample the loops on the path; record after each pass of the innermost."""

    def __init__(self, path_ids: set[int], innermost: ast.stmt, scope_dict: str) -> None:
        self.path_ids = path_ids
        self.innermost = innermost
        self.scope_dict = scope_dict

    def _record(self) -> ast.stmt:
        return ast.Expr(
            ast.Call(
                ast.Name(RECORD, ast.Load()),
                [ast.Call(ast.Name(self.scope_dict, ast.Load()), [], [])],
                [],
            )
        )

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        return node  # nested definitions are left as written

    def visit_For(self, node: ast.For) -> ast.AST:
        is_path = id(node) in self.path_ids
        innermost = node is self.innermost
        self.generic_visit(node)
        if is_path:
            # An outer loop (epochs) runs OUTER passes; the innermost is sampled.
            passes = [] if innermost else [ast.Constant(OUTER)]
            node.iter = ast.Call(ast.Name(SAMPLE, ast.Load()), [node.iter, *passes], [])
        if innermost:
            node.body = [
                ast.Try(body=node.body, handlers=[], orelse=[], finalbody=[self._record()])
            ]
        return node

    def visit_While(self, node: ast.While) -> ast.AST:
        is_path = id(node) in self.path_ids
        innermost = node is self.innermost
        self.generic_visit(node)
        if is_path:
            node.test = ast.BoolOp(
                ast.And(),
                [ast.Call(ast.Name(LIMIT, ast.Load()), [ast.Constant(node.lineno)], []), node.test],
            )
        if innermost:
            node.body = [
                ast.Try(body=node.body, handlers=[], orelse=[], finalbody=[self._record()])
            ]
        return node


def _locate(body: list[ast.stmt], index: int) -> tuple[ast.stmt, list[ast.stmt]]:
    """The index-th outermost loop of a body and the statements that run before it
    (preceding statements of each enclosing block, outermost first)."""
    count = 0

    def search(
        block: list[ast.stmt], before: list[ast.stmt]
    ) -> tuple[ast.stmt, list[ast.stmt]] | None:
        nonlocal count
        for i, stmt in enumerate(block):
            if isinstance(stmt, (ast.For, ast.While)):
                if count == index:
                    return stmt, before + block[:i]
                count += 1
            elif isinstance(stmt, (ast.If, ast.With, ast.Try)) and not is_main_guard(stmt):
                for sub in _blocks(stmt):
                    found = search(sub, before + block[:i])
                    if found:
                        return found
        return None

    found = search(body, [])
    if found is None:
        raise ReplayError(f"loop #{index + 1} not found")
    return found


def replay_source(
    source: str, scope: str, index: int, step: Callable[[ast.AST], bool] | None = None
) -> tuple[str, list[str]]:
    """`source` with a replay function appended for the index-th outermost
    loop of `scope`; and the names the loop body binds (recorded per step)."""
    tree = ast.parse(source)
    body: list[ast.stmt] | None = None
    function: ast.AST | None = None
    for name, scope_body, fn in _scopes(tree):
        if name == scope:
            body, function = scope_body, fn
            break
    if body is None:
        raise ReplayError(f"no scope `{scope or 'module'}`")
    loop, preceding = _locate(body, index)
    loop = copy.deepcopy(loop)
    path = _path(loop, step) if step is not None else None
    if path is None:
        path = _path(loop, trains_in(tree))
    if path is None:
        path = [loop]
        while True:
            inner = [
                n
                for b in _blocks(path[-1])
                for s in b
                for n in own_scope_nodes(s)
                if isinstance(n, ast.For)
            ]
            tapes = [n for n in inner if any(opens_tape(m) for m in own_scope_nodes(n))]
            if not tapes:
                break
            path.append(tapes[0])
    innermost = path[-1]
    module_level = scope in ("", MAIN) and not isinstance(function, ast.AST)
    recorded = sorted(
        {
            n.id
            for s in _blocks(innermost)[0]
            for n in own_scope_nodes(s)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        }
        | _binds_target(innermost)
    )
    # Definitions before the loop in its function, or in the script's
    # `__main__` block (a train step defined there): the replay defines them.
    nested_scope = function is not None or scope == MAIN
    definitions = _definitions(preceding, len(preceding)) if nested_scope else []
    needed = _needed(tree, _names(loop), definitions)
    setup = _setup(preceding, needed, module_level=scope == "")
    scope_dict = "globals" if module_level else "locals"
    instrumented = _Instrument({id(n) for n in path}, innermost, scope_dict).visit(loop)
    start = ast.Expr(
        ast.Call(
            ast.Name(START, ast.Load()), [ast.Call(ast.Name(scope_dict, ast.Load()), [], [])], []
        )
    )
    statements: list[ast.stmt] = []
    if module_level:
        bound = set()
        for s in [*setup, instrumented]:
            bound |= {
                n.id
                for n in ast.walk(s)
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
            }
        if bound:
            statements.append(ast.Global(sorted(bound)))
    statements += [*definitions, *setup, start, instrumented]
    if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        args = copy.deepcopy(function.args)
        cls_name = _method_class(tree, scope)
        if cls_name is not None:
            # `self` defaults to an object built from the class's `__init__`
            # defaults, unless a harness passes one.
            first = args.args[0]
            args.args = args.args[1:]
            args.kwonlyargs.insert(0, first)
            args.kw_defaults.insert(0, ast.Constant(None))
            build = ast.parse(f"if self is None:\n    self = {cls_name}()").body[0]
            for node in ast.walk(build):  # at the method's line, not line 1
                ast.copy_location(node, function)
            statements.insert(0, build)
    else:
        args = no_arguments()
    replay = ast.FunctionDef(
        name=REPLAY, args=args, body=statements, decorator_list=[], returns=None, type_params=[]
    )
    # The replay starts where its first statement does: every statement keeps
    # the line it has in the script, so a failure names the script's line.
    first = min((s.lineno for s in statements if hasattr(s, "lineno")), default=loop.lineno)
    replay.lineno = replay.end_lineno = first
    ast.fix_missing_locations(replay)
    text = _run_before(source, tree, loop) if function is None else source
    return append_function(text, replay), recorded


def _run_before(source: str, tree: ast.Module, loop: ast.stmt) -> str:
    """The module's text up to the top-level statement holding a module-level
    loop: when the script runs, nothing after it has run yet (a guide that
    defines `train_step(x, y)` above the loop and `train_step(images)` below
    it trains with the first)."""
    for stmt in tree.body:
        end = stmt.end_lineno or stmt.lineno
        if stmt.lineno <= loop.lineno <= end:
            return "".join(source.splitlines(keepends=True)[:end])
    return source


def _needed(tree: ast.Module, names: set[str], nested: Sequence[ast.stmt] = ()) -> set[str]:
    """`names` and every name the module's functions and classes among them
    read, transitively (the step reads a global `optimizer`); `nested` are
    the definitions of the loop's function before it, which shadow the
    module's (a nested `train_step` reads the `generator` its function bound
    in an `if` before the loop)."""
    definitions = {
        s.name: s
        for s in [*tree.body, *nested]
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    }
    needed, todo = set(names), list(names)
    while todo:
        node = definitions.get(todo.pop())
        if node is None:
            continue
        for name in _names(node) - needed:
            needed.add(name)
            todo.append(name)
    return needed


def parameters(replay_text: str) -> set[str]:
    """Parameter names of the replay function in a replay source."""
    tree = ast.parse(replay_text)
    node = find_definition(tree, REPLAY)
    args = node.args
    return {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}


def _binds_target(loop: ast.stmt) -> set[str]:
    if isinstance(loop, ast.For):
        return {n.id for n in ast.walk(loop.target) if isinstance(n, ast.Name)}
    return set()


def scope_function(source: str, scope: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    if scope in ("", MAIN):
        return None
    return find_definition(ast.parse(source), scope)
