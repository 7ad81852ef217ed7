"""`tensor_cond`: re-exported from `tfrewrite.codemods` for this clone's LibCST config."""

from tfrewrite.codemods.tensor_cond import TensorCondCommand

__all__ = ["TensorCondCommand"]
