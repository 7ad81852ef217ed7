"""The tensors TFR110 reports as given to a Keras 3 layer's `training`: the
code runs eagerly and raises traced, with AutoGraph on and off. Choosing
between the two calls with `tf.cond`, as the finding suggests, runs traced
and computes what the original computes eagerly, in either mode."""

from __future__ import annotations

from pathlib import Path

import pytest
import tensorflow as tf
from tests.tf.equivalence import assert_same, load_file_module, run_eagerly
from tests.training_flags import FREEZING_NORMALIZATION, MODE_VARIABLE

pytestmark = pytest.mark.tensorflow

X = tf.constant([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]])


@pytest.mark.parametrize("autograph", [True, False])
@pytest.mark.parametrize(
    ("source", "name"),
    [(MODE_VARIABLE, "reconstruct"), (FREEZING_NORMALIZATION, "normalized")],
)
def test_eager_runs_and_traced_raises(
    tmp_path: Path, source: str, name: str, autograph: bool
) -> None:
    if not autograph:
        source = source.replace("@tf.function", "@tf.function(autograph=False)")
    module = load_file_module(source, tmp_path)
    function = getattr(module, name)
    run_eagerly(function, X)
    with pytest.raises(tf.errors.OperatorNotAllowedInGraphError):
        function(X)


CHOSEN = MODE_VARIABLE.replace(
    "return self.decoder(self.encoder(x, training=self.training_mode))",
    """return self.decoder(
            tf.cond(
                self.training_mode,
                lambda: self.encoder(x, training=True),
                lambda: self.encoder(x, training=False),
            )
        )""",
)


@pytest.mark.parametrize("mode", [False, True])
def test_choosing_between_the_calls_with_tf_cond_runs_traced(tmp_path: Path, mode: bool) -> None:
    original = load_file_module(MODE_VARIABLE, tmp_path)
    chosen = load_file_module(CHOSEN, tmp_path)
    tf.random.set_seed(0)
    original.model(X)  # build both with the same weights
    chosen.model(X)
    chosen.model.set_weights(original.model.get_weights())
    original.model.training_mode.assign(mode)
    chosen.model.training_mode.assign(mode)
    expected = run_eagerly(original.reconstruct, X)
    got = chosen.reconstruct(X)
    if not mode:
        assert_same(expected, got)
        return
    # Dropout's draws differ between the two: the traced call must drop as
    # the eager one does, unlike the same model in inference mode.
    inference = chosen.model.decoder(chosen.model.encoder.dense(X))
    assert got.shape == expected.shape and got.dtype == expected.dtype
    for result in (expected, got):
        assert not tf.reduce_all(tf.abs(result - inference) < 1e-6)
