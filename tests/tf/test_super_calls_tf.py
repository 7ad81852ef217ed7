"""TFR102 in a base method a traced override reaches through `super()`
(`tests/test_super_calls_and_running_sums.py`): the original override,
traced, returns the sample of its trace on every call, while eagerly each
call draws afresh; fixed (`--unsafe-fixes`), the traced override draws a
fresh standard-normal sample on every call, as the original does eagerly."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
from tests.test_super_calls_and_running_sums import LATENT

from tfrewrite.api import fix_source

from .equivalence import load_module

pytestmark = pytest.mark.tensorflow


def _draws(source: str, calls: int = 4) -> list[np.ndarray]:
    sampler = load_module(source).TracedSampler()
    return [np.asarray(sampler.latent(500)) for _ in range(calls)]


def test_the_original_repeats_the_sample_of_its_trace() -> None:
    draws = _draws(textwrap.dedent(LATENT))
    assert all(np.array_equal(draws[0], d) for d in draws[1:])


def test_the_fixed_override_draws_afresh_with_the_same_distribution() -> None:
    fixed = fix_source(textwrap.dedent(LATENT), select=["TFR102"], unsafe_fixes=True)
    assert "np.random" not in fixed
    draws = _draws(fixed)
    assert not any(np.array_equal(draws[0], d) for d in draws[1:])
    values = np.concatenate(draws) / 2.0
    assert abs(values.mean()) < 0.1 and abs(values.std() - 1.0) < 0.1
    assert draws[0].dtype == np.float32
