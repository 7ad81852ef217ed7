"""Verify an original and a rewrite of one small module the way `tfrewrite
verify` does: the changed functions and training loops are found
(`pair_targets`), then each target is verified in this process."""

from __future__ import annotations

import textwrap

from tfrewrite.verify.checks import Options, Request, verify
from tfrewrite.verify.settings import VerifySettings
from tfrewrite.verify.targets import pair_targets
from tfrewrite.workspace.line_names import place_lines

# Few samples, no XLA: for tests whose cases are training loops and callers.
FAST = Options(samples=120, search=48, xla=False)


def verify_pair(
    original: str,
    rewrite: str,
    options: Options,
    path: str = "case.py",
    callers: bool = False,
) -> list[dict]:
    """The results of every target the rewrite changes (dedented sources;
    the module is named after `path`); with `callers`, a target's caller in
    the module gives its arguments, as the command does."""
    original, rewrite = textwrap.dedent(original), textwrap.dedent(rewrite)
    module = path.removesuffix(".py")
    results = []
    for target in pair_targets(path, module, original, rewrite, VerifySettings()):
        assert target.problem is None, target.problem
        results.append(
            verify(
                Request(
                    qualname=target.qualname,
                    original_source=target.original_source,
                    rewrite_source=target.rewrite_source,
                    path=path,
                    options=options,
                    loop=target.loop,
                    caller=target.caller if callers else None,
                )
            )
        )
    assert results, "nothing to verify"
    return results


def failures(results: list[dict]) -> str:
    """Each failed check of `results`, one line each."""
    return "\n".join(
        f"{r['function']}: {c['name']}: {c['detail']}"
        for r in results
        for c in r["checks"]
        if not c["ok"]
    )


def verify_with_callers(original: str, rewrite: str, options: Options = FAST) -> list[dict]:
    """`verify_pair` with the targets' callers giving their arguments."""
    return verify_pair(original, rewrite, options, callers=True)


def failed(result: dict) -> set[str]:
    """The names of the checks `result` failed."""
    return {c["name"] for c in result["checks"] if not c["ok"]}


def placed_text(result: dict) -> str:
    """The result's warnings and inputs, with the lines they name as the
    report names them (`verify_targets` does this for the command)."""
    return place_lines("\n".join(result["warnings"] + result["inputs"]))
