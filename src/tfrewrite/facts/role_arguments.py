"""The arguments of a call that play a role the called function gives them.

The project facts tell a module which parameters of the project functions
it calls have a role (`callee_facts`: a TensorFlow shape, a mean). A rule
asks here which arguments of one call bind those parameters, as Python
binds them: by position, then by keyword.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import libcst as cst

    from tfrewrite.facts.context import RuleContext


def role_arguments(
    ctx: RuleContext,
    known: dict[str, tuple[tuple[str, ...], frozenset[str]]],
    call: cst.Call,
    owner: str | None = None,
) -> list[tuple[cst.Arg, str]]:
    """The arguments of `call`, a call of a project function `known` lists
    (`ModuleIndex.callee_shape_params` or `callee_averaged_params`), that
    bind a parameter of that role, with the parameter each binds. `owner`:
    the class of the method the call is in (`RuleContext.pass1_names`)."""
    if not known:
        return []
    found = next((known[n] for n in ctx.pass1_names(call.func, owner) if n in known), None)
    if found is None or any(arg.star for arg in call.args):
        return []
    params, role_params = found
    result = []
    positional = [arg for arg in call.args if arg.keyword is None]
    for arg, param in zip(positional, params, strict=False):
        if param in role_params:
            result.append((arg, param))
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value in role_params:
            result.append((arg, arg.keyword.value))
    return result
