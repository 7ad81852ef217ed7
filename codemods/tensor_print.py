"""`tensor_print`: re-exported from `tfrewrite.codemods` for this clone's LibCST config."""

from tfrewrite.codemods.tensor_print import TensorPrintCommand

__all__ = ["TensorPrintCommand"]
