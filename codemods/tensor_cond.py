"""The `tensor_cond` codemod of an installed tfrewrite, for this clone's `.libcst.codemod.yaml`."""

from tfrewrite.codemods.tensor_cond import TensorCondCommand

__all__ = ["TensorCondCommand"]
