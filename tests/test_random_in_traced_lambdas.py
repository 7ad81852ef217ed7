"""Draws in a lambda that runs traced on its own (`Dataset.map`,
`keras.layers.Lambda`, a compiled loss): TFR102/TFR106 report them, without
a fix (as TFR101 does inside a lambda), once each."""

from __future__ import annotations

import textwrap

from tfrewrite.api import check_source, fix_source

SOURCE = textwrap.dedent(
    """\
    import random

    import numpy as np
    import tensorflow as tf

    shifted = tf.data.Dataset.range(4).map(lambda x: tf.cast(x, tf.float32) + np.random.rand())
    jittered = tf.data.Dataset.range(4).map(lambda x: tf.cast(x, tf.float32) + random.random())
    noise = tf.keras.layers.Lambda(lambda t: t * np.random.rand())
    fresh = tf.data.Dataset.range(4).map(lambda x: tf.cast(x, tf.float32) + tf.random.uniform([]))


    @tf.function
    def step(ds):
        return ds.map(lambda x: x + np.random.rand())
    """
)


def test_draws_in_traced_lambdas_are_reported_once_without_a_fix() -> None:
    findings = check_source(SOURCE, select=["TFR102", "TFR106"])
    # Line 14 is inside a traced function: its own finding, as before.
    assert sorted((f.start.line, f.code) for f in findings) == [
        (6, "TFR102"),
        (7, "TFR106"),
        (8, "TFR102"),
        (14, "TFR102"),
    ]
    in_lambdas = [f for f in findings if f.start.line in (6, 7, 8)]
    assert all(f.fix is None for f in in_lambdas)
    assert all("in a lambda that runs traced" in f.message for f in in_lambdas)
    fixed = fix_source(SOURCE, select=["TFR102", "TFR106"], unsafe_fixes=True)
    assert fixed.splitlines()[5:8] == SOURCE.splitlines()[5:8]


def test_a_lambda_not_handed_to_a_tracer_is_left_alone() -> None:
    source = SOURCE.replace(".map(lambda", ".apply(lambda")
    lines = {f.start.line for f in check_source(source, select=["TFR102", "TFR106"])}
    assert not lines & {6, 7}
