"""TFR202 on Python's clocks read in traced code: a train step timing its
phases with `time.time()` (or `perf_counter`, `datetime.now()`) reads the
clock while tracing, so every call returns the durations of its trace
(`tests/tf/test_clock_reads_tf.py`). Eager code reading the clock, a
clock read only to seed an op (`seed=int(time.time())`: the traced op
still draws afresh on every call), and a local name that only shares the
module's, are left alone."""

from __future__ import annotations

import textwrap

from tfrewrite.api import check_source

STEP = """
import time
from datetime import datetime

import tensorflow as tf


@tf.function
def train_step(model, x):
    start = time.time()
    loss = tf.reduce_mean(model(x))
    elapsed = time.time() - start
    return loss, elapsed


@tf.function
def stamped(x):
    return x, datetime.now().timestamp(), time.perf_counter()


def timed(step, x):
    start = time.perf_counter()
    result = step(x)
    return result, time.perf_counter() - start


@tf.function
def shadowed(x, time):
    return x * time.time()


@tf.function
def noise(shape):
    return tf.random.normal(shape, seed=int(time.time()))
"""


def _lines() -> list[int]:
    source = textwrap.dedent(STEP)
    return sorted(f.start.line for f in check_source(source, select=["TFR202"]))


def test_clock_reads_in_traced_code_are_reported() -> None:
    assert _lines() == [10, 12, 18, 18]


def test_the_message_names_the_clock_and_the_op_that_reads_it_per_call() -> None:
    [first, *_] = check_source(textwrap.dedent(STEP), select=["TFR202"])
    assert "`time.time()` in traced `train_step` reads the host clock once" in first.message
    assert "tf.timestamp()" in first.message
