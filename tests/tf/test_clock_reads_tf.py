"""What TFR202's clock reads rest on (`tests/test_clock_reads.py`),
measured: a duration timed with `time.time()` inside a `tf.function` is
the same on every call (the trace's), while eagerly each call measures
its own; `tf.timestamp()`, which the finding suggests, reads the clock on
every call traced too."""

from __future__ import annotations

import textwrap
import time

import pytest

from .equivalence import load_module

pytestmark = pytest.mark.tensorflow

SOURCE = """
import time

import tensorflow as tf


def stamp(x):
    return x + 1.0, time.time()


def stamp_op(x):
    return x + 1.0, tf.timestamp()
"""


def _stamps(function, traced: bool) -> list[float]:
    import tensorflow as tf

    run = tf.function(function) if traced else function
    stamps = []
    for _ in range(3):
        stamps.append(float(run(tf.constant(1.0))[1]))
        time.sleep(0.02)
    return stamps


def test_a_python_clock_is_read_once_per_trace() -> None:
    module = load_module(textwrap.dedent(SOURCE))
    eager = _stamps(module.stamp, traced=False)
    traced = _stamps(module.stamp, traced=True)
    assert len(set(eager)) == 3
    assert len(set(traced)) == 1


def test_tf_timestamp_reads_the_clock_on_every_call() -> None:
    module = load_module(textwrap.dedent(SOURCE))
    traced = _stamps(module.stamp_op, traced=True)
    assert len(set(traced)) == 3
