"""LibCST codemod commands over tfrewrite's rules, installed with tfrewrite.

List this package in your `.libcst.codemod.yaml` (`modules: ['tfrewrite.codemods']`)
and run `python -m libcst.tool codemod tensor_print.TensorPrintCommand PATH`.
"""
