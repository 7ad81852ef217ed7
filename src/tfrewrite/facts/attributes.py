"""What the methods of a class can know of `self`'s attributes.

An attribute every assignment of which makes a variable (`self.w =
self.add_weight(...)`) reads as a tensor in traced code; one assigned only in
`__init__` from a Python number (or a parameter whose default is one) is a
Python number, so `if err > self.clip:` is a Python comparison; one every
assignment of which builds a Keras library layer (`self.dense =
layers.Dense(2)`), or a Keras layer of the project whose `call` returns one
tensor (`project_layer`), returns a tensor when called.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import libcst as cst

from tfrewrite.facts.bindings import all_params
from tfrewrite.facts.names import NameResolver
from tfrewrite.facts.tensor_kinds import (
    LAYER,
    METRIC,
    NOT_TENSOR,
    OPTIMIZER,
    SEVERAL_OUTPUT_LAYER,
    VARIABLE,
    VARIABLE_CONSTRUCTORS,
    TensorKind,
    is_metric_constructor,
    is_optimizer_constructor,
    is_python_number,
    layer_constructor_kind,
    meet,
    variable_kind,
)
from tfrewrite.facts.tensors import AttributeFacts
from tfrewrite.facts.walk import child_nodes

_WEIGHT_METHODS = frozenset({"add_weight", "add_variable"})


def attribute_facts(
    cls: cst.ClassDef,
    resolver: NameResolver,
    keras_model: bool = False,
    project_layer: Callable[[cst.Call], bool] = lambda call: False,
) -> AttributeFacts:
    """`self.*` facts for the methods of `cls`: attributes every assignment
    of which makes a variable (`tf.Variable(...)`, `self.add_weight(...)`)
    or an optimizer, and attributes assigned only in `__init__`, from a
    Python number or from a parameter whose default is one. In a Keras
    model (`keras_model`: a direct subclass of `keras.Model`), `self.optimizer`
    is the optimizer `compile` gave it unless the class assigns it."""
    assigned: dict[str, list[tuple[str, cst.BaseExpression | None]]] = {}
    defaults: dict[str, cst.BaseExpression] = {}
    for statement in cls.body.body:
        if not isinstance(statement, cst.FunctionDef):
            continue
        method = statement.name.value
        if method == "__init__":
            for param in all_params(statement.params):
                if param.default is not None:
                    defaults[param.name.value] = param.default
        for small in _iter_small(statement.body):
            for target, value in _self_assignments(small):
                assigned.setdefault(target, []).append((method, value))
    kinds: dict[str, TensorKind] = {}
    numbers: set[str] = set()
    if keras_model and "optimizer" not in assigned:
        kinds["optimizer"] = OPTIMIZER
    for attr, values in assigned.items():
        if all(value is not None and _makes_variable(value, resolver) for _, value in values):
            kinds[attr] = _variable_kind([value for _, value in values], resolver)
        elif all(
            isinstance(value, cst.Call)
            and is_optimizer_constructor(resolver.qualified_name(value.func))
            for _, value in values
        ):
            kinds[attr] = OPTIMIZER
        elif all(
            isinstance(value, cst.Call)
            and is_metric_constructor(resolver.qualified_name(value.func))
            for _, value in values
        ):
            kinds[attr] = METRIC
        elif all(
            isinstance(value, cst.Call)
            and (
                layer_constructor_kind(value, resolver.qualified_name(value.func)).layer
                or project_layer(value)
            )
            for _, value in values
        ):
            kinds[attr] = LAYER
        elif all(
            isinstance(value, cst.Call)
            and layer_constructor_kind(value, resolver.qualified_name(value.func)).several
            for _, value in values
        ):
            kinds[attr] = SEVERAL_OUTPUT_LAYER
        elif all(
            method == "__init__" and value is not None and _numeric_value(value, defaults)
            for method, value in values
        ):
            numbers.add(attr)
    return AttributeFacts(kinds, frozenset(numbers))


def assigned_values(cls: cst.ClassDef, attr: str) -> list[cst.BaseExpression | None]:
    """What the methods of `cls` assign to `self.<attr>`: each value, None
    for one not known (an augmented or unpacked assignment)."""
    return [
        value
        for small in _iter_small(cls.body)
        for assigned, value in _self_assignments(small)
        if assigned == attr
    ]


def built_values(cls: cst.ClassDef, attr: str) -> list[cst.BaseExpression | None]:
    """What the methods of `cls` assign to `self.<attr>` (`assigned_values`),
    and the calls whose results they unpack into it among others
    (`self.actor, self.critic = build(...)`: what `build` builds)."""
    return [*assigned_values(cls, attr), *_unpacked_from_calls(cls, attr)]


def _unpacked_from_calls(cls: cst.ClassDef, attr: str) -> list[cst.Call]:
    """The calls whose results the methods of `cls` unpack into `self.<attr>`
    among others (`self.actor, self.critic = build(...)`)."""
    found = []
    for small in _iter_small(cls.body):
        if not (isinstance(small, cst.Assign) and isinstance(small.value, cst.Call)):
            continue
        for target in small.targets:
            elements = target.target.elements if isinstance(target.target, cst.Tuple) else []
            if any(
                isinstance(e.value, cst.Attribute)
                and isinstance(e.value.value, cst.Name)
                and e.value.value.value == "self"
                and e.value.attr.value == attr
                for e in elements
            ):
                found.append(small.value)
    return found


def _iter_small(body: cst.CSTNode) -> Iterator[cst.BaseSmallStatement]:
    stack: list[cst.CSTNode] = [body]
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            yield from node.body
            continue
        if isinstance(node, cst.ClassDef):
            continue
        stack.extend(child for child in child_nodes(node) if isinstance(child, cst.CSTNode))


def _self_assignments(
    small: cst.BaseSmallStatement,
) -> Iterator[tuple[str, cst.BaseExpression | None]]:
    targets: list[cst.BaseExpression] = []
    value: cst.BaseExpression | None = None
    if isinstance(small, cst.Assign):
        targets = [t.target for t in small.targets]
        value = small.value if len(targets) == 1 else None
    elif isinstance(small, cst.AnnAssign) and small.value is not None:
        targets, value = [small.target], small.value
    elif isinstance(small, cst.AugAssign):
        targets = [small.target]
    for target in targets:
        if (
            isinstance(target, cst.Attribute)
            and isinstance(target.value, cst.Name)
            and target.value.value == "self"
        ):
            yield target.attr.value, value


def _makes_variable(value: cst.BaseExpression, resolver: NameResolver) -> bool:
    if not isinstance(value, cst.Call):
        return False
    if resolver.qualified_name(value.func) in VARIABLE_CONSTRUCTORS:
        return True
    func = value.func
    return (
        isinstance(func, cst.Attribute)
        and func.attr.value in _WEIGHT_METHODS
        and isinstance(func.value, cst.Name)
        and func.value.value == "self"
    )


def _variable_kind(values: list[cst.BaseExpression | None], resolver: NameResolver) -> TensorKind:
    """What every assignment's variable has in common (`tf.Variable(0)`:
    a scalar integer variable; `self.add_weight(...)`: a variable)."""
    kinds = [
        variable_kind(value, resolver, lambda _: NOT_TENSOR)
        if isinstance(value, cst.Call)
        and resolver.qualified_name(value.func) in VARIABLE_CONSTRUCTORS
        else VARIABLE
        for value in values
    ]
    result = kinds[0]
    for kind in kinds[1:]:
        result = meet(result, kind)
    return result


def _numeric_value(value: cst.BaseExpression, defaults: dict[str, cst.BaseExpression]) -> bool:
    if is_python_number(value):
        return True
    if isinstance(value, cst.Name) and value.value in defaults:
        return is_python_number(defaults[value.value])
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Name):
        # `float(lr)`, `int(n)`: a Python number whatever it converts.
        return value.func.value in ("float", "int") and len(value.args) == 1
    return False
