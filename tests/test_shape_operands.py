"""TFR107: the tensor a shape-taking op is given is likely a tensor, whatever
made it (`h = layer.conv(x)`, a library tfrewrite cannot see): a static
dimension of it given as the op's shape is reported, with an unsafe fix
that says the assumption. A value no op takes as its tensor stays unknown."""

from __future__ import annotations

import textwrap

from tfrewrite.api import check_source

SOURCE = """
import tensorflow as tf


@tf.function(reduce_retracing=True)
def flatten(layer, x):
    h = layer.conv(x)
    [n, a, b, c] = h.shape
    return tf.reshape({tensor}, [n, a * b * c])
"""


def test_a_static_dimension_of_the_reshaped_value_is_reported() -> None:
    [finding] = check_source(textwrap.dedent(SOURCE.format(tensor="h")), select=["TFR107"])
    assert finding.start.line == 9 and finding.fix is not None
    assert "it assumes `h` is a tensor, as `tf.reshape` takes it" in finding.fix.message


def test_a_static_dimension_of_another_unknown_value_is_not() -> None:
    source = textwrap.dedent(SOURCE.format(tensor="layer.flat(x)"))
    assert check_source(source, select=["TFR107"]) == []
