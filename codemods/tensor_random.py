"""`tensor_random`: re-exported from `tfrewrite.codemods` for this clone's LibCST config."""

from tfrewrite.codemods.tensor_random import TensorRandomCommand

__all__ = ["TensorRandomCommand"]
