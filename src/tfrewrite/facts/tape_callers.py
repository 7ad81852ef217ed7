"""Functions whose result a gradient tape differentiates through a caller.

A helper that computes part of a loss (`def td_target(...)`: the
target-network values of a DQN step) opens no tape itself, yet it runs while
a caller's `with tf.GradientTape()` block is recording: everything it
computes is recorded, and gradients flow back through it into the caller's
loss. A host round trip there (`target_net(s).numpy()`) cut that flow, so
its rewrite must keep the cut with `tf.stop_gradient` exactly as one written
in the tape block itself.

The tape blocks come from `facts.training` (every function that opens a
tape, and the module level). A function is under a tape when a call of it is
written inside such a block, or inside a function already under a tape.
Calls are matched the way the rules resolve this file's functions: a plain
name to a function nested in the caller (or its enclosing functions) or a
top-level one, `self.name(...)` to a method of the caller's own class.
Callers in other files are not seen: their helpers keep the rule's default.

Over-approximating is harmless here: `tf.stop_gradient(x)` is what the host
round trip did to gradients, whether or not any flow; missing a caller
drops the cut.

`tape_entries` answers the stricter question a rule that changes what a
helper computes must ask: through which calls does the function run, each
traced back to its outermost caller in this file, and is every one of them
inside a tape? A helper that an eval function also calls (`critic_loss` in
`critic_step`'s tape and in `evaluate`) runs both ways: a rewrite of it
changes both.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from dataclasses import dataclass

import libcst as cst

from tfrewrite.facts.bindings import (
    ASSIGNMENT_NODES,
    all_params,
    iter_assignments_here,
    local_names,
    split_target,
)
from tfrewrite.facts.context import FunctionScope, RuleContext
from tfrewrite.facts.names import dotted_name
from tfrewrite.facts.training import tape_blocks, tape_name
from tfrewrite.facts.walk import child_nodes, iter_nodes

# Per file: qualname of each function under a tape -> why.
_CACHE: weakref.WeakKeyDictionary[RuleContext, dict[str, str]] = weakref.WeakKeyDictionary()
# Per function: `_local_names`.
_LOCAL_NAMES: weakref.WeakKeyDictionary[FunctionScope, frozenset[str]] = weakref.WeakKeyDictionary()
# Nodes whose bodies are another scope.
_NESTED_SCOPES = frozenset({cst.FunctionDef, cst.ClassDef, cst.Lambda})


def under_tape(ctx: RuleContext, scope: FunctionScope) -> str | None:
    """Why what `scope` (or a function it is nested in) computes is recorded
    by a caller's gradient tape (a phrase), or None when no call in this file
    shows it."""
    reasons = _CACHE.get(ctx)
    if reasons is None:
        reasons = _CACHE[ctx] = _functions_under_tape(ctx)
    current: FunctionScope | None = scope
    while current is not None:
        reason = reasons.get(current.qualname)
        if reason is not None:
            return reason
        current = current.parent
    return None


def _functions_under_tape(ctx: RuleContext) -> dict[str, str]:
    reasons: dict[str, str] = {}
    pending: list[FunctionScope] = []

    def found(callee: FunctionScope, reason: str) -> None:
        if callee.qualname not in reasons:
            reasons[callee.qualname] = reason
            pending.append(callee)

    callers: list[tuple[FunctionScope | None, cst.CSTNode]] = [(None, ctx.module)]
    callers += [(function, function.node.body) for function in ctx.functions]
    for caller, root in callers:
        where = f" in `{caller.qualname}`" if caller is not None else ""
        for block, _ in tape_blocks(ctx, root):
            for callee in _callees(ctx, caller, block.body):
                found(callee, f"called inside a `tf.GradientTape` block{where}")
    while pending:
        caller = pending.pop()
        for callee in _callees(ctx, caller, caller.node.body):
            found(callee, f"called from `{caller.qualname}`, which runs under a gradient tape")
    return reasons


def _callees(
    ctx: RuleContext, caller: FunctionScope | None, root: cst.CSTNode
) -> list[FunctionScope]:
    """The functions of this file that calls under `root` (not in nested
    definitions) resolve to."""
    result: list[FunctionScope] = []
    for node in iter_nodes(root, into_functions=False):
        if type(node) is cst.Call:
            callee = _resolve(ctx, caller, node.func)
            if callee is not None:
                result.append(callee)
    return result


def _resolve(
    ctx: RuleContext, caller: FunctionScope | None, func: cst.BaseExpression
) -> FunctionScope | None:
    """`name` -> a function nested in `caller` or an enclosing function, else
    a top-level function; `self.name` -> a method of `caller`'s class."""
    if type(func) is cst.Name:
        if ctx.names.qualified_name(func) is not None:
            return None  # an imported name
        enclosing: FunctionScope | None = caller
        while enclosing is not None:
            for child in enclosing.children:
                if child.node.name.value == func.value:
                    return child
            enclosing = enclosing.parent
        return _definitions(ctx).top.get(func.value)
    method = caller
    while method is not None and method.class_name is None:
        method = method.parent  # `self` of a function nested in a method is the method's
    if (
        type(func) is cst.Attribute
        and type(func.value) is cst.Name
        and func.value.value == "self"
        and method is not None
    ):
        return _definitions(ctx).methods.get((method.class_name, func.attr.value))
    return None


@dataclass(frozen=True)
class _Definitions:
    """The functions of this file a call can name, by name: top-level ones
    (`name(...)`) and methods by class (`self.name(...)`); the first
    definition of a name wins, as the rules resolve it."""

    top: Mapping[str, FunctionScope]
    methods: Mapping[tuple[str | None, str], FunctionScope]


def _definitions(ctx: RuleContext) -> _Definitions:
    def derive(_: cst.Module) -> _Definitions:
        top: dict[str, FunctionScope] = {}
        methods: dict[tuple[str | None, str], FunctionScope] = {}
        for f in ctx.functions:
            name = f.node.name.value
            if f.parent is None and not f.is_method:
                top.setdefault(name, f)
            methods.setdefault((f.class_name, name), f)
        return _Definitions(top, methods)

    return ctx.module_fact(_definitions, derive)


# -- every way a function runs ----------------------------------------------------------


@dataclass(frozen=True)
class TapeEntry:
    """One way a function of this file runs: traced back through the
    functions of this file that call it to the outermost one, `root` (None:
    module level), whose `call` starts the chain, inside the tape block
    `tape` of `root` (None: outside any tape, or used as a value there and
    run who knows where). `bindings`: what the function's parameters
    are in `root`'s names (`critic_loss(critic, x)`: `model` -> `critic`),
    None when the argument is no dotted name. `unparsed`: for a caller
    that `check`'s pruned parse left out (an eval function pass 1 saw call
    the function), its qualname and first line; `root` and `call` are then
    None, and it counts as running outside a tape."""

    root: FunctionScope | None
    tape: cst.With | None
    call: cst.CSTNode | None
    bindings: Mapping[str, str | None]
    unparsed: tuple[str, int] | None = None

    def name_in_root(self, function: FunctionScope, name: str) -> str | None:
        """What `name`, as `function` (the end of this entry) spells it,
        is in `root`'s names: a parameter through the arguments, a name of
        `root` that `function` (nested in it) sees, or a global `root` does
        not shadow, unchanged; None for a local of `function`, or of a
        function around it other than `root`."""
        head, dot, rest = name.partition(".")
        if head in _parameters(function):
            bound = self.bindings.get(head)
            return None if bound is None else bound + dot + rest
        if head in _local_names(function):
            return None
        outer = function.parent
        while outer is not None and head not in _local_names(outer):
            outer = outer.parent
        if outer is not None:  # a closure variable: `root`'s own only in `root`
            return name if self.root is not None and outer.node is self.root.node else None
        if self.root is not None and head in _local_names(self.root):
            return None  # the global `function` reads is not what `root` calls so
        return name


def tape_entries(ctx: RuleContext, function: FunctionScope) -> list[TapeEntry]:
    """Every way `function` runs that this file shows (`TapeEntry`); empty
    when nothing in this file calls it or uses it as a value (it is then an
    entry point, run from elsewhere). Calls in other files are not seen."""
    sites = ctx.module_fact((tape_entries, "sites"), lambda _: _call_sites(ctx))
    memo: dict[str, list[TapeEntry]] = ctx.module_fact((tape_entries, "entries"), lambda _: {})
    return _entries(ctx, function, sites, memo, ())


@dataclass(frozen=True)
class _Site:
    caller: FunctionScope | None
    node: cst.CSTNode | None  # the call, or the name used as a value
    tape: cst.With | None  # the caller's tape block around it
    arguments: Mapping[str, str | None] | None  # None: used as a value
    unparsed: tuple[str, int] | None = None  # `TapeEntry.unparsed`


def _call_sites(ctx: RuleContext) -> dict[str, list[_Site]]:
    """Qualname of each function of this file -> where this file calls it
    or uses it as a value (`tf.function(critic_loss)`, `loss_fn=critic_loss`)."""
    defined = {function.node.name.value for function in ctx.functions}
    sites: dict[str, list[_Site]] = {}
    callers: list[tuple[FunctionScope | None, cst.CSTNode]] = [(None, ctx.module)]
    callers += [(function, function.node.body) for function in ctx.functions]
    for caller, root in callers:
        calls, references, bound = _references(ctx, root, defined)
        if caller is not None:  # the walk saw every binding of its body
            _LOCAL_NAMES[caller] = frozenset(_parameters(caller) | bound)
        for reference in references:
            callee = _unshadowed(caller, reference, _resolve(ctx, caller, reference))
            if callee is None:
                continue
            called = calls.get(id(reference))
            if called is None:
                site = _Site(caller, reference, None, None)
            else:
                call, tape = called
                site = _Site(caller, call, tape, _arguments(callee, call))
            sites.setdefault(callee.qualname, []).append(site)
    if ctx.index.pruned is not None:
        _add_unparsed_callers(ctx, sites)
    return sites


def _add_unparsed_callers(ctx: RuleContext, sites: dict[str, list[_Site]]) -> None:
    """Calls that pass 1 saw (on the whole file) in functions `check`'s
    pruned parse left out: an eval function calling a loss helper still
    runs it outside any tape."""
    parsed = {function.qualname for function in ctx.functions}
    top = {f.qualname: f for f in ctx.functions if f.parent is None and not f.is_method}
    prefix = f"{ctx.index.module}." if ctx.index.module else ""
    for qualname, info in ctx.index.functions.items():
        if qualname in parsed:
            continue
        for called in info.calls:
            name = called.removeprefix(prefix)
            callee = top.get(name)
            if callee is None and name.startswith("self.") and info.class_name:
                callee = next(
                    (
                        f
                        for f in ctx.functions
                        if f.class_name == info.class_name and f.node.name.value == name[5:]
                    ),
                    None,
                )
            if callee is not None:
                unparsed = (qualname, info.first_lineno)
                sites.setdefault(callee.qualname, []).append(
                    _Site(None, None, None, None, unparsed)
                )


def _references(
    ctx: RuleContext, root: cst.CSTNode, defined: set[str]
) -> tuple[dict[int, tuple[cst.Call, cst.With | None]], list[cst.Name | cst.Attribute], set[str]]:
    """One walk of `root` (not into nested definitions): the names and
    attributes spelled like a function of this file (`defined`) that are
    neither keywords nor attribute names of something else, in source
    order; by the id of its callee expression, each call with the
    outermost tape block of `root` whose body holds it (None outside one);
    and the names `root` binds (`bindings.bound_names`)."""
    calls: dict[int, tuple[cst.Call, cst.With | None]] = {}
    skipped: set[int] = set()  # keyword and attribute names
    references: list[cst.Name | cst.Attribute] = []
    bound: set[str] = set()
    stack: list[tuple[cst.CSTNode, cst.With | None]] = [(root, None)]
    pop = stack.pop
    while stack:
        node, tape = pop()
        # Exact classes: `isinstance` on LibCST's goes through `ABCMeta`.
        if type(node) is cst.Call:
            calls[id(node.func)] = (node, tape)
            skipped.update(id(a.keyword) for a in node.args if a.keyword is not None)
        elif type(node) is cst.Attribute:
            skipped.add(id(node.attr))
            if node.attr.value in defined:
                references.append(node)
        elif type(node) is cst.Name:
            if node.value in defined:
                references.append(node)
        elif type(node) in _NESTED_SCOPES and node is not root:
            continue  # its body runs through its own calls
        elif type(node) in ASSIGNMENT_NODES:
            for target, value, _ in iter_assignments_here(node):
                bound.update(name for name, _, _ in split_target(target, value))
        children = child_nodes(node)
        children.reverse()
        if type(node) is cst.With and tape is None and tape_name(ctx, node) is not None:
            body = node.body  # its items are outside the tape
            stack.extend((child, node if child is body else None) for child in children)
        else:
            stack.extend((child, tape) for child in children)
    return calls, [r for r in references if id(r) not in skipped], bound


def _unshadowed(
    caller: FunctionScope | None, func: cst.BaseExpression, callee: FunctionScope | None
) -> FunctionScope | None:
    """`callee`, unless it is a top-level function whose name `caller` binds
    to something else (`def step(loss_fn): loss_fn(y, p)`, `loss = ...`)."""
    if (
        callee is not None
        and caller is not None
        and callee.parent is None
        and isinstance(func, cst.Name)
        and func.value in _local_names(caller)
        and not any(child is callee for child in caller.children)
    ):
        return None
    return callee


def _arguments(callee: FunctionScope, call: cst.Call) -> dict[str, str | None]:
    """`callee`'s parameters -> the dotted names `call` passes them (None for
    another expression, or a parameter a `*`/`**` argument may fill)."""
    params = callee.node.params
    positional = [p.name.value for p in [*params.posonly_params, *params.params]]
    bound: dict[str, str | None] = {}
    if callee.is_method and isinstance(call.func, cst.Attribute) and positional:
        # `self.helper(x)`: the method's `self` is the caller's.
        bound[positional[0]] = dotted_name(call.func.value)
        positional = positional[1:]
    index = 0
    for arg in call.args:
        if arg.star:
            return {}  # `*args`, `**kwargs`: what binds where is not written
        if arg.keyword is not None:
            bound[arg.keyword.value] = dotted_name(arg.value)
        elif index < len(positional):
            bound[positional[index]] = dotted_name(arg.value)
            index += 1
    return bound


def _entries(
    ctx: RuleContext,
    function: FunctionScope,
    sites: dict[str, list[_Site]],
    memo: dict[str, list[TapeEntry]],
    active: tuple[str, ...],
) -> list[TapeEntry]:
    if function.qualname in memo:
        return memo[function.qualname]
    if function.qualname in active:
        return []  # recursion: the outer call already covers this path
    entries: list[TapeEntry] = []
    for site in sites.get(function.qualname, []):
        arguments = site.arguments or {}
        caller = site.caller
        outer = (
            None
            if caller is None or site.tape is not None or site.arguments is None
            else _entries(ctx, caller, sites, memo, (*active, function.qualname))
        )
        if caller is None or not outer:
            # The chain starts here: in a tape of `caller`, or outside one.
            entries.append(TapeEntry(caller, site.tape, site.node, arguments, site.unparsed))
            continue
        for entry in outer:
            bindings = {
                param: None if name is None else entry.name_in_root(caller, name)
                for param, name in arguments.items()
            }
            entries.append(TapeEntry(entry.root, entry.tape, entry.call, bindings, entry.unparsed))
    if not active:
        memo[function.qualname] = entries
    return entries


def _parameters(function: FunctionScope) -> set[str]:
    return {p.name.value for p in all_params(function.node.params)}


def _local_names(function: FunctionScope) -> frozenset[str]:
    """Names `function` binds itself: its parameters and what its body
    assigns (`bindings.local_names`), kept per function: `_call_sites`
    records them as it walks each body."""
    names = _LOCAL_NAMES.get(function)
    if names is None:
        names = _LOCAL_NAMES[function] = frozenset(local_names(function.node))
    return names
