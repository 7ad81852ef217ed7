"""The `tensor_random` codemod of an installed tfrewrite, for this clone's `.libcst.codemod.yaml`."""

from tfrewrite.codemods.tensor_random import TensorRandomCommand

__all__ = ["TensorRandomCommand"]
