"""LibCST codemod commands over tfrewrite's rules.

`python -m libcst.tool codemod tensor_random.TensorRandomCommand PATH` runs the
same rule code as `tfrewrite fix --select TFR102,TFR106 PATH`: each command is
a thin entry point naming its rules, not a second implementation. Such a run
sees one file at a time, so facts that need other files (a loss compiled in
another module) are only seen by `tfrewrite fix`.
"""

from __future__ import annotations

from typing import ClassVar

import libcst as cst
from libcst.codemod import CodemodContext, SkipFile, VisitorBasedCodemodCommand

from tfrewrite.api import fix_source


class RuleCodemodCommand(VisitorBasedCodemodCommand):
    """Apply the fixes of `RULES` to one module."""

    RULES: ClassVar[tuple[str, ...]] = ()
    UNSAFE_FIXES: ClassVar[bool] = False

    def __init__(self, context: CodemodContext) -> None:
        super().__init__(context)

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        path = self.context.filename or "module.py"
        try:
            fixed = fix_source(
                tree.code, path=path, select=self.RULES, unsafe_fixes=self.UNSAFE_FIXES
            )
        except SyntaxError as err:
            raise SkipFile(str(err)) from err
        if fixed == tree.code:
            return tree
        return cst.parse_module(fixed)
