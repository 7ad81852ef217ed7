"""Python numbers a loop changes on every iteration: the counter of `for
step in range(...)` (or `enumerate(...)`), a `step += 1` counter, a decayed
`lr *= 0.9`. A `tf.function` called with one traces again for each new value
(TFR203); a step TFR303 would extract must not take one as an argument.
The index of a loop also counts its iterations: a running sum over batches
divided by `i + 1` is a mean over batches (TFR306).
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from tfrewrite.facts.context import RuleContext
from tfrewrite.facts.names import dotted_name
from tfrewrite.facts.parameter_names import is_config_name
from tfrewrite.facts.step_array_arguments import enclosing_function
from tfrewrite.facts.tensor_kinds import is_python_number
from tfrewrite.facts.walk import iter_nodes, iter_small_statements


def python_int_loop_variable(loop: cst.For, ctx: RuleContext) -> str | None:
    """The loop variable of `for v in range(...)` / `for v, x in enumerate(...)`."""
    if not isinstance(loop.iter, cst.Call) or not isinstance(loop.iter.func, cst.Name):
        return None
    builtin = loop.iter.func.value
    if builtin in ctx.index.imports or builtin in ctx.index.functions:
        return None  # shadowed
    if builtin == "range" and isinstance(loop.target, cst.Name):
        return loop.target.value
    if builtin == "enumerate" and isinstance(loop.target, (cst.Tuple, cst.List)):
        first = loop.target.elements[0].value if loop.target.elements else None
        if isinstance(first, cst.Name):
            return first.value
    return None


def iteration_index(loop: cst.For, ctx: RuleContext) -> str | None:
    """The loop variable that numbers the iterations from 0: the index of
    `for i, x in enumerate(...)` (no `start`), the counter of `for i in
    range(n)`. After the loop, `i + 1` is how many times it ran."""
    name = python_int_loop_variable(loop, ctx)
    call = loop.iter
    if name is None or not isinstance(call, cst.Call) or not isinstance(call.func, cst.Name):
        return None
    if call.func.value == "enumerate":
        return name if len(call.args) == 1 and call.args[0].keyword is None else None
    return name if len(call.args) == 1 and not call.args[0].star else None


def counts_iterations(expr: cst.BaseExpression, index: str) -> bool:
    """Whether `expr` is a loop's iteration count read after the loop from its
    index: `i + 1` (`1 + i`), or `i` itself, one short (the count of all
    iterations but the first)."""
    if isinstance(expr, cst.Name):
        return expr.value == index
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
        sides = (expr.left, expr.right)
        return any(isinstance(s, cst.Name) and s.value == index for s in sides) and any(
            isinstance(s, cst.Integer) and s.value == "1" for s in sides
        )
    return False


def changing_numbers(loop: cst.For | cst.While) -> set[str]:
    """Names a loop body changes by Python arithmetic with number literals:
    `step += 1`, `lr *= 0.9`, `lr = lr * 0.5` (a counter, a decayed rate)."""
    found: set[str] = set()
    for node in iter_nodes(loop.body, into_functions=False):
        if isinstance(node, cst.AugAssign) and isinstance(node.target, cst.Name):
            if is_python_number(node.value):
                found.add(node.target.value)
        elif isinstance(node, cst.Assign) and len(node.targets) == 1:
            target = node.targets[0].target
            if isinstance(target, cst.Name) and _uses_only_number(node.value, target.value):
                found.add(target.value)
    return found


def derived_numbers(
    loop: cst.For | cst.While, sources: set[str], fixed: frozenset[str] = frozenset()
) -> set[str]:
    """Names the loop body binds to arithmetic on `sources` (Python numbers
    that change every iteration: the loop's counter), number literals and
    `fixed` numbers (set before the loop), directly or through each other:
    `tau = 1.0 - 1.0 / (step + 1)` changes with `step`, and so does
    `lr_now = lr * frac` for `frac = 1.0 - step / PARAMS["max_steps"]`."""
    assignments = [
        (node.targets[0].target.value, node.value)
        for node in iter_nodes(loop.body, into_functions=False)
        if isinstance(node, cst.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0].target, cst.Name)
    ]
    known = set(sources)
    found: set[str] = set()
    changed = True
    while changed:
        changed = False
        for name, value in assignments:
            if (
                name not in found
                and name not in known
                and _number_arithmetic_on(value, known, fixed)
            ):
                found.add(name)
                changed = True
        known |= found
    return found


def _number_arithmetic_on(
    expr: cst.BaseExpression, names: set[str], fixed: frozenset[str] = frozenset()
) -> bool:
    """`expr` is arithmetic on some of `names`, number literals and `fixed`
    numbers or configuration values."""
    return any(_uses_only_numbers_and(expr, name, names, fixed) for name in names)


def _uses_only_numbers_and(
    expr: cst.BaseExpression, name: str, names: set[str], fixed: frozenset[str] = frozenset()
) -> bool:
    """`expr` reads `name`, and otherwise only `names`, number literals and,
    with `fixed` (not empty), those names and configuration values
    (`PARAMS["max_steps"]`, `args.lr`)."""
    if isinstance(expr, cst.Name):
        return expr.value == name
    if not isinstance(expr, cst.BinaryOperation):
        return False
    sides = (expr.left, expr.right)

    def allowed(side: cst.BaseExpression) -> bool:
        if isinstance(side, cst.Name):
            return side.value in names or side.value in fixed
        if is_python_number(side):
            return True
        if fixed and is_configuration_value(side):
            return True
        return isinstance(side, cst.BinaryOperation) and all(
            allowed(s) for s in (side.left, side.right)
        )

    return all(allowed(side) for side in sides) and any(
        _uses_only_numbers_and(side, name, names, fixed) for side in sides
    )


def is_configuration_value(expr: cst.BaseExpression) -> bool:
    """A value read from a configuration: an item or attribute of a name
    that says so (`config.lr`, `args.epochs`, `hparams["lr"]`) or of a
    module-level constant (`TRAIN_PARAMS["max_steps"]`): a Python number
    where arithmetic reads it."""
    while isinstance(expr, (cst.Subscript, cst.Attribute)):
        expr = expr.value
    return isinstance(expr, cst.Name) and (
        is_config_name(expr.value) or (expr.value.isupper() and len(expr.value) > 1)
    )


def fixed_numbers(scope: cst.CSTNode) -> frozenset[str]:
    """Names a scope binds to number literals or configuration values
    (`lr_a, lr_c = PARAMS["lr_a"], PARAMS["lr_c"]`): fixed numbers that
    arithmetic with a counter keeps changing with it."""
    found: set[str] = set()
    for small in iter_small_statements(scope):
        if not isinstance(small, cst.Assign) or len(small.targets) != 1:
            continue
        target, value = small.targets[0].target, small.value
        pairs: list[tuple[cst.BaseExpression, cst.BaseExpression]] = [(target, value)]
        if isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List)):
            if len(target.elements) == len(value.elements):
                elements = zip(target.elements, value.elements, strict=True)
                pairs = [(t.value, v.value) for t, v in elements]
        for name, bound in pairs:
            if isinstance(name, cst.Name) and (
                is_python_number(bound) or is_configuration_value(bound)
            ):
                found.add(name.value)
    return frozenset(found)


def literal_numbers(scope: cst.CSTNode) -> set[str]:
    """Names a scope binds to a number literal (`lr = 0.1`, `step = 0`): the
    start of a counter or a schedule, not a size derived from an argument."""
    found: set[str] = set()
    for small in iter_small_statements(scope):
        if isinstance(small, cst.Assign) and is_python_number(small.value):
            found.update(t.target.value for t in small.targets if isinstance(t.target, cst.Name))
    return found


def _uses_only_number(expr: cst.BaseExpression, name: str) -> bool:
    """`expr` is arithmetic on `name` (at least once) and number literals."""
    return isinstance(expr, cst.BinaryOperation) and _uses_only_numbers_and(expr, name, {name})


@dataclass(frozen=True)
class LoopNumbers:
    """The Python numbers one loop changes on every iteration: its counter
    (`for step in range(n)`), names it steps with number literals (`step +=
    1`, started from a literal in `scope`), and names computed from those.
    An argument that is one of them differs at every call from the loop."""

    variable: str | None
    changing: frozenset[str]
    derived: frozenset[str]

    @classmethod
    def of(cls, loop: cst.For | cst.While, scope: cst.CSTNode, ctx: RuleContext) -> LoopNumbers:
        variable = python_int_loop_variable(loop, ctx) if isinstance(loop, cst.For) else None
        changing = changing_numbers(loop) & literal_numbers(scope)
        sources = changing | ({variable} if variable else set())
        derived = derived_numbers(loop, sources, fixed_numbers(scope)) if sources else set()
        return cls(variable, frozenset(changing), frozenset(derived))

    def __bool__(self) -> bool:
        return self.variable is not None or bool(self.changing)

    def describe(self, value: cst.BaseExpression) -> tuple[str, str] | None:
        """(the name, how to say what it is) when `value` changes with the
        loop: `step`, `step + 1`, a rate it decays, `tau` computed from
        `step`; None otherwise."""
        if self.variable is not None and _counter_arithmetic(value, self.variable):
            return self.variable, f"the Python int `{self.variable}`"
        if isinstance(value, cst.Name) and value.value in self.changing:
            return value.value, f"the Python number `{value.value}`"
        if isinstance(value, cst.Name) and value.value in self.derived:
            counted = "computed from the loop's counter,"
            return value.value, f"the Python number `{value.value}`, {counted}"
        return None


def _counter_arithmetic(expr: cst.BaseExpression, name: str) -> bool:
    """`expr` is `name`, or arithmetic on `name` and integer literals."""
    if isinstance(expr, cst.Name):
        return expr.value == name
    if isinstance(expr, cst.BinaryOperation):
        return (
            (_counter_arithmetic(expr.left, name) or isinstance(expr.left, cst.Integer))
            and (_counter_arithmetic(expr.right, name) or isinstance(expr.right, cst.Integer))
            and not (isinstance(expr.left, cst.Integer) and isinstance(expr.right, cst.Integer))
        )
    return False


def changing_number_arguments(
    ctx: RuleContext, loops: list[cst.For | cst.While], name: str
) -> list[tuple[cst.Call, str, str]]:
    """Calls of the function `name` (or `self.name`) in `loops` that pass a
    number the loop changes every iteration (`LoopNumbers`), once each: the
    call, the number's name and how to say what it is. Decorated, the
    function would trace a new graph for each value."""
    found: list[tuple[cst.Call, str, str]] = []
    seen: set[int] = set()
    for loop in loops:
        scope = enclosing_function(ctx, loop) or ctx.module
        numbers = LoopNumbers.of(loop, scope, ctx)
        if not numbers:
            continue
        for call in iter_nodes(loop.body, into_functions=False):
            if not isinstance(call, cst.Call) or id(call) in seen:
                continue
            if dotted_name(call.func) not in (name, f"self.{name}"):
                continue
            for arg in call.args:
                described = numbers.describe(arg.value)
                if described is not None:
                    seen.add(id(call))
                    found.append((call, *described))
                    break
    return found
