"""A tensor's static shape read in code that runs traced: `x.shape`,
`x.shape[0]`.

`x.shape` is what the trace knows of the shape, with `None` for a dimension
it does not know. Eagerly, and in a trace of concrete inputs, it is
complete; under `reduce_retracing=True` a batch dimension that changed
between calls (a short last batch) is traced as `None`, and a shape built
from it (`tf.random.uniform([x.shape[0], 1])`, `tf.reshape(g, [g.shape[0],
-1])`) raises. TFR107 rewrites such shapes to `tf.shape(x)`; the train-step
rules keep `reduce_retracing` off a step that reads them, itself or in a
function it calls.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

import libcst as cst

from tfrewrite.facts.bindings import iter_assignments, local_bindings, split_target
from tfrewrite.facts.context import FunctionScope, RuleContext
from tfrewrite.facts.names import dotted_name
from tfrewrite.facts.state import in_place_writes
from tfrewrite.facts.vocabulary import SHAPE_ARGUMENTS
from tfrewrite.facts.walk import iter_nodes, iter_with_ancestors

# The index `static_dimension_names` gives a name that holds a whole static
# shape (`dims = x.get_shape().as_list()`), whose items are its dimensions.
WHOLE_SHAPE = "*"


def static_shape_of(node: cst.BaseExpression) -> cst.BaseExpression | None:
    """`x` for `x.shape`, `x.get_shape()` (the same `TensorShape`), or
    either's `.as_list()` (its dimensions as a list), also converted one by
    one (`map(int, ...)`) or copied (`list(...)`, `tuple(...)`)."""
    if isinstance(node, cst.Attribute) and node.attr.value == "shape" and not node.lpar:
        return node.value
    if (
        isinstance(node, cst.Call)
        and not node.args
        and not node.lpar
        and isinstance(node.func, cst.Attribute)
    ):
        if node.func.attr.value == "get_shape":
            return node.func.value
        if node.func.attr.value == "as_list":
            return static_shape_of(node.func.value)
    # Its dimensions converted one by one, or copied into a list or tuple:
    # `map(int, x.shape.as_list())`, `list(x.shape)` (an unknown one is
    # `None` still, or `int(None)` raises).
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and not node.lpar:
        args = [a.value for a in node.args if a.keyword is None and not a.star]
        if node.func.value in ("list", "tuple") and len(args) == 1:
            return static_shape_of(args[0])
        if (
            node.func.value == "map"
            and len(args) == 2
            and isinstance(args[0], cst.Name)
            and args[0].value in ("int", "float")
        ):
            return static_shape_of(args[1])
    return None


def static_dimension_of(
    node: cst.BaseExpression, shapes: Mapping[str, cst.BaseExpression] | None = None
) -> tuple[cst.BaseExpression, str] | None:
    """(`x`, "0") for `x.shape[0]` (an integer index, possibly negative), or
    for `dims[0]` where `shapes` says the name `dims` holds `x`'s static
    shape (`static_shape_names`)."""
    if not (isinstance(node, cst.Subscript) and len(node.slice) == 1):
        return None
    owner = static_shape_of(node.value)
    if owner is None and shapes and isinstance(node.value, cst.Name):
        owner = shapes.get(node.value.value)
    element = node.slice[0].slice
    if owner is None or not isinstance(element, cst.Index):
        return None
    index = element.value
    if isinstance(index, cst.Integer):
        return owner, index.value
    if (
        isinstance(index, cst.UnaryOperation)
        and isinstance(index.operator, cst.Minus)
        and isinstance(index.expression, cst.Integer)
    ):
        return owner, "-" + index.expression.value
    return None


def converted_dimension_names(function: cst.FunctionDef) -> set[str]:
    """Local names bound by unpacking a static shape converted dimension by
    dimension (`b, h, w, c = map(int, x.shape.as_list())`): `int(None)`
    raises there, before any use, when a dimension is unknown."""
    found: set[str] = set()
    for target, value, augmented in iter_assignments(function.body):
        if augmented or not isinstance(target, (cst.Tuple, cst.List)):
            continue
        if (
            isinstance(value, cst.Call)
            and isinstance(value.func, cst.Name)
            and value.func.value == "map"
            and static_shape_of(value) is not None
        ):
            found.update(name for name, _, _ in split_target(target, None))
    return found


def static_dimension_names(function: cst.FunctionDef) -> dict[str, tuple[cst.BaseExpression, str]]:
    """Local names of `function` bound once, to a dimension of a tensor's
    static shape, with that tensor and the dimension's index: `b =
    x.shape[0]`, `b, n = x.shape[0], 4`, `b, h, w = x.shape` give `{"b":
    (x, "0")}` (and `h`, `w` with "1", "2" in the last). Such a name holds
    `None` wherever the dimension does: a shape built from it fails the same
    way. A name bound to the whole static shape (`dims =
    x.get_shape().as_list()`) has the index `WHOLE_SHAPE`, and its items
    are dimensions too (`b = dims[0]`, `dims[0]` where it is used)."""
    counts = {name: len(values) for name, values in local_bindings(function).items()}
    assignments = [
        (target, value)
        for target, value, augmented in iter_assignments(function.body)
        if not augmented and value is not None
    ]
    found: dict[str, tuple[cst.BaseExpression, str]] = {}
    changed = in_place_writes(function.body)  # `dims[0] = -1`: no longer the dimension
    for target, value in assignments:  # whole shapes first: their items are read below
        if isinstance(target, cst.Name) and counts.get(target.value) == 1:
            owner = static_shape_of(value)
            if owner is not None and target.value not in changed:
                found[target.value] = (owner, WHOLE_SHAPE)
    shapes = static_shape_names(found)
    # Every binding of a name that binds a dimension: a name bound in two
    # branches (`b, _, h, w = x.shape` or `b, h, w, _ = x.shape`) holds one
    # when each binding gives the same dimension of the same tensor.
    dimensions: dict[str, list[tuple[cst.BaseExpression, str]]] = {}
    for target, value in assignments:
        for name, element, index in split_target(target, value):
            if element is None or name in found:
                continue
            if index is None:
                dimension = static_dimension_of(element, shapes)
                if dimension is not None:
                    dimensions.setdefault(name, []).append(dimension)
            elif not any(isinstance(e, cst.StarredElement) for e in _elements(target)):
                owner = static_shape_of(element)
                if owner is None and isinstance(element, cst.Name):
                    owner = shapes.get(element.value)
                if owner is not None:
                    dimensions.setdefault(name, []).append((owner, str(index)))
    for name, bound in dimensions.items():
        same = {(_code(owner), index) for owner, index in bound}
        if len(bound) == counts.get(name) and len(same) == 1:
            found[name] = bound[0]
    return found


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def static_shape_names(
    dimensions: Mapping[str, tuple[cst.BaseExpression, str]],
) -> dict[str, cst.BaseExpression]:
    """The names of `dimensions` (`static_dimension_names`) that hold a
    whole static shape, with their tensor."""
    return {name: owner for name, (owner, index) in dimensions.items() if index == WHOLE_SHAPE}


def static_batch_names(
    dimensions: dict[str, tuple[cst.BaseExpression, str]],
) -> dict[str, cst.BaseExpression]:
    """The names of `dimensions` (`static_dimension_names`) that hold the
    batch dimension, dimension 0, with their tensor."""
    return {name: owner for name, (owner, index) in dimensions.items() if index == "0"}


def _elements(target: cst.BaseExpression) -> list[cst.BaseElement]:
    return list(target.elements) if isinstance(target, (cst.Tuple, cst.List)) else []


def batch_dimension_reads(
    node: cst.BaseExpression,
    names: Mapping[str, cst.BaseExpression],
    shapes: Mapping[str, cst.BaseExpression] | None = None,
) -> list[tuple[cst.BaseExpression, cst.BaseExpression]]:
    """(read, tensor) for each static batch dimension `node` computes with:
    `x.shape[0]` itself, a name of `names` (`static_batch_names`), or item 0
    of a name of `shapes` (`static_shape_names`), also inside arithmetic
    (`b * n`). Calls and other subscripts are not looked into: what they
    make of the dimension is theirs."""
    dimension = static_dimension_of(node, shapes)
    if dimension is not None:
        return [(node, dimension[0])] if dimension[1] == "0" else []
    if isinstance(node, cst.Name):
        owner = names.get(node.value)
        return [(node, owner)] if owner is not None else []
    if isinstance(node, cst.BinaryOperation):
        return batch_dimension_reads(node.left, names, shapes) + batch_dimension_reads(
            node.right, names, shapes
        )
    if isinstance(node, cst.UnaryOperation):
        return batch_dimension_reads(node.expression, names, shapes)
    return []


def mentions_static_shape(node: cst.CSTNode) -> cst.BaseExpression | None:
    """The first static shape inside `node` (`x.shape` in a slice,
    `list(x.shape[:-1]) + ...`, or `x.get_shape().as_list()`): its tensor is
    `static_shape_of` it."""
    for inner, ancestors in iter_with_ancestors(node):
        if isinstance(inner, (cst.Attribute, cst.Call)) and static_shape_of(inner) is not None:
            if not _reads_rank(inner, ancestors):
                return inner  # type: ignore[no-any-return]
    return None


def _reads_rank(shape: cst.BaseExpression, ancestors: tuple[cst.CSTNode, ...]) -> bool:
    """`x.shape.rank`, `x.shape.ndims`, `len(x.shape)`: the number of
    dimensions, which a trace knows whenever it knows any of them."""
    parent = ancestors[-1] if ancestors else None
    if isinstance(parent, cst.Attribute) and parent.value is shape:
        return parent.attr.value in ("rank", "ndims")
    if isinstance(parent, cst.Arg) and len(ancestors) > 1:
        call = ancestors[-2]
        return (
            isinstance(call, cst.Call)
            and isinstance(call.func, cst.Name)
            and call.func.value == "len"
            and len(call.args) == 1
        )
    return False


def _reads_batch_dimension(ctx: RuleContext, node: cst.CSTNode) -> bool:
    """`x.shape[0]`, a slice of `x.shape` from its start (`x.shape[:-1]`), or
    the whole `x.shape` given as the shape of an op: what holds `None` once
    the batch dimension is relaxed."""
    if isinstance(node, cst.Subscript) and static_shape_of(node.value) is not None:
        found = static_dimension_of(node)
        if found is not None:
            return found[1] == "0"
        element = node.slice[0].slice if len(node.slice) == 1 else None
        return isinstance(element, cst.Slice) and element.lower is None
    if isinstance(node, cst.Call):
        where = SHAPE_ARGUMENTS.get(ctx.names.qualified_name(node.func) or "")
        if where is None:
            return False
        position, keyword = where
        positional = [a for a in node.args if a.keyword is None and not a.star]
        shape = next((a for a in node.args if a.keyword and a.keyword.value == keyword), None)
        if shape is None and len(positional) > position:
            shape = positional[position]
        return shape is not None and static_shape_of(shape.value) is not None
    return False


def _callees(ctx: RuleContext, root: cst.CSTNode, owner: str | None) -> Iterator[FunctionScope]:
    """Functions of the file `root` calls by name: module functions
    (`noise_like(x)`), in a method the class's own (`self.flatten(g)`), and
    the methods of an object the module builds once (`loss_fn = RowLoss()`:
    `loss_fn(...)` runs `RowLoss.__call__`, `loss_fn.reduce(...)` its
    `reduce`)."""
    for node in iter_nodes(root, into_functions=False):
        if not isinstance(node, cst.Call):
            continue
        name = dotted_name(node.func)
        if name is None:
            continue
        head, _, method = name.partition(".")
        instance_class = ctx.receiver_class(head, None) if head != "self" else None
        if head == "self" and owner is not None and method and "." not in method:
            qualname = f"{owner}.{method}"
        elif instance_class is not None and "." not in method:
            qualname = f"{instance_class}.{method or '__call__'}"
        elif "." not in name:
            qualname = name
        else:
            continue
        function = next((f for f in ctx.functions if f.qualname == qualname), None)
        if function is not None:
            yield function


def batch_dimension_read(
    ctx: RuleContext, roots: Sequence[cst.CSTNode], owner: str | None
) -> cst.CSTNode | None:
    """The first static read of the batch dimension (`_reads_batch_dimension`)
    in `roots` or in a function of the file they call, directly or not;
    None when there is none. `owner`: the class whose `self` `roots` see."""
    seen: set[str] = set()
    pending = list(roots)
    while pending:
        root = pending.pop(0)
        for node in iter_nodes(root, into_functions=False):
            if _reads_batch_dimension(ctx, node):
                return node
        for function in _callees(ctx, root, owner):
            if function.qualname not in seen:
                seen.add(function.qualname)
                pending.append(function.node.body)
    return None


# Ops that make a tensor of the shape they are given (`tf.reshape(x, shape)`
# with the shape second; the others first): the position of the shape.
_SHAPING_OPS = {
    "tensorflow.reshape": 1,
    "tensorflow.zeros": 0,
    "tensorflow.ones": 0,
    "tensorflow.fill": 0,
    "tensorflow.random.normal": 0,
    "tensorflow.random.uniform": 0,
}


def set_leading_dimension(
    ctx: RuleContext, function: cst.FunctionDef, owner: str, before: cst.CSTNode | None
) -> cst.BaseExpression | None:
    """What the binding of `owner` reaching `before` (a statement line of
    `function`'s own body, in straight-line code) sets its first dimension
    to, when it makes the tensor to a given shape (`points =
    tf.reshape(points, (n_points, 3))`): the shape's first entry. The trace
    knows that dimension when the entry is a Python value. None otherwise."""
    body = getattr(function.body, "body", ())
    found: cst.BaseExpression | None = None
    for statement in body:
        if statement is before:
            return found
        if not isinstance(statement, cst.SimpleStatementLine):
            if any(
                isinstance(t, cst.Name) and t.value == owner
                for n in iter_nodes(statement)
                if isinstance(n, (cst.AssignTarget, cst.For))
                for t in iter_nodes(n.target)
            ):
                found = None  # bound in a branch or a loop: not straight-line
            continue
        for small in statement.body:
            if not isinstance(small, cst.Assign) or len(small.targets) != 1:
                continue
            target = small.targets[0].target
            if not (isinstance(target, cst.Name) and target.value == owner):
                continue
            found = _shape_entry(ctx, small.value)
    return None


def _shape_entry(ctx: RuleContext, value: cst.BaseExpression) -> cst.BaseExpression | None:
    """The first entry of the literal shape a shaping op is given."""
    if not isinstance(value, cst.Call):
        return None
    position = _SHAPING_OPS.get(ctx.names.qualified_name(value.func) or "")
    if position is None:
        return None
    shape = next((a.value for a in value.args if a.keyword and a.keyword.value == "shape"), None)
    positional = [a.value for a in value.args if a.keyword is None and not a.star]
    if shape is None and len(positional) > position:
        shape = positional[position]
    if isinstance(shape, (cst.List, cst.Tuple)) and shape.elements:
        return shape.elements[0].value
    return None


def shape_is_whole(ctx: RuleContext, scope: FunctionScope, node: cst.BaseExpression) -> bool:
    """Whether every trace knows the whole static shape of `node`: a
    variable's, a tensor its class made at set-up (`self.w` made in
    `build`), or a parameter every call site in the project fills with one
    and the function never rebinds (`facts.set_up_tensors`)."""
    if ctx.tensors(scope).kind(node).variable:
        return True
    if (
        isinstance(node, cst.Attribute)
        and isinstance(node.value, cst.Name)
        and node.value.value == "self"
    ):
        owner = ctx.index.classes.get(scope.class_name or "")
        return owner is not None and node.attr.value in owner.set_up_tensors
    if isinstance(node, cst.Name):
        fed = ctx.index.whole_shape_params.get(scope.qualname, frozenset())
        return node.value in fed and node.value not in local_bindings(scope.node)
    return False
