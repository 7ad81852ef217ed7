"""Train steps handed a new model or optimizer between calls.

A `tf.function` may create variables only while it is first traced. A step
that takes its model or optimizer as an argument traces again for each new
object, and a fresh Keras model or optimizer builds its variables on its first
use, inside that second trace: it raises ("tf.function only supports singleton
tf.Variables created on the first call"; Keras 3 fails on a symbolic tensor's
`handle`). Eagerly the same script trains the second model as well as the
first (a notebook section that restarts "from the checkpoint" with `net =
Net()` and `opt = Adam(0.1)`, a fresh model per fold). TFR302 lists such an
argument as a reason not to decorate the step.
"""

from __future__ import annotations

import libcst as cst

from tfrewrite.facts.bindings import all_params, scope_nodes
from tfrewrite.facts.blockers import Blocker, lines_of
from tfrewrite.facts.context import FunctionScope, RuleContext
from tfrewrite.facts.keras_names import keras_leaf, keras_path
from tfrewrite.facts.name_use import name_use
from tfrewrite.facts.names import dotted_name
from tfrewrite.facts.vocabulary import builds_variables
from tfrewrite.facts.walk import iter_with_ancestors

# Keras classes whose objects build variables on first use.
_OWNER_LEAVES = frozenset({"Model", "Layer", "Sequential", "Optimizer"})
_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)


def fresh_object_arguments(ctx: RuleContext, function: FunctionScope) -> list[Blocker]:
    """Blockers for a model or optimizer the step is handed, as an argument
    or as a name it reads, that the calling scope builds more than once (or
    in a loop)."""
    name = function.node.name.value
    blockers: list[Blocker] = []
    seen: set[str] = set()
    scopes: list[cst.CSTNode] = [ctx.module, *(scope.node for scope in ctx.functions)]
    for scope in scopes:
        calls = [
            node
            for node in scope_nodes(scope)
            if isinstance(node, cst.Call) and dotted_name(node.func) in (name, f"self.{name}")
        ]
        if not calls:
            continue
        built = _owner_bindings(ctx, scope, _window(ctx, function, scope))
        for call in calls:
            for arg in call.args:
                if isinstance(arg.value, cst.Name) and arg.value.value not in seen:
                    again = _built_again(built.get(arg.value.value, []))
                    if again is not None:
                        seen.add(arg.value.value)
                        blockers.append(
                            Blocker(
                                *lines_of(ctx, again),
                                "builds a new model, optimizer or metric the step is handed: it "
                                "creates its variables on first use, inside a second trace, "
                                "where a `tf.function` cannot create variables",
                            )
                        )
    # Names the step reads from where it is defined: a traced step keeps the
    # objects of its first trace, and trains the old model after `net = Net()`.
    home = function.parent.node if function.parent is not None else ctx.module
    params = {p.name.value for p in all_params(function.node.params)}
    body = list(getattr(function.node.body, "body", ()))
    built = _owner_bindings(ctx, home, _window(ctx, function, home))
    for read in name_use(body).reads:
        if read in params or read in seen:
            continue
        again = _built_again(built.get(read, []))
        if again is not None:
            seen.add(read)
            blockers.append(
                Blocker(
                    *lines_of(ctx, again),
                    "builds a new model, optimizer or metric the step reads: a traced step keeps "
                    "the one of its first call and goes on training it",
                )
            )
    return blockers


def _built_again(bindings: list[tuple[cst.CSTNode, bool]]) -> cst.CSTNode | None:
    """The construction that makes a second object: the second binding, or a
    binding in a loop."""
    if len(bindings) > 1:
        return bindings[1][0]
    return next((node for node, looped in bindings if looped), None)


def _window(ctx: RuleContext, function: FunctionScope, scope: cst.CSTNode) -> tuple[int, int]:
    """The lines of `scope` whose bindings this definition of the step sees.
    Where the step is defined: from its `def` to the next `def` of the same
    name (a notebook section that defines its step again gets a new
    `tf.function`); a binding before the `def` is the one object its first
    call meets."""
    home = function.parent.node if function.parent is not None else ctx.module
    if scope is not home:
        return 0, 10**9
    name = function.node.name.value
    start = ctx.lines([function.node])[0][0]
    later = [
        ctx.lines([node])[0][0]
        for node in scope_nodes(scope)
        if isinstance(node, cst.FunctionDef) and node is not scope and node.name.value == name
    ]
    return start, min((line for line in later if line > start), default=10**9)


def _owner_bindings(
    ctx: RuleContext, scope: cst.CSTNode, window: tuple[int, int]
) -> dict[str, list[tuple[cst.CSTNode, bool]]]:
    """Name -> (binding value, bound in a loop) for each `name = Model(...)`
    or `name = Adam(...)` of `scope` itself that the step's calls can meet.
    A binding in the other branch of an `if` than the one before it, or made
    before the step's `def` and followed by another, replaces that one."""
    found: dict[str, list[tuple[cst.CSTNode, bool]]] = {}
    branches: dict[int, dict[int, str]] = {}
    for node, ancestors in iter_with_ancestors(scope):
        if node is not scope and isinstance(node, _SCOPES):
            continue
        if any(a is not scope and isinstance(a, _SCOPES) for a in ancestors):
            continue
        if not isinstance(node, cst.Assign) or not isinstance(node.value, cst.Call):
            continue
        if len(node.targets) != 1 or not isinstance(node.targets[0].target, cst.Name):
            continue
        value = node.value
        if not _builds_variables(ctx, value):
            continue
        line = ctx.lines([value])[0][0]
        if line >= window[1]:
            continue
        looped = any(isinstance(a, (cst.For, cst.While)) for a in ancestors)
        branches[id(value)] = _branches(node, ancestors)
        bindings = found.setdefault(node.targets[0].target.value, [])
        if bindings and not bindings[-1][1]:
            previous = branches[id(bindings[-1][0])]
            here = branches[id(value)]
            exclusive = any(previous.get(k, b) != b for k, b in here.items())
            if exclusive or line < window[0]:
                bindings.pop()
        bindings.append((value, looped))
    return found


def _branches(node: cst.CSTNode, ancestors: tuple[cst.CSTNode, ...]) -> dict[int, str]:
    """`if` statement -> the branch (`body` or `orelse`) holding `node`."""
    chain = (*ancestors, node)
    result: dict[int, str] = {}
    for i, ancestor in enumerate(chain[:-1]):
        if isinstance(ancestor, cst.If):
            child = chain[i + 1]
            result[id(ancestor)] = "body" if child is ancestor.body else "orelse"
    return result


def _builds_variables(ctx: RuleContext, call: cst.Call) -> bool:
    qualified = ctx.names.qualified_name(call.func) or ""
    if keras_path(qualified) is not None:
        return builds_variables(qualified)
    return _owner_class(ctx, dotted_name(call.func) or "", 0)


def _owner_class(ctx: RuleContext, name: str, depth: int) -> bool:
    """A class of this module deriving from a Keras model or layer (or from
    `tf.Module`), following the module's own classes."""
    info = ctx.index.classes.get(name)
    if info is None or depth > 10:
        return False
    for base in info.bases:
        if keras_leaf(base) in _OWNER_LEAVES or base == "tensorflow.Module":
            return True
        if _owner_class(ctx, base.rpartition(".")[2], depth + 1):
            return True
    return False
