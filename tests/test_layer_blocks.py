"""TFR304 on a functional model built from a block function: the block's
layers are judged as the builder's own (`Dense`, `Conv2D`, the functional
`add`, and `Lambda` layers wrapping functions of the project that run only
TensorFlow ops): none reads `training`, so no finding. A block with batch
normalization, or a `Lambda` wrapping a function that runs a `Dropout`,
keeps the finding."""

from __future__ import annotations

from tests.layer_blocks import source

from tfrewrite.api import check_source


def _lines(**kwargs: str) -> list[int]:
    return [f.start.line for f in check_source(source(**kwargs), select=["TFR304"])]


def test_a_block_of_layers_that_ignore_training() -> None:
    assert _lines() == []


def test_a_block_with_batch_normalization_needs_training() -> None:
    assert _lines(last="layers.BatchNormalization()(out)") == [38]


def test_a_lambda_running_a_dropout_needs_training() -> None:
    dropping = "lambda parts: layers.Dropout(0.5)(parts[0])"
    assert _lines(wrapped=dropping) == [38]
