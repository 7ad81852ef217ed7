"""Names that hold a dict, list or tuple of tensors, as a print sees them.

`logs = {"loss": loss, "acc": acc}` then `print(logs)` (or `print(logs["loss"])`,
or `for name, value in logs.items(): print(name, value)`) shows the tensors'
values eagerly; traced, it shows `Tensor(...)` once. The name is no tensor,
so the tensor facts alone do not say the print shows values. `tf.print`
prints such a structure as it is, with each tensor's value on every call.

A name counts when the function binds it exactly once, to a display whose
items show tensors or are Python values (and turn no tensor into Python
text or numbers), and afterwards only reads it: in a print, by an index
(`logs["loss"]`), through `.items()` / `.values()` / `.keys()` / `.get()`, by
iteration or `len`, or returned. Anything else (an item assigned, a method that changes
it, the name handed to a helper or rebound) may change what it holds before
the print, so it does not count. A loop variable bound only by iterating
over such a name's values counts too: the Python loop runs while tracing,
once per item, and each print it holds becomes a `tf.print` of that item.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from tfrewrite.facts.bindings import local_bindings, single_values
from tfrewrite.facts.context import RuleContext
from tfrewrite.facts.tensors import TensorFacts
from tfrewrite.facts.walk import iter_with_ancestors
from tfrewrite.rules.host_values.print_pieces import (
    PrintRefusal,
    check_printable,
    shows_values,
)
from tfrewrite.rules.host_values.stream_writes import written_stream

# Methods that read a dict without changing it.
READ_METHODS = frozenset({"items", "values", "keys", "get"})
# Calls a container may be handed to without being changed.
_READERS = frozenset({"print", "len"})


@dataclass(frozen=True)
class Containers:
    """Names that show tensor values without being tensors, each with
    whether it may show a tensor of more than one element."""

    many: dict[str, bool] = field(default_factory=dict)

    def __contains__(self, name: object) -> bool:
        return name in self.many


def tensor_containers(
    ctx: RuleContext, function: cst.FunctionDef, facts: TensorFacts
) -> Containers:
    """The containers of tensors `function` binds and only reads, and the
    loop variables bound only to their items."""
    displays: dict[str, cst.Dict | cst.List | cst.Tuple] = {}
    for name, value in single_values(function).items():
        if isinstance(value, (cst.Dict, cst.List, cst.Tuple)) and _shows_printable(
            ctx, facts, value
        ):
            displays[name] = value
    if not displays:
        return Containers()
    changed = _not_only_read(ctx, function, displays)
    kept = {name: value for name, value in displays.items() if name not in changed}
    many = {name: _may_show_many(facts, value) for name, value in kept.items()}
    many.update(_item_names(function, kept, many))
    return Containers(many)


def _items(display: cst.Dict | cst.List | cst.Tuple) -> list[cst.BaseExpression]:
    if isinstance(display, cst.Dict):
        return [e.value for e in display.elements if isinstance(e, cst.DictElement)]
    return [e.value for e in display.elements if isinstance(e, cst.Element)]


def _shows_printable(
    ctx: RuleContext, facts: TensorFacts, display: cst.Dict | cst.List | cst.Tuple
) -> bool:
    """Items that show tensors, none turning one into Python text or a number,
    and nothing unpacked into the display (`**other`, `*rest`)."""
    if isinstance(display, cst.Dict):
        if any(not isinstance(e, cst.DictElement) for e in display.elements):
            return False
    elif any(isinstance(e, cst.StarredElement) for e in display.elements):
        return False
    items = _items(display)
    if not any(shows_values(facts, item) for item in items):
        return False
    try:
        for item in items:
            check_printable(ctx, facts, item)
    except PrintRefusal:
        return False
    return True


def _may_show_many(facts: TensorFacts, display: cst.Dict | cst.List | cst.Tuple) -> bool:
    """Whether an item may be a tensor of more than one element (then
    `tf.print` needs `summarize=-1` to show every value, as `print` did)."""
    return any(
        shows_values(facts, item) and not facts.is_scalar_tensor(item) for item in _items(display)
    )


def _not_only_read(
    ctx: RuleContext, function: cst.FunctionDef, names: dict[str, cst.BaseExpression]
) -> set[str]:
    """The names of `names` that `function` (nested functions included) uses
    other than by reading them."""
    changed: set[str] = set()
    for node, ancestors in iter_with_ancestors(function.body):
        if not isinstance(node, cst.Name) or node.value not in names or node.value in changed:
            continue
        if not _read_here(ctx, node, ancestors, names[node.value]):
            changed.add(node.value)
    return changed


def _read_here(
    ctx: RuleContext,
    name: cst.Name,
    ancestors: tuple[cst.CSTNode, ...],
    value: cst.BaseExpression,
) -> bool:
    parent = ancestors[-1] if ancestors else None
    above = ancestors[-2] if len(ancestors) > 1 else None
    if (isinstance(parent, cst.Attribute) and parent.attr is name) or (
        isinstance(parent, cst.Arg) and parent.keyword is name
    ):
        return True  # `x.logs`, `f(logs=...)`: another name spelled the same
    if isinstance(parent, cst.AssignTarget) and isinstance(above, cst.Assign):
        return above.value is value  # the one binding
    if isinstance(parent, cst.Subscript) and parent.value is name:
        # `logs["loss"]` read, not assigned or deleted.
        return not isinstance(above, (cst.AssignTarget, cst.AugAssign, cst.Del))
    if isinstance(parent, cst.Attribute) and parent.value is name:
        return (
            parent.attr.value in READ_METHODS
            and isinstance(above, cst.Call)
            and above.func is parent
        )
    if isinstance(parent, cst.For) and parent.iter is name:
        return True
    if isinstance(parent, cst.Return):
        return True  # handed back when nothing after it runs
    if isinstance(parent, cst.Arg) and isinstance(above, cst.Call) and not parent.star:
        func = above.func
        return (
            (isinstance(func, cst.Name) and func.value in _READERS)
            or ctx.names.qualified_name(func) == "tensorflow.print"
            or written_stream(ctx, above) is not None
            or (isinstance(func, cst.Attribute) and func.attr.value == "format")
        )
    if isinstance(parent, cst.BinaryOperation):
        return isinstance(parent.operator, cst.Modulo) and parent.right is name  # `"%s" % logs`
    if isinstance(parent, cst.Element) and isinstance(above, cst.Tuple) and len(ancestors) > 2:
        # `"%s %s" % (logs, step)`; in another display it may be changed through that one.
        outer = ancestors[-3]
        return (
            isinstance(outer, cst.BinaryOperation)
            and isinstance(outer.operator, cst.Modulo)
            and outer.right is above
        )
    return isinstance(parent, cst.FormattedStringExpression)  # `f"{logs}"`


def _item_names(
    function: cst.FunctionDef,
    displays: dict[str, cst.Dict | cst.List | cst.Tuple],
    containers: dict[str, bool],
) -> dict[str, bool]:
    """Loop variables bound only by `for value in c` (a list or tuple `c`),
    `for value in c.values()` or `for key, value in c.items()` (a dict `c`):
    each holds an item of `c`."""
    bindings = local_bindings(function)
    found: dict[str, bool] = {}
    for node, _ in iter_with_ancestors(function.body):
        if not isinstance(node, cst.For):
            continue
        source, method = _iterated(node.iter)
        display = displays.get(source or "")
        if display is None:
            continue
        is_dict = isinstance(display, cst.Dict)
        target: cst.BaseExpression | None = None
        if method == "items" and is_dict:
            if (
                isinstance(node.target, cst.Tuple)
                and len(node.target.elements) == 2
                and isinstance(node.target.elements[1], cst.Element)
            ):
                target = node.target.elements[1].value
        elif (method == "values" and is_dict) or (method is None and not is_dict):
            target = node.target
        assert source is not None
        if isinstance(target, cst.Name) and len(bindings.get(target.value, [])) == 1:
            found[target.value] = containers[source]
    return found


def _iterated(node: cst.BaseExpression) -> tuple[str | None, str | None]:
    """(`c`, None) for `c`; (`c`, method) for `c.values()` / `c.items()`."""
    if isinstance(node, cst.Name):
        return node.value, None
    if (
        isinstance(node, cst.Call)
        and not node.args
        and isinstance(node.func, cst.Attribute)
        and isinstance(node.func.value, cst.Name)
        and node.func.attr.value in ("values", "items")
    ):
        return node.func.value.value, node.func.attr.value
    return None, None
