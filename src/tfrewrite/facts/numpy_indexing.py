"""A NumPy array the step closes over, indexed with a value the step takes.

An inline training loop often draws its minibatch by hand: `perm =
np.random.permutation(n)` per epoch, then `x_train[perm[j:j + bs]]` in the
tape block. Eagerly both are NumPy arrays. Extracted into a `tf.function`
step, the array the loop hands over (`perm`, or a batch index from a
dataset) becomes a symbolic tensor, while `x_train`, read from the enclosing
scope, stays a NumPy array: NumPy cannot index with a symbolic tensor, and
tracing raises ("Cannot convert a symbolic tf.Tensor to a numpy array").
TFR303 refuses such an extraction.
"""

from __future__ import annotations

from collections.abc import Iterable

import libcst as cst

from tfrewrite.facts.bindings import iter_assignments
from tfrewrite.facts.context import RuleContext
from tfrewrite.facts.name_use import mentioned_names
from tfrewrite.facts.python_counters import python_int_loop_variable
from tfrewrite.facts.training import method_name
from tfrewrite.facts.walk import iter_nodes

# Methods of a NumPy array that give a NumPy array back.
_ARRAY_METHODS = frozenset(
    {"astype", "reshape", "copy", "transpose", "squeeze", "flatten", "ravel", "clip"}
)


def _numpy_valued(ctx: RuleContext, value: cst.BaseExpression | None) -> bool:
    """`np.random.rand(64, 3).astype("float32")`, `np.load(...)`,
    `t.numpy()`: an expression known to be a NumPy array."""
    if not isinstance(value, cst.Call):
        return False
    qualified = ctx.names.qualified_name(value.func) or ""
    if qualified.startswith("numpy."):
        return True
    method = method_name(value)
    if method == "numpy" and not value.args:
        return True
    if method in _ARRAY_METHODS and isinstance(value.func, cst.Attribute):
        return _numpy_valued(ctx, value.func.value)  # type: ignore[arg-type]
    return False


def numpy_indexed_by_argument(
    ctx: RuleContext,
    scope: cst.CSTNode,
    step: Iterable[cst.CSTNode],
    inputs: list[str],
) -> tuple[cst.CSTNode, str, str] | None:
    """(subscript, array, argument) for the first `array[...]` in `step`
    where `array` is a NumPy array of `scope` the step would close over and
    the index mentions an argument the step would take as a tensor, or a
    name the step derives from one (`idx = perm[:16]` names `perm`). None
    otherwise."""
    statements = list(step)
    written_in_step = {
        target.value
        for statement in statements
        for target, _, _ in iter_assignments(statement)
        if isinstance(target, cst.Name)
    }
    arrays: dict[str, bool] = {}
    for target, value, augmented in iter_assignments(scope):
        if not isinstance(target, cst.Name) or augmented:
            continue
        name = target.value
        if name in inputs or name in written_in_step:
            continue
        arrays[name] = arrays.get(name, True) and _numpy_valued(ctx, value)
    numpy_arrays = {name for name, known in arrays.items() if known}
    if not numpy_arrays:
        return None
    # Counters of `for i in range(...)` stay Python numbers handed to a step,
    # which index a NumPy array fine (TFR203 is about their retracing).
    counters = {
        counter
        for loop in iter_nodes(scope, into_functions=False)
        if isinstance(loop, cst.For)
        and (counter := python_int_loop_variable(loop, ctx)) is not None
    }
    # Tensor argument, or name the step derives from one -> that argument.
    tensors = {name: name for name in inputs if name not in counters}
    if not tensors:
        return None
    for statement in statements:
        for node in iter_nodes(statement, into_functions=False):
            if isinstance(node, cst.Assign):
                sources = [tensors[n] for n in mentioned_names(node.value) if n in tensors]
                for target in node.targets if sources else ():
                    for name in iter_nodes(target.target):
                        if isinstance(name, cst.Name):
                            tensors[name.value] = sources[0]
            if not isinstance(node, cst.Subscript) or not isinstance(node.value, cst.Name):
                continue
            if node.value.value not in numpy_arrays:
                continue
            used = [tensors[n] for s in node.slice for n in mentioned_names(s) if n in tensors]
            if used:
                return node, node.value.value, used[0]
    return None
