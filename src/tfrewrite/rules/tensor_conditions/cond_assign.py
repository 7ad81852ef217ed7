"""Rewriting an `if` that assigns as `a, b = tf.cond(...)`.

As AutoGraph's control-flow converter does, the outputs of the `tf.cond` are
the names a branch modifies that are read after the `if`; a branch that
leaves one alone passes its old value through, so the name must be defined
before the `if` or in both branches. Each branch becomes a lambda (one
expression per output) or a small function returning the outputs, and each
output must have one dtype in both branches.
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from tfrewrite.facts.block_exits import Statement, block_statements
from tfrewrite.facts.context import RuleContext
from tfrewrite.rewrite.fixes import NodeEdit
from tfrewrite.rules.tensor_conditions.cond_codegen import (
    Branch,
    Refusal,
    UnmergeableBranches,
    assemble,
    branch_value_code,
    cond_call,
    expression_code,
    function_branch,
    has_comment,
    lambda_branch,
    template,
    walrus_target,
)
from tfrewrite.rules.tensor_conditions.cond_dtypes import (
    UNKNOWN,
    ValueKind,
    dtype_anchor,
    match_dtypes,
    value_kind,
)
from tfrewrite.rules.tensor_conditions.cond_effects import branch_problem
from tfrewrite.rules.tensor_conditions.cond_flow import (
    Placement,
    assigned_names,
    bound_by_definition,
    definitely_assigned,
    is_pass,
    reads,
)
from tfrewrite.rules.tensor_conditions.cond_site import CondSite, assignment_order

_AUG_TO_BINARY = {
    cst.AddAssign: cst.Add,
    cst.SubtractAssign: cst.Subtract,
    cst.MultiplyAssign: cst.Multiply,
    cst.DivideAssign: cst.Divide,
    cst.FloorDivideAssign: cst.FloorDivide,
    cst.ModuloAssign: cst.Modulo,
    cst.PowerAssign: cst.Power,
    cst.MatrixMultiplyAssign: cst.MatrixMultiply,
}
# Binding strength of binary operators, for parenthesising `a op= b` as `a op (b)`.
_PRECEDENCE = {
    cst.Add: 1,
    cst.Subtract: 1,
    cst.Multiply: 2,
    cst.Divide: 2,
    cst.FloorDivide: 2,
    cst.Modulo: 2,
    cst.MatrixMultiply: 2,
    cst.Power: 3,
}


def rewrite_assigning(
    site: CondSite, node: cst.If, place: Placement, condition: str
) -> list[NodeEdit]:
    sides = {"true": block_statements(node.body), "false": block_statements(node.orelse)}
    sides = {k: [s for s in v if not is_pass(s)] for k, v in sides.items()}
    for side, statements in sides.items():
        problem = branch_problem(
            statements, site.ctx.names, side, allow_return=False
        ) or site.branch_scope_problem(side, statements)
        if problem:
            raise Refusal(problem)
    if not any(sides.values()):
        raise Refusal("both branches are empty: delete the `if`")
    live = site.live_after(place) | site.closure_reads
    defined = site.defined_before(place)
    modified = {side: assigned_names(cst.Module(body=s)) for side, s in sides.items()}
    outputs = [n for n in assignment_order(sides["true"] + sides["false"]) if n in live]
    surely = {side: definitely_assigned(s) for side, s in sides.items()}
    objects = bound_by_definition(sides["true"] + sides["false"])
    for name in outputs:
        if name in objects:
            raise Refusal(
                f"'{name}' is a function, class or module defined in a branch and used after "
                "the `if`; `tf.cond` can only return tensors"
            )
        for side, other in (("true", "false"), ("false", "true")):
            if name not in surely[side] and name not in defined:
                if name not in modified[side]:
                    raise Refusal(
                        f"'{name}' is defined only in the {other} branch and used after the "
                        f"`if`: define it before the `if` or in the {side} branch too"
                    )
                raise Refusal(
                    f"'{name}' is assigned only on some paths of the {side} branch and is not "
                    "defined before the `if`"
                )
    passthrough: dict[str, dict[str, str]] = {"true": {}, "false": {}}
    sides = _reconcile_outputs(site, sides, outputs, place, passthrough)
    branches = {}
    for side, statements in sides.items():
        suite = node.body if side == "true" else node.orelse
        branches[side] = _assign_branch(
            site, side, statements, suite, outputs, defined, place, passthrough[side]
        )
    if len(outputs) == 1:
        prefix = f"{outputs[0]} = "
    elif outputs:
        prefix = f"{', '.join(outputs)} = "
    else:
        prefix = ""
    text = cond_call(
        site.tf, condition, branches["true"], branches["false"], prefix, site.indent_of(place)
    )
    new = assemble(branches["true"], branches["false"], text, node.leading_lines)
    if (
        place.blocks
        and len(place.blocks[-1][0]) == 1
        and place.blocks[-1][0][0] is node
        and _is_elif(node, place)
    ):
        return [NodeEdit(node, cst.Else(body=cst.IndentedBlock(body=new)))]
    return [NodeEdit(node, cst.FlattenSentinel(new))]


def _reconcile_outputs(
    site: CondSite,
    sides: dict[str, list[Statement]],
    outputs: list[str],
    place: Placement,
    passthrough: dict[str, dict[str, str]],
) -> dict[str, list[Statement]]:
    """Match the dtypes of each output in both branches (see `match_dtypes`);
    `passthrough` receives, per side, what a branch that leaves an output
    alone passes on instead of the bare name."""
    unstable = assigned_names(cst.Module(body=[*sides["true"], *sides["false"]]))
    for name in outputs:
        finals = {side: _final_assignment(s, name) for side, s in sides.items()}
        kinds = {
            side: _final_kind(site, name, final, place)
            if final is not None or name not in assigned_names(cst.Module(body=sides[side]))
            # bound in the branch some other way (`+=`, unpacking, a loop): its dtype
            # is not the incoming value's
            else _augmented_kind(site, name, sides[side], place)
            for side, final in finals.items()
        }
        values = tuple(final[1].value if final is not None else None for final in finals.values())
        try:
            matched = match_dtypes(
                f"'{name}'",
                values,  # type: ignore[arg-type]
                (kinds["true"], kinds["false"]),
                site.facts,
                unstable,
                site.tf,
                incoming=name,
                meets=met_tensor(site, name, place, unstable),
            )
        except UnmergeableBranches:
            raise
        except ValueError as error:
            raise Refusal(str(error)) from None
        site.note_unsafe(matched.unsafe)
        for index, side in enumerate(("true", "false")):
            if matched.passthrough[index] is not None:
                if name in assigned_names(cst.Module(body=sides[side])):
                    raise Refusal(
                        f"'{name}' is a Python number before the `if` and changes its dtype in "
                        f"the {side} branch"
                    )
                passthrough[side][name] = matched.passthrough[index]  # type: ignore[assignment]
            final = finals[side]
            if final is None or id(final[1].value) not in matched.replace:
                continue
            line, assign = final
            replaced = line.with_changes(
                body=[assign.with_changes(value=matched.replace[id(final[1].value)])]
            )
            sides[side] = [replaced if s is line else s for s in sides[side]]
    return sides


def _augmented_kind(
    site: CondSite, name: str, statements: Sequence[Statement], place: Placement
) -> ValueKind:
    """The kind of `name` after a branch that binds it once, by `name op=
    value` on its incoming value; unknown for any other binding."""
    bindings = [s for s in statements if name in assigned_names(cst.Module(body=[s]))]
    if len(bindings) != 1 or not isinstance(bindings[0], cst.SimpleStatementLine):
        return UNKNOWN
    small = bindings[0].body
    if not (
        len(small) == 1
        and isinstance(small[0], cst.AugAssign)
        and isinstance(small[0].target, cst.Name)
        and type(small[0].operator) in _AUG_TO_BINARY
    ):
        return UNKNOWN
    augmented = small[0]
    before = _final_kind(site, name, None, place)
    value = value_kind(augmented.value, site.facts)
    numbers = ("int", "float")
    if before.literal in numbers and value.literal in numbers:
        if isinstance(augmented.operator, cst.PowerAssign):
            return UNKNOWN  # `2 ** -1` is a float
        floating = "float" in (before.literal, value.literal) or isinstance(
            augmented.operator, cst.DivideAssign
        )
        return ValueKind(literal="float" if floating else "int")
    for number, tensor in ((before, value), (value, before)):
        if number.literal in numbers and tensor.tensor is not None and tensor.tensor.floating:
            return tensor
    if before.tensor is not None and value.tensor is not None:
        if before.tensor.floating and value.tensor.floating:
            return before
    return UNKNOWN


def _final_kind(
    site: CondSite,
    name: str,
    final: tuple[cst.SimpleStatementLine, cst.Assign] | None,
    place: Placement,
) -> ValueKind:
    if final is not None:
        return value_kind(final[1].value, site.facts)
    incoming = _incoming_value(name, place)
    if incoming is not None:
        return value_kind(incoming, site.facts)
    kind = site.facts.name_kind(name)
    return ValueKind(tensor=kind) if kind.tensor else UNKNOWN


def _assign_branch(
    site: CondSite,
    side: str,
    statements: list[Statement],
    suite: cst.BaseSuite | cst.If | cst.Else | None,
    outputs: list[str],
    defined: set[str],
    place: Placement,
    passthrough: dict[str, str],
) -> Branch:
    commented = has_comment(suite) if suite is not None and not isinstance(suite, cst.If) else False
    expressions = (
        None
        if commented
        else _as_expressions(
            site.ctx, statements, outputs, site.tf, site.indent_of(place), passthrough
        )
    )
    if expressions is not None:
        return lambda_branch(expressions)
    if not statements and not outputs:
        return lambda_branch([])
    params = site.params(side, statements, outputs, defined)
    name = site.function_name(side, outputs, place)
    suite_template, leading = template(suite)
    returned = ", ".join(passthrough.get(n, n) for n in outputs) if outputs else None
    return function_branch(name, params, statements, returned, suite_template, leading)


def _is_elif(node: cst.If, place: Placement) -> bool:
    """An `elif` is the `orelse` of the `if` enclosing it."""
    return bool(place.compounds) and getattr(place.compounds[-1], "orelse", None) is node


def _augmented_expression(ctx: RuleContext, aug: cst.AugAssign) -> str:
    op = _AUG_TO_BINARY[type(aug.operator)]
    symbol = _OPERATOR_SYMBOLS[op]
    right = aug.value
    text = ctx.code(right).strip()
    atomic = isinstance(
        right,
        (
            cst.Name,
            cst.Attribute,
            cst.Call,
            cst.Subscript,
            cst.Integer,
            cst.Float,
            cst.SimpleString,
        ),
    ) or bool(right.lpar)
    if isinstance(right, cst.BinaryOperation):
        inner = _PRECEDENCE.get(type(right.operator), 0)
        atomic = atomic or inner > _PRECEDENCE.get(op, 0)
    if not atomic:
        text = f"({text})"
    return f"{ctx.code(aug.target).strip()} {symbol} {text}"


_OPERATOR_SYMBOLS = {
    cst.Add: "+",
    cst.Subtract: "-",
    cst.Multiply: "*",
    cst.Divide: "/",
    cst.FloorDivide: "//",
    cst.Modulo: "%",
    cst.Power: "**",
    cst.MatrixMultiply: "@",
}


def _as_expressions(
    ctx: RuleContext,
    statements: list[Statement],
    outputs: list[str],
    tf: str,
    indent: int,
    passthrough: dict[str, str],
) -> list[str] | None:
    """One expression per output when the branch is just `out = expr` /
    `out op= expr` lines that do not depend on each other; else None. A
    single output may be a multi-line `tf.cond` (a nested conditional an
    earlier round rewrote), laid out again for its depth."""
    if not outputs and statements:
        return None
    values: dict[str, str] = {}
    for statement_ in statements:
        if not isinstance(statement_, cst.SimpleStatementLine) or len(statement_.body) != 1:
            return None
        small = statement_.body[0]
        if (
            isinstance(small, cst.Assign)
            and len(small.targets) == 1
            and isinstance(small.targets[0].target, cst.Name)
        ):
            name = small.targets[0].target.value
            nested = len(outputs) == 1 and len(statements) == 1
            expression = (
                branch_value_code(ctx, small.value, tf, indent + 4)
                if nested
                else expression_code(ctx, small.value)
            )
            if expression is None:
                return None
            used = reads(small.value)
        elif isinstance(small, cst.AugAssign) and isinstance(small.target, cst.Name):
            name = small.target.value
            expression = _augmented_expression(ctx, small)
            used = reads(small.value) | {name}
        else:
            return None
        if walrus_target(small) is not None:
            return None  # a lambda would bind the `:=` name locally
        multi_line = "\n" in expression and not (len(outputs) == 1 and len(statements) == 1)
        if name not in outputs or name in values or used & set(values) or multi_line:
            return None
        values[name] = expression
    return [values.get(name, passthrough.get(name, name)) for name in outputs]


def _final_assignment(
    statements: Sequence[Statement], name: str
) -> tuple[cst.SimpleStatementLine, cst.Assign] | None:
    """The last top-level `name = value` of a branch, when it is the last
    thing that binds `name` there."""
    for statement_ in reversed(statements):
        if name not in assigned_names(cst.Module(body=[statement_])):
            continue
        if isinstance(statement_, cst.SimpleStatementLine) and len(statement_.body) == 1:
            small = statement_.body[0]
            if (
                isinstance(small, cst.Assign)
                and len(small.targets) == 1
                and isinstance(small.targets[0].target, cst.Name)
            ):
                return statement_, small
        return None
    return None


def _incoming_value(name: str, place: Placement) -> cst.BaseExpression | None:
    """The value of the last plain `name = value` that surely runs before
    the statement (None when unknown or a parameter)."""
    found: cst.BaseExpression | None = None
    for body, index in place.blocks:
        for statement_ in body[:index]:
            if name not in assigned_names(cst.Module(body=[statement_])):
                continue
            final = _final_assignment([statement_], name)
            found = final[1].value if final is not None else None
    return found


def met_tensor(site: CondSite, name: str, place: Placement, unstable: set[str]) -> str | None:
    """The floating-point tensor every later read of `name` meets in
    arithmetic or a comparison (`err * factor`), so that Python numbers
    assigned to `name` in the branches can take its dtype; None when some
    read is anything else. A read by a builtin that needs a Python value
    (`range(rounds)`) is refused: as a tensor it would need AutoGraph."""
    if any(isinstance(c, (cst.For, cst.While)) for c in place.compounds):
        return None  # the next iteration reads it too
    after = [site.uses_of(s) for body, index in place.blocks for s in body[index + 1 :]]
    for uses in after:
        for builtin in uses.host_calls.get(name, ()):
            raise Refusal(
                f"'{name}' is passed to `{builtin}(...)` after the `if`, which needs a "
                "Python value: as the result of `tf.cond` it would be a tensor, which only "
                "AutoGraph can handle there"
            )
    if any(name in uses.assigned for uses in after):
        return None
    operands = [other for uses in after for other in uses.operands.get(name, ())]
    reads_of_name = sum(uses.names.get(name, 0) for uses in after)
    if not operands or len(operands) < reads_of_name:
        return None  # some read is not arithmetic or a comparison
    rebound = set().union(*(uses.assigned for uses in after))
    defined = site.defined_before(place)
    anchors: list[str] = []
    for other in operands:
        anchor = dtype_anchor(other, site.facts, site.facts.resolver, unstable | rebound)
        if anchor is not None and anchor in defined and site.facts.kind(other).floating:
            anchors.append(anchor)
    if not anchors or len(anchors) != reads_of_name:
        return None
    return anchors[0]
