"""Which parameters of a traced function are likely tensors.

AutoGraph converts an `if` on a parameter whenever the function is called with
a tensor, so a parameter with no evidence either way is a *likely* tensor:
enough for a finding, never for a safe fix. The evidence that it holds a
Python value instead is read here: a default, an annotation, a name that says
so (`training`, `num_classes`), or a use only a Python value allows.
"""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from tfrewrite.facts.bindings import scope_nodes
from tfrewrite.facts.names import NameResolver
from tfrewrite.facts.parameter_names import is_python_parameter_name
from tfrewrite.facts.tensor_kinds import TENSOR_ANNOTATIONS

# Attributes and methods a tensor has: reading them is no evidence against one.
TENSOR_MEMBERS = frozenset(
    {
        "shape",
        "dtype",
        "ndim",
        "numpy",
        "get_shape",
        "set_shape",
        "assign",
        "assign_add",
        "assign_sub",
        "read_value",
        "value",
        "T",
        "device",
        "name",
        "op",
        "graph",
        "rank",
        "eval",
        "consumers",
        "ref",
        "experimental_ref",
        "astype",
    }
)
# Calls whose first argument is a Python value (or an object).
_PYTHON_ARGUMENT_CALLS = frozenset(
    {"isinstance", "range", "len", "callable", "hasattr", "getattr", "setattr", "iter", "type"}
)
# Keyword arguments that take Python values.
_PYTHON_KEYWORDS = frozenset(
    {"training", "axis", "dtype", "name", "shape", "mask", "reduction", "from_logits", "keepdims"}
)


def likely_tensor_params(function: cst.FunctionDef, resolver: NameResolver) -> set[str]:
    """Parameters of a traced function with no evidence that they hold a
    Python value: no default, no non-tensor annotation, a name that does not
    say so, and no use that only a Python value or object allows (calling
    it, an attribute a tensor lacks, a string key, `isinstance`, `range`,
    `len`, a bare truth test, passing it as `training=` or to `tf.constant`),
    also through a count computed from it (`current = n - steps`, then
    `range(current + 1, n)`). Iterating it is no evidence: a tensor iterates
    too."""
    candidates: set[str] = set()
    params = [*function.params.posonly_params, *function.params.params]
    params += list(function.params.kwonly_params)
    for param in params:
        name = param.name.value
        if param.default is not None or is_python_parameter_name(name):
            continue
        if param.annotation is not None:
            qualified = resolver.qualified_name(param.annotation.annotation) or ""
            leaf = qualified.rsplit(".", 1)[-1]
            if qualified not in TENSOR_ANNOTATIONS and not leaf.endswith("TensorLike"):
                continue
        candidates.add(name)
    if not candidates:
        return candidates
    contrary: set[str] = set()
    # `current = len(self.blocks) - steps`: a count computed from a
    # parameter is what it holds, and a Python use of it is one of the
    # parameter's.
    derived = _derived_counts(function.body, candidates)
    pool = candidates | set(derived)
    for node in scope_nodes(function.body):
        contrary.update(derived.get(n, n) for n in _python_uses(node, pool))
        contrary.update(derived.get(n, n) for n in _range_bounds(node, pool))
        if (
            isinstance(node, cst.Call)
            and node.args
            and resolver.qualified_name(node.func) == "tensorflow.constant"
        ):
            # `tf.constant(n)` raises on a symbolic tensor: its author passes
            # a Python or NumPy value.
            found = _param_name(node.args[0].value, candidates)
            if found is not None:
                contrary.add(found)
    return candidates - contrary


def keyed_input_params(function: cst.FunctionDef) -> set[str]:
    """Parameters of a traced function read by string keys (`batch["obs"]`),
    with no default and a name that does not say Python: a dict of inputs,
    as a replay buffer, a `tf.data` element or Keras hands over. Its items
    are likely tensors (the parameter itself is not: a tensor has no string
    keys)."""
    params = [*function.params.posonly_params, *function.params.params]
    params += list(function.params.kwonly_params)
    candidates = {
        p.name.value
        for p in params
        if p.default is None and p.annotation is None and not is_python_parameter_name(p.name.value)
    }
    keyed: set[str] = set()
    for node in scope_nodes(function.body):
        if isinstance(node, cst.Subscript) and is_string_key(node):
            name = _param_name(node.value, candidates)
            if name is not None:
                keyed.add(name)
    return keyed


def is_string_key(node: cst.Subscript) -> bool:
    """`x["obs"]`: one index, a string literal."""
    return (
        len(node.slice) == 1
        and isinstance(node.slice[0].slice, cst.Index)
        and isinstance(node.slice[0].slice.value, cst.SimpleString)
    )


def _derived_counts(body: cst.BaseSuite, candidates: set[str]) -> dict[str, str]:
    """Names bound once, to arithmetic on one parameter, numbers and
    `len(...)` (`current = len(self.blocks) - steps`) -> that parameter."""
    bound: dict[str, list[cst.BaseExpression]] = {}
    for node in scope_nodes(body):
        if isinstance(node, cst.Assign) and len(node.targets) == 1:
            target = node.targets[0].target
            if isinstance(target, cst.Name):
                bound.setdefault(target.value, []).append(node.value)
    derived: dict[str, str] = {}
    for name, values in bound.items():
        if name in candidates or len(values) != 1:
            continue
        used = _arithmetic_names(values[0])
        if used is not None and len(used) == 1 and used <= candidates:
            derived[name] = next(iter(used))
    return derived


def _arithmetic_names(node: cst.BaseExpression) -> set[str] | None:
    """The names `node` does arithmetic on, when it is only arithmetic on
    names, numbers and `len(...)`; None otherwise."""
    if isinstance(node, cst.Name):
        return {node.value}
    if isinstance(node, (cst.Integer, cst.Float)):
        return set()
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "len":
        return set()
    if isinstance(node, cst.UnaryOperation):
        return _arithmetic_names(node.expression)
    if isinstance(node, cst.BinaryOperation):
        left, right = _arithmetic_names(node.left), _arithmetic_names(node.right)
        return None if left is None or right is None else left | right
    return None


def _range_bounds(node: cst.CSTNode, names: set[str]) -> Iterator[str]:
    """Names a `range(...)` bound does arithmetic on (`range(current + 1,
    n)`): a Python loop's bounds are Python ints."""
    func = node.func if isinstance(node, cst.Call) else None
    if isinstance(func, cst.Name) and func.value == "range":
        for arg in node.args:  # type: ignore[union-attr]
            used = _arithmetic_names(arg.value)
            if used:
                yield from used & names


def _param_name(node: cst.CSTNode | None, candidates: set[str]) -> str | None:
    if isinstance(node, cst.Name) and node.value in candidates:
        return node.value
    return None


def _truth_tested(node: cst.BaseExpression | None, candidates: set[str]) -> Iterator[str]:
    """Parameters used bare as a truth value (`if flag:`, `not flag`, `a and flag`)."""
    if node is None:
        return
    name = _param_name(node, candidates)
    if name is not None:
        yield name
    elif isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
        yield from _truth_tested(node.expression, candidates)
    elif isinstance(node, cst.BooleanOperation):
        yield from _truth_tested(node.left, candidates)
        yield from _truth_tested(node.right, candidates)


def _python_uses(node: cst.CSTNode, candidates: set[str]) -> Iterator[str]:
    """Parameters that `node` uses as only a Python value or object can be used."""
    if isinstance(node, cst.Attribute):
        name = _param_name(node.value, candidates)
        if name is not None and node.attr.value not in TENSOR_MEMBERS:
            yield name
    elif isinstance(node, cst.Call):
        name = _param_name(node.func, candidates)
        if name is not None:
            yield name
        if isinstance(node.func, cst.Name) and node.func.value in _PYTHON_ARGUMENT_CALLS:
            for arg in node.args[:1]:
                found = _param_name(arg.value, candidates)
                if found is not None:
                    yield found
        for arg in node.args:
            found = _param_name(arg.value, candidates)
            if found is None:
                continue
            if arg.star or (arg.keyword is not None and arg.keyword.value in _PYTHON_KEYWORDS):
                yield found
    elif isinstance(node, cst.Subscript):
        name = _param_name(node.value, candidates)
        if name is not None and any(
            isinstance(e.slice, cst.Index)
            and isinstance(e.slice.value, (cst.SimpleString, cst.FormattedString))
            for e in node.slice
        ):
            yield name
    elif isinstance(node, cst.Comparison):
        operands = [node.left, *(c.comparator for c in node.comparisons)]
        if any(isinstance(o, (cst.SimpleString, cst.FormattedString)) for o in operands):
            yield from (n for o in operands if (n := _param_name(o, candidates)) is not None)
        for comparison in node.comparisons:
            if isinstance(comparison.operator, (cst.In, cst.NotIn)):
                found = _param_name(comparison.comparator, candidates)
                if found is not None:
                    yield found
    elif isinstance(node, (cst.If, cst.While, cst.IfExp)):
        yield from _truth_tested(node.test, candidates)
    elif isinstance(node, cst.StarredDictElement):
        found = _param_name(node.value, candidates)
        if found is not None:
            yield found
