"""A host value that a rewrite turns into a tensor, judged by its uses.

TFR104 turns `np.mean(x)` (a NumPy value) into `tf.reduce_mean(x)`, TFR105
turns `x.numpy()` into `x`: every place the value went now receives a tensor.
`follow` asks `value_uses` where it goes and decides, AutoGraph style:

- a use that needs a Python or NumPy value (`int(v)`, `range(v)`, `.tolist()`)
  refuses the rewrite with the reason;
- a conversion (`tf.constant(v)`, `np.asarray(v)`, `v.astype(d)`) is
  rewritten with it (`v`, `tf.cast(v, d)`); one right around the value is
  folded into the replacement;
- a use that cannot be followed (passed to a project function, returned to a
  caller, stored on an attribute) or that decides Python control flow makes
  the fix unsafe, with the reason;
- the tensors the value meets in arithmetic or comparisons are collected: a
  NumPy scalar takes their dtype there, so a cast should too.

Calls the same rule rewrites in the same run (`np.mean(np.square(d))`:
the square's value goes into `np.mean`, rewritten too) are not blockers:
`rewritten_here` says which.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import libcst as cst

from tfrewrite.facts.autograph import autograph_off
from tfrewrite.facts.context import FunctionScope, RuleContext
from tfrewrite.facts.tensors import TensorFacts
from tfrewrite.rewrite.fixes import NodeEdit
from tfrewrite.rewrite.traced_calls import Refusal
from tfrewrite.rewrite.value_uses import (
    Use,
    UseKind,
    ValueUses,
    Wrapper,
    first_of,
    wrapper_replacement,
)


@dataclass
class Followed:
    """What the uses of a value ask of its rewrite."""

    uses: list[Use]
    # A conversion right around the value: the fix replaces it instead.
    folded: Wrapper | None = None
    # Conversions elsewhere (of a name the value is bound to): rewritten too.
    wrapper_edits: list[NodeEdit] = field(default_factory=list)
    unsafe: list[str] = field(default_factory=list)
    # Proven tensors the value meets; operands of unknown dtype it meets.
    meets: list[cst.BaseExpression] = field(default_factory=list)
    unknown_meets: list[cst.BaseExpression] = field(default_factory=list)


def follow(
    ctx: RuleContext,
    function: FunctionScope | None,
    facts: TensorFacts,
    node: cst.BaseExpression,
    ancestors: Sequence[cst.CSTNode],
    noun: str,
    tf: str,
    rewritten_here: Callable[[cst.CSTNode], bool] = lambda _: False,
) -> Followed:
    """The uses of the value `node` (with its `ancestors`, outermost first)
    once it is a tensor; `Refusal` when one needs a host value."""
    if function is None:
        raise Refusal("the function around the value is not known")
    uses = [
        use
        for use in ValueUses(ctx, function, facts).of_expression(node, ancestors)
        if not rewritten_here(use.node)
    ]
    followed = Followed(uses)
    if uses and uses[0].kind is UseKind.WRAPPER:
        wrapper = uses[0].wrapper
        if wrapper is not None and wrapper.value is node:
            followed.folded = wrapper
            uses = uses[1:]
    blocker = first_of(uses, UseKind.BLOCKER)
    if blocker is not None:
        raise Refusal(f"{blocker.subject(noun)} {blocker.reason}")
    condition = first_of(uses, UseKind.AUTOGRAPH)
    if condition is not None:
        off = autograph_off(ctx, function)
        if off is not None:
            raise Refusal(
                f"{condition.subject(noun)} {condition.reason}: a tensor there needs AutoGraph, "
                f"and {off}"
            )
        followed.unsafe.append(
            f"{condition.subject(noun)} {condition.reason}: a tensor there needs AutoGraph"
        )
    unknown = first_of(uses, UseKind.UNKNOWN)
    if unknown is not None:
        followed.unsafe.append(f"{unknown.subject(noun)} {unknown.reason}")
    for use in uses:
        if use.kind is UseKind.WRAPPER and use.wrapper is not None:
            followed.wrapper_edits.append(
                NodeEdit(use.wrapper.call, wrapper_replacement(use.wrapper, ctx, tf))
            )
        elif use.meets is not None and not use.boolean:
            if use.kind is UseKind.TENSOR:
                followed.meets.append(use.meets)
            elif use.kind is UseKind.DTYPE:
                followed.unknown_meets.append(use.meets)
    return followed
