"""`train_step`: re-exported from `tfrewrite.codemods` for this clone's LibCST config."""

from tfrewrite.codemods.train_step import TrainStepCommand

__all__ = ["TrainStepCommand"]
