"""What each parameter of a function holds for one call of it.

Facts that follow a call of one of the file's functions into its body (what
a helper returns: a tensor, a dataset batched with `drop_remainder`) read its
parameters as the call binds them, the way Python does: positional
arguments in order, keywords by name, the parameter's default for what the
call leaves out. A value the call hides (`*args`, `**options` spread at the
call, a function's own `*args`/`**kwargs`) is unknown, and so is every
parameter of a call that does not fit the signature (it raises at run time).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import libcst as cst


@dataclass(frozen=True)
class BoundValue:
    """What one parameter holds for one call.

    `value` is the argument passed (`passed`: read where the call is) or the
    parameter's default (read where the function is defined, at module
    level for a module function); None when the call does not show it."""

    value: cst.BaseExpression | None
    passed: bool


_UNKNOWN = BoundValue(None, passed=True)


def bind_arguments(function: cst.FunctionDef, args: Sequence[cst.Arg]) -> dict[str, BoundValue]:
    """Every named parameter of `function` (not `*args`/`**kwargs`) bound as
    the call with `args` binds it. Unknown throughout when the call does not
    fit the signature: too many positional arguments, a keyword it does not
    take, a parameter given twice or a required one left out."""
    params = function.params
    positional = [*params.posonly_params, *params.params]
    named = [*positional, *params.kwonly_params]
    keyword_names = {p.name.value for p in [*params.params, *params.kwonly_params]}
    unknown = {p.name.value: _UNKNOWN for p in named}
    bound: dict[str, BoundValue] = {}
    spread_positional = spread_keywords = False
    index = 0
    for arg in args:
        if arg.star == "*":
            spread_positional = True
        elif arg.star == "**":
            spread_keywords = True
        elif arg.keyword is None:
            if spread_positional:
                return unknown  # after `*args` the position is not known
            if index >= len(positional):
                if not isinstance(params.star_arg, cst.Param):
                    return unknown
                continue  # gathered into `*args`
            bound[positional[index].name.value] = BoundValue(arg.value, passed=True)
            index += 1
        else:
            name = arg.keyword.value
            if name in bound:
                return unknown
            if name not in keyword_names:
                if not isinstance(params.star_kwarg, cst.Param):
                    return unknown
                continue  # gathered into `**kwargs`
            bound[name] = BoundValue(arg.value, passed=True)
    for param in named:
        name = param.name.value
        if name in bound:
            continue
        if spread_positional or spread_keywords:
            bound[name] = _UNKNOWN  # maybe in the spread arguments
        elif param.default is not None:
            bound[name] = BoundValue(param.default, passed=False)
        else:
            return unknown
    return bound
