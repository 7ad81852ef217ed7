"""Python iteration over a tensor, which tracing does not allow.

Eagerly a tensor is iterable: `zip(grads, variables)` with `grads` a stacked
tensor (`tf.math.l2_normalize(grads)` turns a list of gradients into one),
`a, b = tf.split(...)` unpacked, `list(t)`. Traced, the same Python iteration
raises "Iterating over a symbolic `tf.Tensor` is not allowed" (AutoGraph
converts `for` loops over tensors, not the iteration inside `zip`, `list`
or an unpacking). TFR108 reports such a statement in traced code; TFR302
lists it as a reason to keep a step eager.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst

from tfrewrite.facts.bindings import all_params
from tfrewrite.facts.blockers import Blocker, lines_of
from tfrewrite.facts.context import FunctionScope, RuleContext
from tfrewrite.facts.vocabulary import ITERATING
from tfrewrite.facts.walk import iter_nodes, parent_links

# TensorFlow ops (by their last name) that return one tensor. Only these
# count: many ops return a tuple (`tf.clip_by_global_norm` gives the clipped
# list and the norm), which Python unpacks traced as well as eagerly.
_SINGLE_RESULT = frozenset(
    {
        "shape", "l2_normalize", "reshape", "stack", "concat", "convert_to_tensor",
        "constant", "cast", "transpose", "squeeze", "expand_dims", "gather", "gather_nd",
        "range", "zeros", "ones", "zeros_like", "ones_like", "fill", "matmul", "add",
        "subtract", "multiply", "divide", "abs", "square", "sqrt", "exp", "log", "tanh",
        "sigmoid", "softmax", "relu", "reduce_sum", "reduce_mean", "reduce_max",
        "reduce_min", "argmax", "argmin", "one_hot", "tile", "identity", "stop_gradient",
        "clip_by_value", "normal", "uniform", "boolean_mask", "sort", "cumsum", "einsum",
    }
)  # fmt: skip


class _Tensors:
    """Whether an expression of one function is one tensor: the result of a
    TensorFlow op known to return one, an item or slice of one, arithmetic on
    one, or a name whose last binding before the use is one (a name rebound
    from a list of gradients to their norm)."""

    def __init__(self, ctx: RuleContext, function: FunctionScope) -> None:
        self.ctx = ctx
        self.bindings: dict[str, list[tuple[int, cst.BaseExpression]]] = {}
        for node in iter_nodes(function.node.body, into_functions=False):
            if isinstance(node, cst.Assign):
                line = lines_of(ctx, node)[0]
                for target in node.targets:
                    if isinstance(target.target, cst.Name):
                        self.bindings.setdefault(target.target.value, []).append((line, node.value))
            elif isinstance(node, (cst.AugAssign, cst.AnnAssign, cst.For, cst.NamedExpr)):
                for name in iter_nodes(node.target):
                    if isinstance(name, cst.Name):
                        self.bindings.setdefault(name.value, []).append((-1, cst.Name("None")))

    def is_tensor(self, expr: cst.BaseExpression, line: int, depth: int = 0) -> bool:
        if depth > 5:
            return False
        if isinstance(expr, cst.Call):
            qualified = self.ctx.names.qualified_name(expr.func) or ""
            return (
                qualified.startswith("tensorflow.")
                and qualified.rsplit(".", 1)[-1] in _SINGLE_RESULT
            )
        if isinstance(expr, cst.Subscript):
            return self.is_tensor(expr.value, line, depth + 1)
        if isinstance(expr, cst.BinaryOperation):
            return self.is_tensor(expr.left, line, depth + 1) or self.is_tensor(
                expr.right, line, depth + 1
            )
        if isinstance(expr, cst.UnaryOperation):
            return self.is_tensor(expr.expression, line, depth + 1)
        if isinstance(expr, cst.Name):
            bindings = self.bindings.get(expr.value, [])
            if any(at < 0 for at, _ in bindings):
                return False  # bound by a loop or an augmented assignment too
            before = [(at, value) for at, value in bindings if at < line]
            if not before:
                return False
            _, value = max(before, key=lambda pair: pair[0])
            return self.is_tensor(value, line, depth + 1)
        return False


@dataclass(frozen=True)
class TensorIteration:
    """A statement or call that iterates over a tensor in Python."""

    node: cst.CSTNode  # the unpacking assignment, or the `zip(...)`-like call
    tensor: cst.BaseExpression  # what it iterates over
    how: str  # "an unpacking assignment", "`zip(...)`"


def tensor_iteration_sites(ctx: RuleContext, function: FunctionScope) -> Iterator[TensorIteration]:
    """Where `function` iterates over a tensor in Python (TFR108 reports
    them in traced code; TFR302 lists them as reasons to keep a step eager)."""
    tensors: _Tensors | None = None
    parents: dict[int, cst.CSTNode] | None = None
    for node in iter_nodes(function.node.body, into_functions=False):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name):
            if node.func.value not in ITERATING or not node.args:
                continue
            if any(a.keyword is not None or a.star for a in node.args):
                continue
            iterated = [a.value for a in node.args]
            if node.func.value == "map":
                iterated = iterated[1:]
            how = f"`{node.func.value}(...)`"
        elif isinstance(node, cst.Assign) and any(
            isinstance(t.target, (cst.Tuple, cst.List)) for t in node.targets
        ):
            iterated = [node.value]
            how = "an unpacking assignment"
        else:
            continue
        tensors = tensors or _Tensors(ctx, function)
        line = lines_of(ctx, node)[0]
        for expr in iterated:
            if not tensors.is_tensor(expr, line):
                continue
            if isinstance(expr, cst.Name):
                parents = parents or parent_links(function.node)
                statement = _statement_line(node, parents)
                guarded = ctx.tensors(function).python_values_at(statement) if statement else ()
                if expr.value in guarded:
                    continue  # `else: loss = list(loss)` after `isinstance(loss, tuple)`
            yield TensorIteration(node, expr, how)
            break


def _statement_line(
    node: cst.CSTNode, parents: dict[int, cst.CSTNode]
) -> cst.SimpleStatementLine | None:
    """The statement line holding `node` (None in a compound statement's header)."""
    current: cst.CSTNode | None = node
    while current is not None and not isinstance(current, cst.SimpleStatementLine):
        current = parents.get(id(current))
    return current


def tensor_loops(ctx: RuleContext, function: FunctionScope) -> Iterator[cst.For]:
    """`for` loops of `function` over a tensor: an op's result, an item of
    one, a helper's tensor result, a name bound to one (`ctx.tensors`,
    proven). A parameter is left out: Keras passes `call` what its caller
    gave, a list of inputs as often as one tensor. AutoGraph converts such
    a loop; code run without it (Keras 3 traces `call` and compiled losses
    so) raises."""
    facts = None
    params = {p.name.value for p in all_params(function.node.params)}
    for node in iter_nodes(function.node.body, into_functions=False):
        if not isinstance(node, cst.For):
            continue
        iterable = node.iter
        if isinstance(iterable, cst.Name) and iterable.value in params:
            continue
        facts = facts or ctx.tensors(function)
        if facts.kind_at(iterable, node).tensor:
            yield node


def some_path_tensor_loops(ctx: RuleContext, function: FunctionScope) -> Iterator[cst.For]:
    """`for` loops of `function` over a local name that is a tensor on some
    paths to the loop and a Python value on others (`index_iter =
    range(n)` in one branch, `tf.range(n)` in the other:
    `TensorFacts.some_paths`). Code run without AutoGraph raises on the
    paths where it is a tensor."""
    facts = None
    for node in iter_nodes(function.node.body, into_functions=False):
        if not (isinstance(node, cst.For) and isinstance(node.iter, cst.Name)):
            continue
        facts = facts or ctx.tensors(function)
        paths = facts.some_paths
        if paths is facts.likely or facts.likely.kind_at(node.iter, node).tensor:
            continue  # no such name, or a tensor on every path (`tensor_loops`)
        if paths.kind_at(node.iter, node).tensor:
            yield node


def autograph_loops(
    ctx: RuleContext, function: FunctionScope, with_tf_range: bool = False
) -> Iterator[tuple[cst.For, cst.BaseExpression | None]]:
    """`for` loops of `function` that only AutoGraph can run traced, each
    with the tensor bound of its `range` (None for a loop over a tensor):
    over a tensor (`tensor_loops`), or over Python's `range` of a tensor
    bound (`range(tf.shape(x)[0])`), which AutoGraph turns into a
    `tf.range` loop and plain Python cannot take. A loop over
    `tf.range(...)`, AutoGraph's documented idiom for a graph loop, only
    `with_tf_range` (for code traced without AutoGraph)."""
    for loop in tensor_loops(ctx, function):
        if with_tf_range or not _is_tf_range(ctx, loop.iter):
            yield loop, None
    facts = None
    for node in iter_nodes(function.node.body, into_functions=False):
        if (
            isinstance(node, cst.For)
            and isinstance(node.iter, cst.Call)
            and isinstance(node.iter.func, cst.Name)
            and node.iter.func.value == "range"
            and ctx.names.qualified_name(node.iter.func) is None  # the builtin
        ):
            facts = facts or ctx.tensors(function)
            bound = next(
                (a.value for a in node.iter.args if facts.kind_at(a.value, node).tensor), None
            )
            if bound is not None:
                yield node, bound


def _is_tf_range(ctx: RuleContext, iterable: cst.BaseExpression) -> bool:
    return (
        isinstance(iterable, cst.Call)
        and ctx.names.qualified_name(iterable.func) == "tensorflow.range"
    )


def tensor_iterations(ctx: RuleContext, function: FunctionScope) -> Iterator[Blocker]:
    """Statements of `function` that iterate over a tensor in Python."""
    for site in tensor_iteration_sites(ctx, function):
        yield Blocker(
            *lines_of(ctx, site.node),
            f"iterates over the tensor `{ctx.code(site.tensor)}` in Python with {site.how}: "
            "traced, iterating over a symbolic `tf.Tensor` is not allowed",
        )
