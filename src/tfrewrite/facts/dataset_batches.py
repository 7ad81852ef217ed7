"""Whether every batch a loop iterates has one size.

A loop over `ds.batch(64, drop_remainder=True)` never sees a short final
batch; one over `ds.batch(64)` may. Where the dataset comes from is followed
the way the values flow: a name to what it is assigned (in the function that
binds it, or anywhere in the file for a name the function does not bind), a
method chain to its receiver (`ds.prefetch(2)` to `ds`), and a call of one of
the file's functions to each value it returns, with the function's
parameters bound to the call's arguments and defaults (`call_arguments`). So
`make_ds(path, 64)` of

    def make_ds(path, batch_size, drop_remainder=True):
        return tf.data.TextLineDataset(path).batch(batch_size, drop_remainder=drop_remainder)

batches with `drop_remainder=True`; `make_ds(path, 64, False)` does not, and
neither does `make_ds(path, 64, flag)` for a `flag` whose value is not in the
code: an unknown value keeps the remainder, as does any one `return` of a
helper that returns one of two datasets. A batch size of 1, however it is
passed, leaves no batch short. A name a tuple target binds (`train_ds,
test_ds = load(args)`) stands for the whole value unpacked: each dataset
in it must batch to one size. A function of another module is
known by what the project facts say of it: whether every batching it does
drops the remainder (`ModuleIndex.callee_equal_batches`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import libcst as cst

from tfrewrite.facts.bindings import all_params, local_bindings, scope_nodes, split_target
from tfrewrite.facts.call_arguments import BoundValue, bind_arguments
from tfrewrite.facts.context import RuleContext
from tfrewrite.facts.named_calls import calls_by_name
from tfrewrite.facts.names import dotted_name
from tfrewrite.facts.walk import child_nodes, iter_nodes

# Dataset methods that batch, with the position of `drop_remainder` when it
# is passed by position (`batch(batch_size, drop_remainder, ...)`,
# `padded_batch(batch_size, padded_shapes, padding_values, drop_remainder)`).
_BATCHING = {"batch": 1, "padded_batch": 3}
# Calls whose arguments are what the loop iterates: builtins, and progress
# bars that yield the elements of the iterable they are given.
_WRAPPERS = frozenset(
    {"enumerate", "zip", "iter", "tqdm", "tqdm.tqdm", "tqdm.auto.tqdm", "tqdm.notebook.tqdm"}
)
# Methods of a `tf.distribute` strategy that hand out the batches of the
# dataset they are given, split evenly across the replicas.
_DISTRIBUTING = frozenset({"experimental_distribute_dataset", "distribute_dataset"})
# How many names, calls and receivers are followed from the loop.
_DEPTH = 5
# How many values are looked at before the answer is "not known".
_BUDGET = 400


@dataclass(frozen=True)
class _Frame:
    """A call of one of the file's functions being followed: its parameters
    bound for that call, and where the call's arguments are read."""

    function: cst.FunctionDef
    bound: dict[str, BoundValue]
    caller_scope: cst.FunctionDef | None
    caller: _Frame | None


@dataclass(frozen=True)
class _Place:
    """An expression and where it is read: the function whose names it
    uses (None at module level) and the call that function was reached by."""

    expr: cst.BaseExpression
    scope: cst.FunctionDef | None
    frame: _Frame | None


def batches_of_one_size(ctx: RuleContext, loop: cst.For, scope: cst.FunctionDef | None) -> bool:
    """Whether every batch `loop` (in `scope`) iterates has the same size:
    its dataset is batched with `drop_remainder=True` wherever it comes
    from, and with nothing else; or the loop stops after a whole number of
    batches, zipped with `range(n)` where `n` is a floor division
    (`int(size / batch_size)`, `size // batch_size`): the short final batch,
    if there is one, is never read."""
    if _stops_at_whole_batches(ctx, loop.iter, scope):
        return True
    candidates = _iterated(loop.iter)
    dropping = False
    for candidate in candidates:
        places = _sources(ctx, _Place(candidate, scope, None))
        if places is None:
            return False  # too many ways to follow: not proven
        for place in places:
            if _returns_equal_batches(ctx, place.expr) or _kept_by_equal_batcher(ctx, place):
                dropping = True  # `load_dataset(...)` of another module, `loader.valid_ds`
                continue
            for node in iter_nodes(place.expr):
                if isinstance(node, cst.Call) and _method(node) in _BATCHING:
                    if _drops_remainder(ctx, node, place) is not True and not (
                        _batches_one_by_one(ctx, node, place)
                    ):
                        return False
                    dropping = True
    return dropping


def from_short_batcher(ctx: RuleContext, loop: cst.For, scope: cst.FunctionDef | None) -> bool:
    """Whether what `loop` iterates comes from a call of a project function
    of another module that batches some dataset keeping the remainder
    (`ModuleIndex.callee_short_batches`: `train_ds, val_ds, info =
    create_generators(...)`): its last batch may be short."""
    known = ctx.index.callee_short_batches
    if not known:
        return False
    for candidate in _iterated(loop.iter):
        for place in _sources(ctx, _Place(candidate, scope, None)) or ():
            expr = place.expr
            if isinstance(expr, cst.Call) and any(
                name in known for name in ctx.pass1_names(expr.func)
            ):
                return True
    return False


def _returns_equal_batches(ctx: RuleContext, expr: cst.BaseExpression) -> bool:
    """A call of a project function of another module whose every batching
    drops the remainder (`ModuleIndex.callee_equal_batches`)."""
    known = ctx.index.callee_equal_batches
    if not known or not isinstance(expr, cst.Call):
        return False
    return any(name in known for name in ctx.pass1_names(expr.func))


def _kept_by_equal_batcher(ctx: RuleContext, place: _Place) -> bool:
    """`loader.valid_ds` where `loader` holds an object of a project class
    whose methods batch only with `drop_remainder=True`
    (`ModuleIndex.callee_equal_batches`)."""
    expr = place.expr
    if not (isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name)):
        return False
    if not ctx.index.callee_equal_batches:
        return False
    owners = _name_values(ctx, expr.value.value, place)
    return bool(owners) and all(_returns_equal_batches(ctx, owner.expr) for owner in owners)


def _stops_at_whole_batches(
    ctx: RuleContext, source: cst.BaseExpression, scope: cst.FunctionDef | None
) -> bool:
    """`zip(range(n), ds)` (through wrappers: `tqdm(zip(...))`) where every
    value `n` may hold is a floor division: the loop runs `n` whole
    batches."""
    if not isinstance(source, cst.Call):
        return False
    name = dotted_name(source.func)
    arguments = [a.value for a in source.args if a.keyword is None and not a.star]
    if name != "zip":
        return name in _WRAPPERS and any(
            _stops_at_whole_batches(ctx, a, scope) for a in arguments[:1]
        )
    for argument in arguments:
        if not (
            isinstance(argument, cst.Call)
            and dotted_name(argument.func) == "range"
            and len(argument.args) in (1, 2)
        ):
            continue
        count = argument.args[-1].value
        if isinstance(count, cst.Name):
            values = [
                place.expr for place in _name_values(ctx, count.value, _Place(count, scope, None))
            ]
        else:
            values = [count]
        if values and all(_floor_division(v) for v in values):
            return True
    return False


def _floor_division(expr: cst.BaseExpression) -> bool:
    """`a // b`, `int(a / b)`, `math.floor(a / b)`: a count of whole `b`s."""
    if isinstance(expr, cst.BinaryOperation):
        return isinstance(expr.operator, cst.FloorDivide)
    if isinstance(expr, cst.Call) and dotted_name(expr.func) in ("int", "math.floor"):
        inner = expr.args[0].value if len(expr.args) == 1 else None
        return isinstance(inner, cst.BinaryOperation) and isinstance(
            inner.operator, (cst.Divide, cst.FloorDivide)
        )
    return False


def _iterated(source: cst.BaseExpression) -> list[cst.BaseExpression]:
    """What a loop over `source` iterates the elements of, through wrappers
    (`enumerate(tqdm(ds))`: `ds`)."""
    if isinstance(source, cst.Call) and dotted_name(source.func) in _WRAPPERS:
        wrapped = [a.value for a in source.args if a.keyword is None and not a.star]
        return [inner for value in wrapped for inner in _iterated(value)]
    return [source]


def _sources(ctx: RuleContext, start: _Place) -> list[_Place] | None:
    """`start` and every value it may stand for, each once; None past
    `_BUDGET` of them (a name assigned all over a large file)."""
    found: list[_Place] = []  # also keeps every frame alive, so ids stay unique
    seen: set[tuple[int, int]] = set()
    pending = [(start, 0)]
    while pending:
        place, depth = pending.pop()
        key = (id(place.expr), id(place.frame))
        if key in seen:
            continue
        seen.add(key)
        found.append(place)
        if len(found) > _BUDGET:
            return None
        if depth < _DEPTH:
            pending += [(value, depth + 1) for value in _stands_for(ctx, place)]
    return found


def _stands_for(ctx: RuleContext, place: _Place) -> list[_Place]:
    """One step back along the flow: the values a name holds, what a
    wrapper or a strategy hands out the elements of (`tqdm(ds)`,
    `strategy.experimental_distribute_dataset(ds)`), a method chain's
    receiver, what a called function of the file returns."""
    expr = place.expr
    if isinstance(expr, cst.Name):
        return _name_values(ctx, expr.value, place)
    if not isinstance(expr, cst.Call):
        return []
    func = expr.func
    args: Sequence[cst.Arg] = expr.args
    if dotted_name(func) in _WRAPPERS or (
        isinstance(func, cst.Attribute) and func.attr.value in _DISTRIBUTING
    ):
        return [
            _Place(a.value, place.scope, place.frame)
            for a in args
            if a.keyword is None and not a.star
        ]
    if isinstance(func, cst.Attribute):
        through_class = _class_methods(ctx, func)  # `Net.create_dataset(self, ...)`
        methods = through_class or _own_methods(ctx, func, place.scope)
        if not methods:
            return [_Place(func.value, place.scope, place.frame)]
        called = methods
        if not through_class:  # `self.create_dataset(...)`: `self` binds the first parameter
            args = [cst.Arg(func.value), *args]
    elif isinstance(func, cst.Name):
        called = _module_functions(ctx, func.value)
    else:
        return []
    found: list[_Place] = []
    for function in called:
        if _on_stack(function, place.frame):
            continue  # recursion: what it returns is what is being worked out
        frame = _Frame(function, bind_arguments(function, args), place.scope, place.frame)
        for node in scope_nodes(function.body):
            if isinstance(node, cst.Return) and node.value is not None:
                found.append(_Place(node.value, function, frame))
    return found


def _class_methods(ctx: RuleContext, func: cst.Attribute) -> list[cst.FunctionDef]:
    """`Net.name` for a class `Net` of this file: its methods `name`."""
    if not isinstance(func.value, cst.Name):
        return []
    owner, name = func.value.value, func.attr.value
    return [f.node for f in ctx.functions if f.class_name == owner and f.node.name.value == name]


def _own_methods(
    ctx: RuleContext, func: cst.Attribute, scope: cst.FunctionDef | None
) -> list[cst.FunctionDef]:
    """`self.name` called in a method: the methods `name` of its class."""
    if not (isinstance(func.value, cst.Name) and func.value.value == "self") or scope is None:
        return []
    around = ctx.scope_of(scope)
    owner = around.class_name if around is not None else None
    if owner is None:
        return []
    name = func.attr.value
    return [f.node for f in ctx.functions if f.class_name == owner and f.node.name.value == name]


def _name_values(ctx: RuleContext, name: str, place: _Place) -> list[_Place]:
    """What `name` holds where `place` reads it (`_scoped_values`), or else
    what it is assigned anywhere in the file (a parameter whose caller is
    not followed, a name of the module)."""
    scoped = _scoped_values(ctx, name, place)
    if scoped is not None:
        return [value for value in scoped if value is not None]
    return [_Place(value, function, None) for value, function in _assignments(ctx).get(name, ())]


def _scoped_values(ctx: RuleContext, name: str, place: _Place) -> list[_Place | None] | None:
    """What `name` holds in the function that reads it at `place`: the
    argument (or default) a followed call binds it to, and each value the
    function assigns it (None for a binding whose value is not known: a loop
    target, a tuple target, ...). None when the function does not say: a
    name it does not bind, or a parameter whose call is not followed."""
    frame, scope = place.frame, place.scope
    if scope is None:
        return None
    values: list[_Place | None] = []
    if name in _param_names(scope):
        if frame is None or frame.function is not scope:
            return _passed_by_callers(ctx, scope, name)
        if name not in frame.bound:
            return None
        bound = frame.bound[name]
        if bound.value is None:
            values.append(None)
        elif bound.passed:
            values.append(_Place(bound.value, frame.caller_scope, frame.caller))
        else:
            values.append(_Place(bound.value, None, None))  # a default: read at module level
    elif name not in _locals(ctx, scope):
        return None
    values += [
        None if value is None else _Place(value, scope, frame)
        for value in _locals(ctx, scope).get(name, ())
    ]
    return values


def _passed_by_callers(
    ctx: RuleContext, function: cst.FunctionDef, name: str
) -> list[_Place | None] | None:
    """What the calls of a top-level function in this file pass for its
    parameter `name` (`evaluate(model, val_ds)`: `val_ds`, read in the
    caller). None when the file does not call it: the value is not known."""
    calls = calls_by_name(ctx).get(function.name.value, [])
    if not calls or function not in _module_functions(ctx, function.name.value):
        return None
    values: list[_Place | None] = []
    for call, caller in calls:
        bound = bind_arguments(function, call.args).get(name)
        if bound is None or bound.value is None:
            values.append(None)
        else:
            scope = caller if bound.passed else None  # a default: read at module level
            values.append(_Place(bound.value, scope, None))
    return values


def _drops_remainder(ctx: RuleContext, call: cst.Call, place: _Place) -> bool | None:
    """What `drop_remainder` a batching call passes: True, False (also when
    it leaves it out: the default), or None when the value is not known."""
    position = _BATCHING[_method(call) or ""]
    positional = [a for a in call.args if a.keyword is None]
    if any(a.star for a in call.args):
        return None
    value = next(
        (a.value for a in call.args if a.keyword and a.keyword.value == "drop_remainder"), None
    )
    if value is None and len(positional) > position:
        value = positional[position].value
    if value is None:
        return False
    return _truth(ctx, _Place(value, place.scope, place.frame), 0)


def _truth(ctx: RuleContext, place: _Place, depth: int) -> bool | None:
    """`True` or `False` as written, or what a name holds on every one of its
    bindings (`_constant`); None otherwise."""
    value = _constant(ctx, place, depth)
    return value if isinstance(value, bool) else None


def _constant(ctx: RuleContext, place: _Place, depth: int) -> bool | int | None:
    """`True`, `False` or an integer as written, or what a name holds on
    every one of its bindings (a parameter bound by a followed call, a
    local, a module constant); None otherwise."""
    expr = place.expr
    if isinstance(expr, cst.Name) and expr.value in ("True", "False"):
        return expr.value == "True"
    if isinstance(expr, cst.Integer):
        return int(expr.evaluated_value)
    if not isinstance(expr, cst.Name) or depth >= _DEPTH:
        return None
    scoped = _scoped_values(ctx, expr.value, place)
    if scoped is not None:
        if any(value is None for value in scoped):
            return None
        values = [value for value in scoped if value is not None]
    elif place.scope is not None and expr.value in _param_names(place.scope):
        return None  # a parameter whose call is not followed
    else:
        values = [
            _Place(value, None, None)
            for value, function in _assignments(ctx).get(expr.value, ())
            if function is None
        ]
    constants = {(type(c), c) for c in (_constant(ctx, value, depth + 1) for value in values)}
    return constants.pop()[1] if len(constants) == 1 else None


def _batches_one_by_one(ctx: RuleContext, call: cst.Call, place: _Place) -> bool:
    """`ds.batch(1)` (or a size that is 1 wherever it comes from): every
    batch holds one element, none is short."""
    size = next((a.value for a in call.args if a.keyword and a.keyword.value == "batch_size"), None)
    if size is None and call.args and call.args[0].keyword is None and not call.args[0].star:
        size = call.args[0].value
    if size is None:
        return False
    value = _constant(ctx, _Place(size, place.scope, place.frame), 0)
    return value == 1 and not isinstance(value, bool)


def _method(call: cst.Call) -> str | None:
    return call.func.attr.value if isinstance(call.func, cst.Attribute) else None


def _locals(
    ctx: RuleContext, function: cst.FunctionDef
) -> dict[str, list[cst.BaseExpression | None]]:
    """`local_bindings` of `function`, a tuple target bound to what it is
    drawn from (each dataset of `train_ds, test_ds = load(args)` is one
    `load` returns), worked out once per module."""
    cache: dict[int, dict[str, list[cst.BaseExpression | None]]]
    cache = ctx.module_fact(_locals, lambda _module: {})
    if id(function) not in cache:
        cache[id(function)] = local_bindings(function, drawn_from=True)
    return cache[id(function)]


def _param_names(function: cst.FunctionDef) -> set[str]:
    return {p.name.value for p in all_params(function.params)}


def _on_stack(function: cst.FunctionDef, frame: _Frame | None) -> bool:
    while frame is not None:
        if frame.function is function:
            return True
        frame = frame.caller
    return False


def _module_functions(ctx: RuleContext, name: str) -> list[cst.FunctionDef]:
    """The file's top-level functions of that name (a script may define one
    again in a later section)."""
    return [
        f.node
        for f in ctx.functions
        if f.parent is None and not f.is_method and f.node.name.value == name
    ]


def _assignments(
    ctx: RuleContext,
) -> dict[str, list[tuple[cst.BaseExpression, cst.FunctionDef | None]]]:
    """Every `name = value` of the module (element by element for `a, b =
    x, y`; the whole value for a name unpacked from another, `train_ds,
    val_ds = load(...)`), with the function it is in."""
    return ctx.module_fact(_assignments, _assignments_of)


def _assignments_of(
    module: cst.Module,
) -> dict[str, list[tuple[cst.BaseExpression, cst.FunctionDef | None]]]:
    found: dict[str, list[tuple[cst.BaseExpression, cst.FunctionDef | None]]] = {}
    stack: list[tuple[cst.CSTNode, cst.FunctionDef | None]] = [(module, None)]
    while stack:
        node, function = stack.pop()
        if isinstance(node, cst.Assign):
            for target in node.targets:
                for name, value, _position in split_target(target.target, node.value):
                    if value is not None:
                        found.setdefault(name, []).append((value, function))
        inner = node if isinstance(node, cst.FunctionDef) else function
        stack.extend((child, inner) for child in child_nodes(node))
    return found
