"""Which functions to verify, and how.

A *pair* is a file before and after a rewrite. Every function whose source
text differs is a candidate. A function verification can call — loss-shaped
`(y_true, y_pred[, sample_weight])`, or with inputs configured — is verified
itself; a changed helper that cannot be called on synthesised inputs is
verified through the callable functions that use it. In the `verify PATH`
mode, traced functions the rewrite leaves alone are still checked for
divergence in the original (traced against eager).

Standard library plus the shared `ast` index; no TensorFlow.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from tfrewrite.verify.inputs import Spec
from tfrewrite.verify.loader import LoadError, find_definition, function_sources, references
from tfrewrite.verify.settings import VerifySettings


@dataclass
class Target:
    path: str  # as shown to the user
    qualname: str
    line: int
    original_source: str
    rewrite_source: str | None  # None: check the original alone for divergence
    module: str
    reason: str
    specs: dict[str, Spec] | None = None  # configured inputs
    problem: str | None = None  # why it cannot be verified (then it is "not proven")
    covers: tuple[str, ...] = ()  # the changed functions this target vouches for
    harness: str | None = None  # "module:build" for a train step


def changed_functions(original: str, rewrite: str) -> list[str]:
    """Qualified names of functions present in both whose source differs."""
    before, after = function_sources(original), function_sources(rewrite)
    return [name for name in before if name in after and before[name] != after[name]]


def _definition_line(source: str, qualname: str) -> int:
    try:
        return find_definition(ast.parse(source), qualname).lineno
    except (LoadError, SyntaxError):
        return 1


def loss_shaped(source: str, qualname: str) -> bool:
    """Two required positional parameters (after `self`) and nothing else required."""
    try:
        node = find_definition(ast.parse(source), qualname)
    except (LoadError, SyntaxError):
        return False
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    if (
        "." in qualname
        and positional
        and not any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in node.decorator_list)
    ):
        positional = positional[1:]
    required = len(positional) - len(args.defaults)
    required_kw = sum(1 for d in args.kw_defaults if d is None)
    return required == 2 and required_kw == 0


def _callers(source: str, helper: str) -> list[str]:
    top = helper.split(".")[0]
    return sorted(q for q, names in references(source).items() if top in names and q != helper)


def pair_targets(
    path: str,
    module: str,
    original: str,
    rewrite: str,
    settings: VerifySettings,
    traced: dict[str, str] | None = None,
) -> list[Target]:
    """Targets for one file and its rewrite. `traced` (qualname -> reason)
    adds original-only divergence checks for traced functions left unchanged."""
    targets: dict[str, Target] = {}

    def callable_here(qualname: str) -> bool:
        return (
            settings.inputs_for(module, qualname) is not None
            or settings.harness_for(module, qualname) is not None
            or loss_shaped(original, qualname)
        )

    def add(
        qualname: str,
        rewrite_source: str | None,
        reason: str,
        problem: str | None = None,
        covers: str = "",
    ) -> None:
        if qualname in targets and (
            targets[qualname].rewrite_source is not None or rewrite_source is None
        ):
            if covers and covers not in targets[qualname].covers:
                targets[qualname].covers += (covers,)
            return
        targets[qualname] = Target(
            path,
            qualname,
            _definition_line(original, qualname),
            original,
            rewrite_source,
            module,
            reason,
            settings.inputs_for(module, qualname),
            problem,
            (covers,) if covers else (),
            settings.harness_for(module, qualname),
        )

    for name in changed_functions(original, rewrite):
        if callable_here(name):
            add(name, rewrite, "changed by the rewrite", covers=name)
            continue
        callers = [c for c in _callers(rewrite, name) if callable_here(c)]
        for caller in callers:
            add(caller, rewrite, f"calls `{name}`, which the rewrite changed", covers=name)
        if not callers:
            add(
                name,
                rewrite,
                "changed by the rewrite",
                problem=f"no inputs: `{name}` is not loss-shaped and nothing verifiable calls it; "
                "give its "
                f'parameters in [tool.tfrewrite.verify] inputs."{module}:{name}"',
                covers=name,
            )
    for name, reason in (traced or {}).items():
        if name not in targets and callable_here(name):
            add(name, None, reason)
    return sorted(targets.values(), key=lambda t: (t.path, t.line))
