"""TFR304 in the methods of a wrapper object a train step's class holds:
`self._q1_model(x)` in `TD3Model.q1`, which `TD3Agent.train_q` runs in its
tape as `self._model.q1(...)` while it trains `_q1_model` (the project fact
`TracedFunction.tapes`, from `facts.tape_reach`). The step is in another
class, often another module, and the same method serves acting and target
networks (`self._target.q1(...)`), so the finding has no fix: the method
needs a `training` argument the step passes."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst

from tfrewrite.facts.context import RuleContext
from tfrewrite.facts.traced_function import TapeUse
from tfrewrite.facts.walk import iter_with_ancestors


@dataclass(frozen=True)
class HeldModelCall:
    """A call of a model attribute of `self` (`self._q1_model(x)`) in a
    method some train step's tape runs while training that model."""

    call: cst.Call
    ancestors: tuple[cst.CSTNode, ...]
    label: str  # `self._q1_model`
    owner: str | None  # the method's class
    method: str  # its qualname
    use: TapeUse  # the first step that trains the model there

    def words(self) -> tuple[str, str]:
        """Where it is called, and why there is no fix (`_missing_flag`)."""
        use = self.use
        called = (
            f"is called without `training=True` in `{self.method}`, which the train step "
            f"`{use.step}` ({use.where}) runs in its tape as `{use.via}(...)` while it trains "
            f"`{self.label}`"
        )
        refusal = (
            f"`{self.method}` is a method other code may call outside the tape too: give it a "
            f"`training` argument that `{use.step}` passes"
        )
        return called, refusal


def held_model_calls(ctx: RuleContext) -> Iterator[HeldModelCall]:
    """Each call of a `self` attribute the tapes running its method train
    (whether it is a model call, TFR304's `_is_model_call` decides)."""
    for function in ctx.functions:
        traced = function.runs_traced
        if traced is None or not traced.tapes:
            continue
        owner = ctx.class_of(function)
        for node, ancestors in iter_with_ancestors(function.node.body):
            if not (isinstance(node, cst.Call) and node.args):
                continue
            if any(isinstance(a, (cst.FunctionDef, cst.Lambda)) for a in ancestors):
                continue  # a nested function runs through its own calls
            func = node.func
            if not (
                isinstance(func, cst.Attribute)
                and isinstance(func.value, cst.Name)
                and func.value.value == "self"
            ):
                continue
            attr = func.attr.value
            use = next((u for u in traced.tapes if attr in u.trained), None)
            if use is not None:
                yield HeldModelCall(
                    node,
                    ancestors,
                    f"self.{attr}",
                    owner[0] if owner is not None else None,
                    function.qualname,
                    use,
                )
