"""What an `isinstance` test proves about a name in each branch of an `if`.

`if isinstance(loss, tuple) is False: ... else: loss = list(loss)` handles a
loss function that returns a tensor or a tuple of them: in the `else`
branch `loss` is a tuple, whatever the code before says it may be. A tensor
is never an instance of Python's own containers and scalars, so a name an
enclosing test proves one of them is no tensor there."""

from __future__ import annotations

import libcst as cst

# Python's builtin classes no tensor is an instance of.
PYTHON_CLASSES = frozenset(
    {"list", "tuple", "dict", "set", "frozenset", "str", "bytes", "int", "float", "bool"}
)


def python_instance_guard(test: cst.BaseExpression) -> tuple[str, bool] | None:
    """(name, branch) when `test` proves the local `name` an instance of
    Python's builtin classes in one branch: `True` when in the `if`'s body
    (`isinstance(x, (list, tuple))`, `... is True`), `False` when in its
    `else` (`not isinstance(x, list)`, `isinstance(x, tuple) is False`)."""
    holds = True
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        test, holds = test.expression, False
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        target = test.comparisons[0]
        if not (
            isinstance(target.operator, (cst.Is, cst.Equal))
            and isinstance(target.comparator, cst.Name)
            and target.comparator.value in ("True", "False")
        ):
            return None
        test, holds = test.left, holds == (target.comparator.value == "True")
    name = _instance_test(test)
    return (name, holds) if name is not None else None


def _instance_test(test: cst.BaseExpression) -> str | None:
    """`x` for `isinstance(x, C)` whose classes are all Python's own."""
    if not (
        isinstance(test, cst.Call)
        and isinstance(test.func, cst.Name)
        and test.func.value == "isinstance"
        and len(test.args) == 2
        and isinstance(test.args[0].value, cst.Name)
    ):
        return None
    classes = test.args[1].value
    names = [e.value for e in classes.elements] if isinstance(classes, cst.Tuple) else [classes]
    if all(isinstance(n, cst.Name) and n.value in PYTHON_CLASSES for n in names):
        return test.args[0].value.value
    return None
