"""Measured: the agent of `tests/attributes_rebound_on_objects.py` run by
its script keeps the noise of its first trace, where run eagerly each
episode sees the noise the script set: what TFR201 reports."""

from __future__ import annotations

import sys

import pytest
import tensorflow as tf
from tests.attributes_rebound_on_objects import AGENT, SCRIPT

from .equivalence import load_module, run_eagerly

pytestmark = pytest.mark.tensorflow


def test_the_traced_method_keeps_the_first_noise() -> None:
    sys.modules["agent"] = load_module(AGENT, "agent")
    try:
        script = load_module(SCRIPT)
    finally:
        sys.modules.pop("agent", None)
    states = [tf.constant(1.0)] * 3
    eager = [float(a) for a in run_eagerly(script.main, states)]
    traced = [float(a) for a in script.main(states)]
    assert eager == pytest.approx([1.3, 1.15, 1.1])
    assert traced == pytest.approx([1.3, 1.3, 1.3])
