"""TFR201 on a variable a loop rebinds and a nested traced step reads: a
step defined before the loop is traced once and keeps the value of its
first call; a step defined inside the loop is defined, and traced, afresh
on every iteration, with that iteration's values."""

from __future__ import annotations

import textwrap

from tfrewrite.api import check_source

# The decorated step, written once and indented where each source puts it.
STEP = """
@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    with writer.as_default():
        tf.summary.scalar("loss", loss, step=epoch)
"""

IN_LOOP_STEP = (
    """
import tensorflow as tf


def fit(model, optimizer, dataset, epochs, writer):
    for epoch in range(epochs):
        for x, y in dataset:
"""
    + textwrap.indent(STEP, " " * 12)
    + """
            train_step(x, y)
"""
)


def test_a_step_defined_afresh_in_the_loop_reads_each_iterations_values() -> None:
    """The step is defined (and traced) anew in every iteration of the loop
    that rebinds `epoch`: it reads that iteration's value, nothing freezes."""
    assert check_source(textwrap.dedent(IN_LOOP_STEP), select=["TFR201"]) == []


BEFORE_LOOP_STEP = (
    """
import tensorflow as tf


def fit(model, optimizer, dataset, epochs, writer):
    epoch = 0
"""
    + textwrap.indent(STEP, " " * 4)
    + """
    for epoch in range(epochs):
        for x, y in dataset:
            train_step(x, y)
"""
)


def test_a_step_defined_before_the_loop_keeps_its_first_value() -> None:
    """Defined once, before the loop that rebinds `epoch`: traced once, it
    keeps the `epoch` of its first call."""
    [finding] = check_source(textwrap.dedent(BEFORE_LOOP_STEP), select=["TFR201"])
    assert "`epoch`" in finding.message


def test_an_undecorated_step_defined_in_its_loop_is_not_decorated_there() -> None:
    """Decorated inside the loop, each iteration would make a new
    `tf.function` that traces on every call: TFR302 says so, with no fix."""
    source = textwrap.dedent(IN_LOOP_STEP).replace("            @tf.function\n", "")
    [finding] = check_source(source, select=["TFR302"])
    assert finding.fix is None
    assert "defines the step anew on every iteration of the loop that calls it" in finding.message
