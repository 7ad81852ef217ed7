"""TFR202: a function its own `@tf.function` traces that changes a Python
container it is given (`logs["temp"] = t`, `history.append(x)`): eagerly it
runs; traced, `tf.function` raises ("should not modify its Python input
arguments"). A parameter the body rebinds first (a copy) is not reported,
nor `**kwargs` (made afresh for each call), nor a method of an object that
is no list or dict (`buffer.add(x)`: only their structure is compared), nor
a function traced only by others (a layer's `call`)."""

from __future__ import annotations

import textwrap

from tfrewrite.api import check_source

SOURCE = """
import tensorflow as tf


@tf.function
def log_temperature(temperature, logs={}):
    logs["temp"] = temperature * 2.0
    return temperature


@tf.function
def record(x, history):
    history.append(x)
    return x


@tf.function
def copied(x, history):
    history = list(history)
    history.append(x)
    return x


@tf.function
def options(x, buffer, **kwargs):
    kwargs["training"] = True
    buffer.add(x)
    return x
"""


def test_changing_a_container_argument_of_a_tf_function_is_reported() -> None:
    findings = check_source(textwrap.dedent(SOURCE), select=["TFR202"])
    assert [(f.start.line, f.fix) for f in findings] == [(7, None), (13, None)]
    assert "changing the argument `logs`" in findings[0].message
    assert "changing the argument `history`" in findings[1].message
