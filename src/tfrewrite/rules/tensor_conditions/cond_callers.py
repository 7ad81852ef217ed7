"""Conditions on parameters that some caller passes a Python value.

`if priority_exp == 0:` in a traced method is a Python `if` when the method is
traced with a Python number (`self.sample(batch, priority_exp=0.6)`): the
comparison is a Python bool and tracing picks the branch, which is right.
Rewritten as `tf.cond(priority_exp == 0, ...)`, the same call raises
`TypeError: pred must not be a Python bool`. The project facts say which
parameters call sites pass Python values (`TracedFunction.python_params`);
those are never counted as tensors, so when every caller passes Python values
the condition is not a tensor condition and nothing is reported.

When callers are mixed (one passes a Python number, another a tensor), the
condition is a tensor in the second trace and needs AutoGraph there, while a
`tf.cond` would break the first: reported without a fix, naming the Python
caller and the tensor one (`TracedFunction.mixed_callers`, from every call
site of the project).
"""

from __future__ import annotations

import libcst as cst

from tfrewrite.facts.context import FunctionScope, RuleContext
from tfrewrite.facts.tensors import TensorFacts
from tfrewrite.facts.walk import iter_expression
from tfrewrite.rules.tensor_conditions.cond_condition import ConditionTranslator
from tfrewrite.rules.tensor_conditions.cond_flow import reads


def python_caller_refusal(
    ctx: RuleContext,
    scope: FunctionScope,
    facts: TensorFacts,
    tf: str,
    test: cst.BaseExpression,
    at: cst.CSTNode,
) -> str | None:
    """The refusal for a condition that is a tensor only for the callers
    passing tensors, when another caller passes a Python value for a
    parameter it reads; None when no caller in the project passes a tensor
    (then the condition is a Python bool wherever it is traced)."""
    traced = scope.runs_traced
    if traced is None or not traced.python_params:
        return None
    named = sorted(reads(test) & traced.python_params)
    if not named:
        return None
    mixed = {name: (python_at, tensor_at) for name, python_at, tensor_at in traced.mixed_callers}
    named = [name for name in named if name in mixed]
    if not named:
        return None
    if not _tensor_when(ctx, scope, facts, tf, test, at, named):
        return None  # `p is None`, `isinstance(p, float)`: Python for tensors too
    name = named[0]
    function = scope.qualname.rpartition(".")[2]
    python_at, tensor_at = mixed[name]
    return (
        f"`{function}` is called with a Python value for `{name}` at {python_at}: the "
        f"condition is a Python bool there, and `tf.cond` rejects one; at {tensor_at} it is "
        "called with a tensor, where the `if` needs AutoGraph"
    )


def _tensor_when(
    ctx: RuleContext,
    scope: FunctionScope,
    facts: TensorFacts,
    tf: str,
    test: cst.BaseExpression,
    at: cst.CSTNode,
    params: list[str],
) -> bool:
    """Whether `test` is a tensor condition in the trace where `params` are
    tensors (the other parameters as the facts know them)."""
    hypothesis = facts.assuming_tensors(params)
    translator = ConditionTranslator(hypothesis, tf, ctx.code, assume_scalar=True)
    return translator.translate(test, at).tensor


def some_path_refusal(
    ctx: RuleContext,
    facts: TensorFacts,
    tf: str,
    test: cst.BaseExpression,
    at: cst.CSTNode,
) -> str | None:
    """The refusal for a condition that is a tensor only where a name it
    reads holds one (`TensorFacts.some_paths`), None when no path makes it
    one. `facts` are the likely facts, which found no tensor there."""
    paths = facts.some_paths
    if paths is facts.likely:
        return None
    translator = ConditionTranslator(paths, tf, ctx.code, assume_scalar=True)
    if not translator.translate(test, at).tensor:
        return None
    names = sorted(
        {
            node.value
            for node in iter_expression(test)
            if isinstance(node, cst.Name)
            and paths.kind_at(node, at).tensor
            and not facts.kind_at(node, at).tensor
        }
    )
    listed = ", ".join(f"`{name}`" for name in names) or "a name it reads"
    verb = "is" if len(names) == 1 else "are"
    return (
        f"{listed} {verb} a tensor on some paths to it and a Python value on others: the "
        "condition is a Python bool in the traces taking the other paths, and `tf.cond` "
        "rejects one"
    )
