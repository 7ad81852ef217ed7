"""A lambda a module-level name holds, handed to `Dataset.map`, under
TensorFlow: the map traces it once, so the NumPy draw in the function its
`tf.cond` branch calls is frozen (every element gets the same noise); the
rewrite draws with TensorFlow, fresh for every element, as eager calls do."""

from __future__ import annotations

import numpy as np
import pytest
from tests.test_traced_contexts_keras import AUGMENT

from tfrewrite.api import fix_source

from .equivalence import load_module

pytestmark = pytest.mark.tensorflow

# Every element takes the jitter branch, so the noise is what differs.
ALWAYS = AUGMENT.replace("tf.random.uniform([]) < 0.5", "tf.random.uniform([]) < 2.0")


def _noise(source: str) -> list[float]:
    module = load_module(source)
    return [float(x[0]) - 1.0 for x, _ in module.ds]


def test_the_map_freezes_the_draw_and_the_rewrite_draws_per_element() -> None:
    frozen = _noise(ALWAYS)
    assert len(set(frozen)) == 1  # drawn once, while tracing
    module = load_module(ALWAYS)
    eager = [float(module.jitter(np.float32(1.0), 0)[0]) - 1.0 for _ in range(4)]
    assert len(set(eager)) == 4
    fixed = fix_source(ALWAYS, select=["TFR102"], unsafe_fixes=True)
    assert "np.random" not in fixed
    fresh = _noise(fixed)
    assert len(set(fresh)) == 4
