"""Builtin `max` / `min` on tensors, rewritten into `tf.maximum` / `tf.minimum`.

`max(a, b)` compares its operands with `>`, which needs a Python bool: an
eager scalar tensor has one, a symbolic tensor does not, so traced code raises
`OperatorNotAllowedInGraphError` (AutoGraph does not convert `max`/`min`).
The element-wise TensorFlow op gives the same value for the scalars the
builtin could compare; `max(x)` over a 1-D tensor is `tf.reduce_max(x)`.
"""

from __future__ import annotations

import libcst as cst

from tfrewrite.facts.context import RuleContext
from tfrewrite.facts.import_requests import ImportRequest
from tfrewrite.facts.tensor_kinds import is_python_number
from tfrewrite.findings import Applicability
from tfrewrite.rewrite.fixes import CstFix, NodeEdit, Violation
from tfrewrite.rewrite.numpy_operands import Operands, extremum_operands, is_python_float
from tfrewrite.rewrite.traced_calls import Refusal


def extremum_violation(
    ctx: RuleContext,
    call: cst.Call,
    operands: Operands,
    tf: str,
    imports: tuple[ImportRequest, ...],
) -> Violation:
    """The finding for `max(...)`/`min(...)` with a tensor operand, with its fix
    or the reason there is none."""
    name = ctx.code(call.func)
    message = (
        f"builtin `{name}(...)` on a tensor in traced code: it compares tensors as Python "
        "bools, which raises `OperatorNotAllowedInGraphError` when traced"
    )
    try:
        code, unsafe = _rewrite(ctx, call, operands, tf)
    except Refusal as refusal:
        return Violation(call, f"{message}; not rewritten: {refusal}")
    replacement = cst.parse_expression(code).with_changes(lpar=call.lpar, rpar=call.rpar)
    op = code.split("(", 1)[0]
    if unsafe:
        fix = CstFix(
            f"Use `{op}` (unsafe: {'; '.join(unsafe)})",
            (NodeEdit(call, replacement),),
            imports,
            Applicability.UNSAFE,
        )
    else:
        fix = CstFix(f"Use `{op}`", (NodeEdit(call, replacement),), imports)
    return Violation(call, message, fix)


def _rewrite(
    ctx: RuleContext, call: cst.Call, operands: Operands, tf: str
) -> tuple[str, list[str]]:
    builtin = ctx.code(call.func)
    for arg in call.args:
        if arg.star:
            raise Refusal(
                f"the unpacked argument `{arg.star}{ctx.code(arg.value)}` hides the operands"
            )
        if arg.keyword is not None:
            raise Refusal(
                f"`{arg.keyword.value}=` has no TensorFlow counterpart (`{builtin}` with a key "
                "or a default compares Python values)"
            )
    values = extremum_operands(call)
    if len(call.args) == 1 and isinstance(call.args[0].value, (cst.List, cst.Tuple)):
        if any(isinstance(e, cst.StarredElement) for e in call.args[0].value.elements):
            raise Refusal("a starred element hides the operands")
    unsafe: list[str] = []
    if len(values) == 1:
        # `max(x)` iterates over `x`: over a 1-D tensor, its largest element.
        reduce = "reduce_max" if builtin == "max" else "reduce_min"
        kind = operands.kind(values[0])
        if kind.boolean:
            raise Refusal(f"`{ctx.code(values[0])}` is boolean; `{tf}.{reduce}` takes numbers")
        return f"{tf}.{reduce}({ctx.code(values[0])})", unsafe
    if not values:
        raise Refusal("no operands")
    kinds = [operands.kind(value) for value in values]
    seen = {
        ("floating" if k.floating else "integer" if k.integer else "boolean"): v
        for v, k in zip(values, kinds, strict=True)
        if k.tensor and (k.floating or k.integer or k.boolean)
    }
    if len(seen) > 1:
        (first_kind, first), (second_kind, second) = list(seen.items())[:2]
        raise Refusal(
            f"`{ctx.code(first)}` is {first_kind} and `{ctx.code(second)}` {second_kind}: "
            f"Python returns one of them unchanged, `{tf}.maximum` needs one dtype"
        )
    if "boolean" in seen:
        raise Refusal(f"`{ctx.code(seen['boolean'])}` is boolean; `{tf}.maximum` takes numbers")
    floats = [v for v in values if is_python_float(v)]
    for value, kind in zip(values, kinds, strict=True):
        if kind.tensor:
            if kind.integer and floats:
                raise Refusal(
                    f"`{ctx.code(value)}` is an integer tensor and `{ctx.code(floats[0])}` a "
                    f"Python float: Python returns either unchanged, `{tf}.maximum` needs one dtype"
                )
            if not (kind.floating or kind.integer) and floats:
                unsafe.append(
                    f"the dtype of `{ctx.code(value)}` is not known: an integer tensor cannot "
                    f"meet the Python float `{ctx.code(floats[0])}` in `{tf}.maximum`"
                )
        elif not is_python_number(value):
            unsafe.append(f"`{ctx.code(value)}` is not known to be a tensor or a Python number")
    op = f"{tf}.maximum" if builtin == "max" else f"{tf}.minimum"
    # A leading Python number would take TensorFlow's default dtype: the
    # first tensor goes first (the op is symmetric).
    first = next(i for i, k in enumerate(kinds) if k.tensor)
    ordered = [values[first], *values[:first], *values[first + 1 :]]
    code = ctx.code(ordered[0])
    for value in ordered[1:]:
        code = f"{op}({code}, {ctx.code(value)})"
    return code, unsafe
