"""NumPy arrays a train step mixes with tensors.

Eagerly, `returns * log_prob` with `returns` a float64 NumPy array and
`log_prob` a float32 tensor converts the array to float32, the dtype of the
tensor it meets; so does `v * (1 - done)` with `done` a bool array. Handed to
a `tf.function`, the array becomes a tensor argument of its own dtype first
(float64, bool, int64), and the same operation raises: "Input 'y' of 'Mul' Op
has type float32 that does not match type float64 of argument 'x'", or
"Expected bool, but got 1 of type 'int'" (measured on tensorflow-cpu 2.21).
RL tutorials build such arrays per episode (`np.zeros(T)` for the returns,
`np.array(...)` over the trajectory) and hand them to the update.

TFR302 lists such an argument as a reason not to decorate the step; TFR303
does not extract a step that would take one.
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from tfrewrite.facts.bindings import iter_assignments, positional_param_names, split_target
from tfrewrite.facts.context import RuleContext
from tfrewrite.facts.tensor_kinds import is_python_number
from tfrewrite.facts.walk import iter_nodes

# Spellings of float32: an array made with one of them meets float32 tensors alike.
_FLOAT32 = frozenset({"numpy.float32", "tensorflow.float32"})


def numpy_arrays(ctx: RuleContext, scope: cst.CSTNode) -> dict[str, cst.CSTNode]:
    """Names `scope` binds (itself, not its nested functions) to a NumPy value
    that is not float32: name -> the value of its first such binding.
    `G = np.zeros(T)`, `s, a, r = [np.array(x) for x in zip(*trajectory)]`,
    `s, r, done, info = map(np.array, zip(*results))`."""
    found: dict[str, cst.CSTNode] = {}
    for target, value, augmented in iter_assignments(scope):
        if augmented or value is None or isinstance(value, cst.For):
            continue
        for name, part, index in split_target(target, value):
            if name not in found and part is not None and _numpy_value(ctx, part, index):
                found[name] = part
    return found


def _numpy_value(ctx: RuleContext, value: cst.BaseExpression, index: int | None) -> bool:
    if isinstance(value, cst.Call):
        if _numpy_call(ctx, value):
            return True
        if index is not None and _qualified(ctx, value.func) == "map" and value.args:
            function = value.args[0].value
            return (_qualified(ctx, function) or "").startswith("numpy.")
        return False
    if index is not None and isinstance(value, cst.ListComp):
        return isinstance(value.elt, cst.Call) and _numpy_call(ctx, value.elt)
    return False


def _numpy_call(ctx: RuleContext, call: cst.Call) -> bool:
    """A call of a NumPy function whose result is not pinned to float32."""
    qualified = _qualified(ctx, call.func) or ""
    if not qualified.startswith("numpy.") or qualified in _FLOAT32:
        return False
    return not any(_is_float32(ctx, arg.value) for arg in call.args)


def _is_float32(ctx: RuleContext, node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.SimpleString):
        return node.evaluated_value == "float32"
    return _qualified(ctx, node) in _FLOAT32


def _qualified(ctx: RuleContext, node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.Name) and node.value == "map":
        return "map"
    return ctx.names.qualified_name(node)


def mixed_with_tensors(
    body: cst.CSTNode | Sequence[cst.CSTNode], names: set[str]
) -> dict[str, cst.CSTNode]:
    """Names of `names` that `body` uses as an operand of arithmetic or a
    comparison whose other operand is not a Python number (`returns *
    log_prob`, not `x / 255.0`), and that `body` does not bind again: name
    -> the first such operation."""
    found: dict[str, cst.CSTNode] = {}
    roots = [body] if isinstance(body, cst.CSTNode) else list(body)
    # A name the step binds again (`G = tf.cast(G, tf.float32)`) may be a
    # tensor by the time arithmetic meets it.
    rebound = {
        name
        for root in roots
        for target, _, _ in iter_assignments(root)
        for name, _, _ in split_target(target, None)
    }
    names = names - rebound
    for node in (n for root in roots for n in iter_nodes(root, into_functions=False)):
        pairs: list[tuple[cst.BaseExpression, cst.BaseExpression]] = []
        if isinstance(node, cst.BinaryOperation):
            pairs = [(node.left, node.right), (node.right, node.left)]
        elif isinstance(node, cst.AugAssign):
            pairs = [(node.target, node.value), (node.value, node.target)]  # type: ignore[list-item]
        elif isinstance(node, cst.Comparison):
            left = node.left
            for comparison in node.comparisons:
                pairs += [(left, comparison.comparator), (comparison.comparator, left)]
                left = comparison.comparator
        for operand, other in pairs:
            if (
                isinstance(operand, cst.Name)
                and operand.value in names
                and operand.value not in found
                and not is_python_number(other)
            ):
                bare = node
                if isinstance(node, (cst.BinaryOperation, cst.Comparison)):
                    bare = node.with_changes(lpar=(), rpar=())  # `G - b`, not `(G - b)`
                found[operand.value] = bare
    return found


def argument_names(call: cst.Call, function: cst.FunctionDef, method: bool) -> dict[str, str]:
    """Parameter -> the plain name a call passes for it (`step(s, a, G)`)."""
    positional = positional_param_names(function)
    if method and positional:
        positional = positional[1:]
    passed: dict[str, str] = {}
    for position, arg in enumerate(call.args):
        if not isinstance(arg.value, cst.Name) or arg.star:
            continue
        if arg.keyword is not None:
            passed[arg.keyword.value] = arg.value.value
        elif position < len(positional):
            passed[positional[position]] = arg.value.value
    return passed


def numpy_argument_hazard(name: str, taken: str, operation: str) -> str:
    """Why a step handed the NumPy array `name` fails once traced."""
    return (
        f"makes `{name}` a NumPy array, which the step takes{taken} and mixes with tensors in "
        f"`{operation}`: eagerly the array takes the tensor's dtype, but a traced step's "
        "argument keeps its own (float64, bool, int64) and the operation raises; make it "
        "float32 (`.astype(np.float32)`) or `tf.cast` it in the step"
    )
