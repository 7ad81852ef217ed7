"""The `tensor_print` codemod of an installed tfrewrite, for this clone's `.libcst.codemod.yaml`."""

from tfrewrite.codemods.tensor_print import TensorPrintCommand

__all__ = ["TensorPrintCommand"]
