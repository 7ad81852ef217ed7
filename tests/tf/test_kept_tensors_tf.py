"""Measured for `tests/test_kept_tensors.py`: the policy's `act` run
eagerly keeps a value `probabilities` reads; traced, what it keeps is a
symbolic tensor of the finished trace, and reading it raises. TFR202
reports it (no fix: what to keep instead is the author's choice)."""

from __future__ import annotations

import pytest
from tests.test_kept_tensors import POLICY

from tfrewrite.api import check_source

from .equivalence import load_module

pytestmark = pytest.mark.tensorflow

SOURCE = POLICY.replace("KEPT", "self.net(obs)")


def test_eagerly_the_kept_value_reads_and_traced_it_raises() -> None:
    import tensorflow as tf

    obs = tf.ones((1, 3))
    tf.config.run_functions_eagerly(True)
    try:
        policy = load_module(SOURCE).Policy()
        policy.act(obs)
        probabilities, width = policy.probabilities()
        assert probabilities.shape == (1, 2) and width == 3
    finally:
        tf.config.run_functions_eagerly(False)
    policy = load_module(SOURCE).Policy()
    policy.act(obs)
    with pytest.raises(Exception, match="out of scope"):
        policy.probabilities()
    assert [f.code for f in check_source(SOURCE, select=["TFR202"])] == ["TFR202"]
