"""Measured for `tests/test_relayed_loop_numbers.py`: a loop's changing
index handed through a plain function to a `tf.function` traces it once
per index; passed as a tensor it traces once, with the same images."""

from __future__ import annotations

import numpy as np
import pytest
from tests.test_relayed_loop_numbers import SCRIPT

from .equivalence import load_module

pytestmark = pytest.mark.tensorflow


def _images_and_traces(channel: str) -> tuple[list[np.ndarray], int]:
    module = load_module(SCRIPT.replace("CHANNEL", channel))
    return [i.numpy() for i in module.images], module.ascent_step.experimental_get_tracing_count()


def test_each_index_traces_anew_and_a_tensor_does_not() -> None:
    python_images, python_traces = _images_and_traces("channel")
    tensor_images, tensor_traces = _images_and_traces("tf.constant(channel)")
    assert python_traces == 3
    assert tensor_traces == 1
    for python, tensor in zip(python_images, tensor_images, strict=True):
        np.testing.assert_allclose(python, tensor, rtol=1e-6)
