"""The train steps of `test_step_numpy_dtypes.py` run: where TFR302 refuses
to decorate, the decorated step raises on the float64 array the loop hands
it (so the refusal keeps a working script working); where it decorates, the
step traced reaches the losses of the original run eagerly, from the same
initial weights and data."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf
from test_step_numpy_dtypes import (
    LABELS_ASTYPE,
    LABELS_FLOAT64,
    ONE_HOT,
    RAND_CAST_FIRST,
    RAND_FLOAT32,
    RAND_LOSS_FUNCTION,
    RAND_LOSS_OBJECT,
    decorated,
)

from tfrewrite.api import fix_source_with_findings

from .equivalence import load_module

pytestmark = pytest.mark.tensorflow

EPOCHS = 2
STEPS = EPOCHS * 4


@pytest.mark.parametrize(
    "source",
    [
        pytest.param(LABELS_FLOAT64, id="labels-sliced-in-the-call"),
        pytest.param(LABELS_ASTYPE, id="labels-astype-float64"),
    ],
)
def test_refused_step_would_raise_traced(source: str) -> None:
    rewritten, fixed, _ = fix_source_with_findings(source, "train.py", ["TFR302"], True)
    assert fixed == [] and rewritten == source
    eager = load_module(source).train(EPOCHS)
    assert len(eager) == STEPS and all(np.isfinite(eager))
    with pytest.raises(TypeError, match="float64"):
        load_module(decorated(source)).train(EPOCHS)


@pytest.mark.parametrize(
    ("source", "unsafe"),
    [
        pytest.param(RAND_LOSS_FUNCTION, True, id="unsafe-loss-function"),
        pytest.param(RAND_LOSS_OBJECT, False, id="safe-loss-object"),
        pytest.param(RAND_FLOAT32, False, id="safe-float32-arrays"),
        pytest.param(RAND_CAST_FIRST, False, id="safe-cast-first"),
        pytest.param(ONE_HOT, False, id="safe-int64-indices"),
    ],
)
def test_decorated_step_reaches_the_eager_losses(source: str, unsafe: bool) -> None:
    rewritten, fixed, remaining = fix_source_with_findings(source, "train.py", ["TFR302"], unsafe)
    assert [f.code for f in fixed] == ["TFR302"] and remaining == []
    original = load_module(source)
    eager = original.train(EPOCHS)
    assert not isinstance(original.train_step, tf.types.experimental.PolymorphicFunction)
    module = load_module(rewritten)
    traced = module.train(EPOCHS)
    assert module.train_step.experimental_get_tracing_count() >= 1
    assert len(eager) == len(traced) == STEPS
    np.testing.assert_allclose(traced, eager, rtol=1e-6, atol=1e-7)
    for before, after in zip(
        original.model.trainable_variables, module.model.trainable_variables, strict=True
    ):
        np.testing.assert_allclose(after.numpy(), before.numpy(), rtol=1e-6, atol=1e-7)


def test_float64_indices_are_why_the_decoration_is_unsafe() -> None:
    """Eagerly `tf.one_hot` converts the float64 array to indices; traced,
    the step its unsafe fix decorates raises on it."""
    source = ONE_HOT.replace("np.array([0, 1, 0, 0, 1, 0, 0, 0])", "np.zeros(8)")
    rewritten, fixed, _ = fix_source_with_findings(source, "train.py", ["TFR302"], True)
    assert [f.code for f in fixed] == ["TFR302"]
    assert len(load_module(source).train(EPOCHS)) == STEPS
    with pytest.raises(TypeError, match="float64"):
        load_module(rewritten).train(EPOCHS)
