"""TFR306's reading of a loop over batches: which loops feed batches of
varying size, the lists and running sums they fill once per batch, and what
divides such a sum by the number of batches, whatever the spelling
(`total / n_batches`, `total /= (step + 1)`, `np.divide(total, len(loader))`).
The rule (`metric_averaging`) reports the averages these facts describe.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import libcst as cst

from tfrewrite.facts.bindings import bound_names, single_values
from tfrewrite.facts.context import RuleContext
from tfrewrite.facts.dataset_batches import batches_of_one_size, from_short_batcher
from tfrewrite.facts.name_use import mentioned_names
from tfrewrite.facts.names import dotted_name
from tfrewrite.facts.python_counters import counts_iterations, iteration_index
from tfrewrite.facts.traced_function import PENDING_STEP_CONTEXTS
from tfrewrite.facts.training import (
    feeds_short_final_batch,
    is_update_call,
    method_name,
    tape_name,
)
from tfrewrite.facts.walk import child_nodes, iter_nodes, iter_with_ancestors

_BATCHY = ("batch", "dataset", "loader")
# `ds`, `train_ds`, `ds_val`: a dataset, as a word of the name (not `folds`).
_DATASET_WORD = "ds"


def _says_batches(name: str) -> bool:
    """Whether a name says it holds batches or a dataset of them."""
    lowered = name.lower()
    return any(part in lowered for part in _BATCHY) or _DATASET_WORD in re.split(r"[_\d]+", lowered)


# Divisors that count batches: `n_batches`, `num_steps`, `len(loader)`, `step + 1`.
_BATCH_COUNTS = ("batch", "step", "iter", "loader", "dataset", "_ds")


def _is_batch_loop(
    ctx: RuleContext, loop: cst.For | cst.While, function: cst.FunctionDef | None
) -> bool:
    """A loop over batches of varying size: a batched dataset without
    `drop_remainder=True`, an iterable or loop variable whose name says
    batches (not a `range`: `for x_batch, y_batch in tqdm(data)`), or a body
    that trains or evaluates (a tape, a `*step` call). A `while` loop whose
    passes each take the next batch of a sequence (`loader.next_batch(n)`,
    `next(batches)`), up to its last one."""
    if isinstance(loop, cst.While):
        if function is not None and _called_by_a_step(ctx, function):
            return False
        return _takes_next_batch(loop)
    if batches_of_one_size(ctx, loop, function):
        return False  # every batch has the same size: the mean is exact
    if feeds_short_final_batch(ctx, loop, function) or from_short_batcher(ctx, loop, function):
        return True
    # A name that says batches, unless the loop counts (`range(n_batches)`
    # yields numbers: what the body does says whether it trains).
    counted = _counted(loop, function)
    if function is not None and _called_by_a_step(ctx, function):
        return False  # it runs on the step's one batch: a loop over its parts
    for node in () if counted else [*iter_nodes(loop.iter), *iter_nodes(loop.target)]:
        name = node.value if isinstance(node, cst.Name) else None
        if name and _says_batches(name):
            return True
    own = _own_nodes(loop.body)
    draws = _draws(loop, own) if counted else set()
    if counted and not draws:
        return False  # updates repeated on one batch (a critic's `range(n_critic)`)
    if "batcher" in draws and "runs out" not in draws:
        return False  # its count, not the data, ends the loop: every draw is whole
    for node in own:
        if isinstance(node, cst.With) and tape_name(ctx, node) is not None:
            # A tape whose gradients update variables trains on each pass; one
            # that only moves an input (Langevin sampling, an adversarial
            # image) runs its steps on one batch.
            if any(isinstance(n, cst.Call) and is_update_call(n) for n in own):
                return True
        if isinstance(node, cst.Call) and _calls_a_train_step(ctx, node):
            return True
    return False


def _calls_a_train_step(ctx: RuleContext, call: cst.Call) -> bool:
    """`train_step(x, y)`, `self.grad_desc(x, y)`: a call named for a step,
    or of a function of this module that a loop calls and that trains (its
    tape's gradients applied, `FunctionInfo.trains`)."""
    leaf = (dotted_name(call.func) or "").rpartition(".")[2]
    if leaf.lower().endswith("step"):
        return True
    for qualname in ctx.index.looped_functions:
        info = ctx.index.functions.get(qualname)
        if info is not None and qualname.rpartition(".")[2] == leaf and info.trains:
            return True
    return False


# Wrappers that iterate what they are given (a progress bar, a numbering).
_ITERATING_WRAPPERS = frozenset({"tqdm", "tqdm.tqdm", "tqdm.auto.tqdm", "enumerate"})


def _counted(loop: cst.For, function: cst.FunctionDef | None) -> bool:
    """Whether the loop goes over a count (`range(steps)`), also through a
    progress bar or a numbering (`tqdm(range(steps))`, `trange(steps)`),
    and through the name a `with` or an assignment binds it to (`with
    tqdm(range(steps)) as pbar: for step in pbar:`)."""
    iterable: cst.BaseExpression = loop.iter
    if isinstance(iterable, cst.Name) and function is not None:
        iterable = _bound_once(function, iterable.value) or iterable
    while (
        isinstance(iterable, cst.Call)
        and dotted_name(iterable.func) in _ITERATING_WRAPPERS
        and iterable.args
    ):
        iterable = iterable.args[0].value
    return isinstance(iterable, cst.Call) and (dotted_name(iterable.func) or "").rpartition(".")[
        2
    ] in ("range", "trange")


def _bound_once(function: cst.FunctionDef, name: str) -> cst.BaseExpression | None:
    """What `with value as name` or `name = value` binds `name` to in
    `function`, when that is its one binding there."""
    found = [
        item.item
        for node in iter_nodes(function.body, into_functions=False)
        if isinstance(node, cst.With)
        for item in node.items
        if item.asname is not None
        and isinstance(item.asname.name, cst.Name)
        and item.asname.name.value == name
    ]
    assigned = single_values(function).get(name)
    if assigned is not None:
        found.append(assigned)
    return found[0] if len(found) == 1 else None


def _called_by_a_step(ctx: RuleContext, function: cst.FunctionDef) -> bool:
    """Whether a train step calls `function` (the project facts' traced
    callers, or the step it runs in once a pending fix decorates it): it then
    runs on that step's one batch (`for g in graphs_batch:` goes over the
    batch's graphs). A step's own loops are not asked about here: a step
    may draw several batches itself (`next(batches)`)."""
    scope = next((f for f in ctx.functions if f.node is function), None)
    traced = scope.runs_traced if scope is not None else None
    if traced is None:
        return False
    if any(c.startswith(PENDING_STEP_CONTEXTS[0]) for c in traced.contexts):
        return True
    callers = (ctx.index.functions.get(caller) for caller in traced.traced_callers)
    return any(info is not None and info.trains for info in callers)


def _takes_next_batch(loop: cst.While) -> bool:
    """Whether each pass of a `while` loop takes the next element of a
    sequence of batches: a call named for it in its own body
    (`dataset.next_batch(32)`, `next(batches)`), with the batch bound to a
    name that says so. Random draws (`buffer.sample(64)`) give full batches."""
    for node in _own_nodes(loop.body):
        if not (isinstance(node, cst.Assign) and isinstance(node.value, cst.Call)):
            continue
        called = (dotted_name(node.value.func) or "").rpartition(".")[2].lower()
        if "next" not in called or _one_by_one(node.value):
            continue
        bound = [
            n.value for t in node.targets for n in iter_nodes(t.target) if isinstance(n, cst.Name)
        ]
        if any(_says_batches(name) for name in bound) or "batch" in called:
            return True
    return False


def _one_by_one(call: cst.Call) -> bool:
    """A draw of batches of one (`next_batch(batch_size=1)`, `next_batch(1)`):
    no batch is shorter than another."""
    first = next((a for a in call.args if a.keyword is None), None)
    size = next((a for a in call.args if a.keyword and "size" in a.keyword.value), first)
    return size is not None and isinstance(size.value, cst.Integer) and size.value.value == "1"


# Calls that hand out data: an iterator's next element, a batch drawn or
# sampled (`buffer.sample(64)`, `loader.get_batch()`), a file read.
_DRAWING_WORDS = ("next", "batch", "sample", "load", "read")


def _draws(loop: cst.For, own: list[cst.CSTNode]) -> set[str]:
    """How each pass of a counted loop takes new data: "batcher", from an
    object that hands out batches of the size asked (`batcher.next_batch()`,
    `buffer.sample(64)`), which does not run out within the count (it
    refills, or samples); "runs out", by the next element of an iterator
    (`next(it)`) or a slice by the loop's counter (`x[i * size:(i + 1) *
    size]`), whose last may be short; "other", another call that hands out
    data (`load_batch(i)`)."""
    counters = set(mentioned_names(loop.target))
    kinds: set[str] = set()
    for node in own:
        if isinstance(node, cst.Call):
            called = (dotted_name(node.func) or "").lower()
            leaf = called.rpartition(".")[2]
            if called == "next":
                kinds.add("runs out")
            elif isinstance(node.func, cst.Attribute) and ("batch" in leaf or "sample" in leaf):
                kinds.add("batcher")
            elif any(word in leaf for word in _DRAWING_WORDS):
                kinds.add("other")
        elif isinstance(node, cst.Subscript) and counters:
            if not counters.isdisjoint(mentioned_names(node.slice[0].slice)):
                kinds.add("runs out")
    return kinds


def _own_nodes(body: cst.CSTNode) -> list[cst.CSTNode]:
    """The nodes of a loop's body outside the loops nested in it: a tape in
    an inner loop (over batches) says nothing of the outer one (over epochs)."""
    found: list[cst.CSTNode] = []
    stack: list[cst.CSTNode] = [body]
    while stack:
        node = stack.pop()
        found.append(node)
        if node is not body and isinstance(node, (cst.For, cst.While)):
            continue
        stack.extend(child_nodes(node))
    return found


@dataclass
class PerBatch:
    """A list filled once per batch: where it starts empty, where it grows."""

    loop: cst.For | cst.While
    appends: list[cst.SimpleStatementLine]
    start: cst.SimpleStatementLine | None = None  # `name = []` in the same scope


@dataclass
class Accumulated:
    """A running sum of per-batch values and the batch counters beside it:
    `n_batches += 1`, or the loop's own index (`for i, x in enumerate(...)`,
    counted as `i + 1`)."""

    loop: cst.For | cst.While
    counters: set[str]
    index: str | None = None


def _added_to(node: cst.CSTNode) -> tuple[str, cst.BaseExpression] | None:
    """(name, value) for a statement adding `value` to a name: `total +=
    loss`, or `total = total + loss` (either way round)."""
    if isinstance(node, cst.AugAssign) and isinstance(node.operator, cst.AddAssign):
        if isinstance(node.target, cst.Name):
            return node.target.value, node.value
        return None
    if not (isinstance(node, cst.Assign) and len(node.targets) == 1):
        return None
    target, value = node.targets[0].target, node.value
    if not (
        isinstance(target, cst.Name)
        and isinstance(value, cst.BinaryOperation)
        and isinstance(value.operator, cst.Add)
    ):
        return None
    for own, other in ((value.left, value.right), (value.right, value.left)):
        if isinstance(own, cst.Name) and own.value == target.value:
            return target.value, other
    return None


def _statement_of(ancestors: tuple[cst.CSTNode, ...]) -> cst.SimpleStatementLine | None:
    for parent in reversed(ancestors):
        if isinstance(parent, cst.SimpleStatementLine):
            return parent
    return None


def per_batch_values(
    ctx: RuleContext, scope: cst.CSTNode, function: cst.FunctionDef | None
) -> tuple[dict[str, PerBatch], dict[str, Accumulated]]:
    """Lists appended to and sums accumulated in loops over batches."""
    lists: dict[str, PerBatch] = {}
    sums: dict[str, Accumulated] = {}
    for loop in iter_nodes(scope, into_functions=False):
        if not isinstance(loop, (cst.For, cst.While)) or not _is_batch_loop(ctx, loop, function):
            continue
        counters: set[str] = set()
        accumulated: list[str] = []
        # Per loop nested in this one (by id): the counters and sums it holds.
        # A sum divided by a count of the nested loop's own passes (`num +=
        # 1` beside `total += ...` over one batch's images) is no per-batch sum.
        nested_counters: dict[int, set[str]] = {}
        nested_sums: dict[str, int] = {}
        for node, ancestors in iter_with_ancestors(loop.body):
            if isinstance(node, (cst.FunctionDef, cst.Lambda)):
                continue
            if isinstance(node, cst.Call) and method_name(node) == "append":
                owner = _list_owner(node.func.value)  # type: ignore[attr-defined]
                line = _statement_of(ancestors)
                if owner and line is not None:
                    # Loops come outermost first: the innermost batch loop wins.
                    found = lists.setdefault(owner, PerBatch(loop, []))
                    found.loop = loop
                    if not any(a is line for a in found.appends):
                        found.appends.append(line)
            added = _added_to(node)
            if added is not None:
                name, value = added
                inner = next(
                    (a for a in reversed(ancestors) if isinstance(a, (cst.For, cst.While))), None
                )
                if _is_one(value):
                    counters.add(name)
                    if inner is not None:
                        nested_counters.setdefault(id(inner), set()).add(name)
                elif not weighted(value):
                    accumulated.append(name)
                    if inner is not None:
                        nested_sums[name] = id(inner)
        index = iteration_index(loop, ctx) if isinstance(loop, cst.For) else None
        for name in accumulated:
            own = nested_counters.get(nested_sums.get(name, -1), set())
            sums[name] = Accumulated(loop, counters - own, index)
    for node in iter_nodes(scope, into_functions=False):
        if isinstance(node, cst.SimpleStatementLine) and len(node.body) == 1:
            for name in _empty_lists_bound(node.body[0]):
                if name in lists:
                    lists[name].start = node
    # A list made afresh inside the batch loop (`reg_log = []` in each pass,
    # filled over a model's iterations on that batch) holds the values of
    # one batch, not one value per batch; so does a dict of lists bound
    # there (`logs = {}` in each pass).
    for name, found in list(lists.items()):
        start = found.start
        if start is not None and any(n is start for n in iter_nodes(found.loop.body)):
            del lists[name]
        elif name.endswith(HELD_LISTS) and name[: -len(HELD_LISTS)] in bound_names(found.loop.body):
            del lists[name]
    return lists, sums


def running_means(
    ctx: RuleContext, scope: cst.CSTNode, function: cst.FunctionDef | None
) -> list[tuple[cst.BaseExpression, str]]:
    """Means kept up to date pass by pass in a loop over batches:
    `avg = (avg * i + loss) / (i + 1)`, `i` the loop's index. Each pass
    weighs the new per-batch value as one of `i + 1`: the plain mean of
    the per-batch values, whatever size each batch had. (The division,
    and the name it keeps the mean in.)"""
    found: list[tuple[cst.BaseExpression, str]] = []
    for loop in iter_nodes(scope, into_functions=False):
        if not isinstance(loop, cst.For):
            continue
        index = iteration_index(loop, ctx)
        if index is None or not _is_batch_loop(ctx, loop, function):
            continue
        for node in _own_nodes(loop.body):
            if not (isinstance(node, cst.Assign) and len(node.targets) == 1):
                continue
            target = node.targets[0].target
            if isinstance(target, cst.Name) and _updates_mean(node.value, target.value, index):
                found.append((node.value, target.value))
    return found


def _updates_mean(value: cst.BaseExpression, name: str, index: str) -> bool:
    """`(name * index + v) / (index + 1)` (the product either way round)."""
    if not (isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Divide)):
        return False
    if not counts_iterations(value.right, index) or isinstance(value.right, cst.Name):
        return False
    total = value.left
    if not (isinstance(total, cst.BinaryOperation) and isinstance(total.operator, cst.Add)):
        return False
    return any(
        isinstance(part, cst.BinaryOperation)
        and isinstance(part.operator, cst.Multiply)
        and {dotted_name(part.left), dotted_name(part.right)} == {name, index}
        for part in (total.left, total.right)
    )


# How `per_batch_values` names the lists a dict holds, filled once per batch
# each (`results[key].append(value)`): the dict's name and this.
HELD_LISTS = "[]"


def _list_owner(appended: cst.BaseExpression) -> str | None:
    """What `.append` grows: a named list (`losses`, `self.losses`), or one
    of the lists a named dict holds (`results[key]`,
    `results.setdefault(key, [])`: `results[]`)."""
    owner = dotted_name(appended)
    if owner is not None:
        return owner
    if isinstance(appended, cst.Subscript):
        held = dotted_name(appended.value)
    elif isinstance(appended, cst.Call) and method_name(appended) == "setdefault":
        held = dotted_name(appended.func.value)  # type: ignore[attr-defined]
    else:
        return None
    return held + HELD_LISTS if held else None


def held_list_elements(scope: cst.CSTNode) -> dict[str, str]:
    """Names that iterate over the lists a dict holds, in a comprehension or
    a loop: `item` in `{k: np.mean(item) for k, item in results.items()}`
    or `for v in results.values()` -> `results[]`, as `per_batch_values`
    names those lists."""
    found: dict[str, str] = {}
    for node in iter_nodes(scope, into_functions=False):
        if isinstance(node, cst.CompFor):
            target, iterated = node.target, node.iter
        elif isinstance(node, cst.For):
            target, iterated = node.target, node.iter
        else:
            continue
        if not isinstance(iterated, cst.Call) or iterated.args:
            continue
        view = method_name(iterated)
        held = dotted_name(iterated.func.value) if view in ("items", "values") else None  # type: ignore[attr-defined]
        if not held:
            continue
        if view == "values" and isinstance(target, cst.Name):
            found[target.value] = held + HELD_LISTS
        elif view == "items" and isinstance(target, cst.Tuple) and len(target.elements) == 2:
            value = target.elements[1].value
            if isinstance(value, cst.Name):
                found[value.value] = held + HELD_LISTS
    return found


def _is_one(value: cst.BaseExpression) -> bool:
    """The literal one a counter adds per pass: `n += 1` or `n += 1.0`."""
    if isinstance(value, (cst.Integer, cst.Float)):
        return value.evaluated_value == 1
    return False


def over_batches(candidate: cst.BaseExpression) -> bool:
    """A list comprehension or generator over something named for batches
    (`[f(b) for b in test_batches]`, `(acc(y, m(x)) for x, y in loader)`),
    also wrapped in `list(...)` or `tuple(...)`."""
    if (
        isinstance(candidate, cst.Call)
        and dotted_name(candidate.func) in ("list", "tuple")
        and len(candidate.args) == 1
    ):
        candidate = candidate.args[0].value
    if not isinstance(candidate, (cst.ListComp, cst.GeneratorExp)):
        return False
    if _is_size(candidate.elt):
        return False  # `[len(t) for t in trajectories]`: a mean size, every item counted once
    iterated = candidate.for_in.iter
    if isinstance(iterated, cst.Call) and dotted_name(iterated.func) == "range":
        # It yields numbers (`range(speakers_per_batch)`): over batches only
        # when each element runs a step, as for a counted loop.
        return any(
            isinstance(n, cst.Call) and (dotted_name(n.func) or "").lower().endswith("step")
            for n in iter_nodes(candidate.elt)
        )
    names = [n.lower() for n in mentioned_names(iterated)]
    return any(_says_batches(name) for name in names)


def _is_size(value: cst.BaseExpression) -> bool:
    """`len(x)`, `x.shape[0]`: how many items an element holds, not a value
    computed per batch."""
    if isinstance(value, cst.Call):
        return dotted_name(value.func) == "len"
    return (
        isinstance(value, cst.Subscript)
        and isinstance(value.value, cst.Attribute)
        and value.value.attr.value == "shape"
    )


def comprehension_lists(scope: cst.CSTNode) -> set[str]:
    """Names bound to a comprehension over batches: `accs = [acc(y, m(x))
    for x, y in loader]`, averaged on a later line."""
    names: set[str] = set()
    for node in iter_nodes(scope, into_functions=False):
        if isinstance(node, cst.Assign) and over_batches(node.value):
            names.update(t.target.value for t in node.targets if isinstance(t.target, cst.Name))
    return names


def _empty_lists_bound(small: cst.BaseSmallStatement) -> list[str]:
    """Names `small` binds to a new empty list: `a = []`, `a, b = [], []`."""
    if not isinstance(small, cst.Assign) or len(small.targets) != 1:
        return []
    target, value = small.targets[0].target, small.value
    pairs: list[tuple[cst.BaseExpression, cst.BaseExpression]] = [(target, value)]
    if isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List)):
        if len(target.elements) != len(value.elements):
            return []
        pairs = [(t.value, v.value) for t, v in zip(target.elements, value.elements, strict=True)]
    return [
        t.value
        for t, v in pairs
        if isinstance(t, cst.Name) and isinstance(v, cst.List) and not v.elements
    ]


def _divided_by_batch_size(expr: cst.BaseExpression) -> bool:
    """A count of examples divided by a batch size, rounded (`n // batch_size`,
    `math.ceil(len(x) / BATCH_SIZE)`, `int(n / batch)`): the number of batches."""
    if isinstance(expr, cst.Call) and dotted_name(expr.func) in _ROUNDINGS and expr.args:
        expr = expr.args[0].value
        division: type[cst.BaseBinaryOp] = cst.Divide
    else:
        division = cst.FloorDivide
    return (
        isinstance(expr, cst.BinaryOperation)
        and isinstance(expr.operator, division)
        and any("batch" in name.lower() for name in mentioned_names(expr.right))
    )


_ROUNDINGS = frozenset(
    {"math.ceil", "np.ceil", "numpy.ceil", "ceil", "int", "round", "math.floor", "np.floor"}
)


def weighted(value: cst.BaseExpression) -> bool:
    """`acc * len(y)`, `loss * x.shape[0]`, `n * batch_size`: already weighted
    by the batch size (or a count of examples; `tf.shape(x)` too). A size
    handed to the function that computes the value (`test_batch(x, y,
    y.shape)`) weighs nothing: only the arithmetic around the value, and
    the conversions and library functions it goes through, are read."""
    if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Multiply):
        return True
    return any(
        (isinstance(n, cst.Call) and dotted_name(n.func) == "len")
        or (isinstance(n, cst.Attribute) and n.attr.value == "shape")
        for n in _arithmetic(value)
    )


# Calls whose arguments are part of the value's arithmetic: conversions,
# and NumPy's and TensorFlow's functions (`np.multiply(acc, len(y))`).
_CONVERSIONS = frozenset({"float", "int", "round", "abs", "len"})
_LIBRARIES = ("np.", "numpy.", "tf.", "tensorflow.", "math.")


def _arithmetic(value: cst.BaseExpression) -> list[cst.CSTNode]:
    """The nodes of `value` outside the arguments of calls of other
    functions (a project's `test_batch(x, y, y.shape)`)."""
    found: list[cst.CSTNode] = []
    stack: list[cst.CSTNode] = [value]
    while stack:
        node = stack.pop()
        found.append(node)
        if isinstance(node, cst.Call):
            name = dotted_name(node.func) or ""
            stack.append(node.func)
            if name in _CONVERSIONS or name.startswith(_LIBRARIES):
                stack += [a.value for a in node.args]
            continue
        stack += child_nodes(node)
    return found


def weighted_sum(summed: cst.BaseExpression, divisor: cst.BaseExpression) -> bool:
    """`sum(v * n for v, n in zip(accs, batch_sizes)) / sum(batch_sizes)`:
    each value weighted, divided by the sum of the weights (what this rule's
    fix writes): a weighted average, whatever the names say."""
    return (
        isinstance(summed, (cst.GeneratorExp, cst.ListComp))
        and weighted(summed.elt)
        and isinstance(divisor, cst.Call)
        and dotted_name(divisor.func) == "sum"
    )


def _counts_passes(expr: cst.BaseExpression, accumulated: Accumulated) -> bool:
    """A divisor the loop's passes give: a counter the loop adds 1 to, the
    loop's index (`i + 1`), or examples over batch size (`len(x_train) //
    BATCH_SIZE`, `int(n / batch)`)."""
    if isinstance(expr, cst.Name) and expr.value in accumulated.counters:
        return True
    if accumulated.index is not None and counts_iterations(expr, accumulated.index):
        return True
    return _divided_by_batch_size(expr)


def number_of_batches(expr: cst.BaseExpression, accumulated: Accumulated) -> bool:
    """A divisor that is the number of batches itself, not a batch's size:
    one the loop's passes give (`_counts_passes`), or a name for a count of
    batches or steps (`n_batches`, `steps_per_epoch`). What each per-batch
    value is divided by before it is summed (`total += loss / n_batches`),
    where `loss / batch_size` is a mean of its own."""
    return _counts_passes(expr, accumulated) or (
        isinstance(expr, cst.Name)
        and any(part in expr.value.lower() for part in ("batches", "steps", "num_batch", "n_batch"))
    )


def converted_count(expr: cst.BaseExpression) -> cst.BaseExpression:
    """A count a divisor converts to a number (`float(n_mb)`, `int(steps)`):
    the count itself; any other divisor as it is."""
    if (
        isinstance(expr, cst.Call)
        and dotted_name(expr.func) in ("float", "int")
        and len(expr.args) == 1
        and isinstance(expr.args[0].value, cst.Name)
    ):
        return expr.args[0].value
    return expr


def counts_batches(expr: cst.BaseExpression, accumulated: Accumulated) -> bool:
    """A divisor that counts batches rather than examples: a counter the
    loop adds 1 to, the loop's index (`i + 1`), or a name that says so."""
    if _counts_passes(expr, accumulated):
        return True
    names = [n.lower() for n in mentioned_names(expr)]
    if any(weighted(n) for n in iter_nodes(expr) if isinstance(n, cst.BaseExpression)):
        # `len(loader)` counts batches; `len(x)` or `x.shape[0]` examples.
        return isinstance(expr, cst.Call) and any(part in names[-1] for part in _BATCH_COUNTS)
    return any(part in name for name in names for part in _BATCH_COUNTS)


# Functions that divide their first argument by their second.
_DIVISIONS = frozenset(
    {
        "numpy.divide",
        "numpy.true_divide",
        "tensorflow.divide",
        "tensorflow.truediv",
        "tensorflow.math.divide",
        "tensorflow.math.truediv",
        "tensorflow.math.divide_no_nan",
        "operator.truediv",
        "operator.itruediv",
    }
)


def divided_name(ctx: RuleContext, node: cst.CSTNode) -> tuple[str, cst.BaseExpression] | None:
    """A name divided, and by what, whatever the spelling: `total / n`,
    `total /= n` (where the sum becomes the mean: after the loop, in its
    `else`), `np.divide(total, n)`, `tf.math.divide(total, n)`."""
    operands = division_operands(ctx, node)
    if operands is None or not isinstance(operands[0], cst.Name):
        return None
    return operands[0].value, operands[1]


def division_operands(
    ctx: RuleContext, node: cst.CSTNode
) -> tuple[cst.BaseExpression, cst.BaseExpression] | None:
    """(dividend, divisor) of a division, whatever the spelling (`a / b`, `a
    /= b`, `np.divide(a, b)`, `tf.math.divide_no_nan(a, b)`); None for
    anything else."""
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Divide):
        return node.left, node.right
    if isinstance(node, cst.AugAssign) and isinstance(node.operator, cst.DivideAssign):
        return node.target, node.value
    if isinstance(node, cst.Call) and ctx.names.qualified_name(node.func) in _DIVISIONS:
        if len(node.args) != 2 or any(a.keyword is not None or a.star for a in node.args):
            return None
        return node.args[0].value, node.args[1].value
    return None
