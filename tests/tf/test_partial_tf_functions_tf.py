"""TFR101's fix in a schedule a partial binds (`tests/test_partial_tf_functions.py`):
the original needs AutoGraph when traced; the fixed method, traced through
the same `tf.function(partial(...))` without AutoGraph, gives each
optimizer the rate the original gives eagerly, on both sides of the
threshold."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest
from tests.test_partial_tf_functions import _source

from tfrewrite.api import fix_source

from .equivalence import load_module

pytestmark = pytest.mark.tensorflow

ORIGINAL = _source("partial(self._lr, name)")


def _rates(source: str, traced: bool) -> list[float]:
    import tensorflow as tf

    player = load_module(source).Player(["actor", "critic"])
    rates = []
    for steps in (0, 30, 80, 200):
        player.total_steps.assign(steps)
        for name in ("actor", "critic"):
            if traced:
                rate = tf.function(partial(player._lr, name), autograph=False)()
            else:
                rate = player._lr(name)
            rates.append(float(rate))
    return rates


def test_the_original_needs_autograph_when_traced() -> None:
    with pytest.raises(Exception, match="not allowed|Using a symbolic"):
        _rates(ORIGINAL, traced=True)


def test_the_fixed_schedule_traced_gives_the_eager_rates() -> None:
    fixed = fix_source(ORIGINAL, select=["TFR101"], unsafe_fixes=True)
    eager = _rates(ORIGINAL, traced=False)
    np.testing.assert_allclose(_rates(fixed, traced=True), eager, rtol=1e-6)
    assert len(set(eager)) > 2  # both branches, both names
