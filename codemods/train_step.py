"""The `train_step` codemod of an installed tfrewrite, for this clone's `.libcst.codemod.yaml`."""

from tfrewrite.codemods.train_step import TrainStepCommand

__all__ = ["TrainStepCommand"]
