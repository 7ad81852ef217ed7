"""TFR108 on a `for` in a Keras layer's `call` over a name that is a Python
`range` on one path and a `tf.range` on the other (a decoder stepping over
the static length when it is known, the dynamic one when it is not): Keras 3
traces `call` without AutoGraph, so the traces where the length is unknown
raise. Reported without a fix; a name that is a Python value on every path,
and the same loop in a plain `tf.function` (AutoGraph converts it), are
left alone."""

from __future__ import annotations

from tfrewrite.api import check_source

SOURCE = """
import tensorflow as tf


class Decoder(tf.keras.layers.Layer):
    def __init__(self):
        super().__init__()
        self.cell = tf.keras.layers.Dense(4)

    def call(self, inputs):
        if inputs.shape[1]:
            steps = range(inputs.shape[1])
        else:
            steps = {dynamic}
        outputs = []
        for i in steps:
            outputs.append(self.cell(inputs[:, i, :]))
        return tf.stack(outputs, axis=1)
"""


def _source(dynamic: str = "tf.range(tf.shape(inputs)[1])") -> str:
    return SOURCE.format(dynamic=dynamic).lstrip()


def test_a_loop_over_a_tensor_on_one_path_raises_there() -> None:
    findings = check_source(_source(), select=["TFR108"])
    assert [(f.start.line, f.fix) for f in findings] == [(15, None)]
    assert "a tensor on some paths to the loop" in findings[0].message


def test_python_ranges_on_every_path_are_fine() -> None:
    assert check_source(_source("range(8)"), select=["TFR108"]) == []


def test_autograph_converts_it_in_a_plain_tf_function() -> None:
    source = _source().replace(
        "class Decoder(tf.keras.layers.Layer):", "class Decoder:"
    ).replace("    def call(self, inputs):", "    @tf.function\n    def call(self, inputs):")
    source = source.replace("        super().__init__()\n", "")
    assert check_source(source, select=["TFR108"]) == []
