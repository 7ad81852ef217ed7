"""The loop `tests/test_keras_tensor_loops.py` reports, run: the model's
`call` loops over a helper's tensor; eagerly it runs, Keras 3's `fit`
traces `call` without AutoGraph and raises, while the same function under
`tf.function` (AutoGraph on) runs. The rule has no fix: the finding is the
result."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest

from .equivalence import load_file_module

pytestmark = pytest.mark.tensorflow


def _model(folder: Path):
    from tests.test_keras_tensor_loops import MODEL

    source = MODEL.format(
        target="end", iterable="self.ends(inputs)", body="tf.cast(end, tf.float32)"
    )
    return load_file_module(textwrap.dedent(source), folder).Pooled()


def test_the_loop_runs_eagerly_and_under_autograph_and_raises_in_fit(tmp_path: Path) -> None:
    import tensorflow as tf

    x = np.array([[1.0, 2.0], [1.0, 3.0], [2.0, 4.0]], np.float32)
    model = _model(tmp_path)
    eager = model(x)
    traced = tf.function(model.call)(tf.constant(x))
    np.testing.assert_allclose(eager.numpy(), traced.numpy(), rtol=1e-6)
    model.compile(optimizer="sgd", loss="mse")
    with pytest.raises(tf.errors.OperatorNotAllowedInGraphError):
        model.fit(x, np.ones((3, 1), np.float32), epochs=1, verbose=0)
