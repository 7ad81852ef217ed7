"""TFR110: a tensor given as `training` to a Keras 3 layer or model in
traced code is reported (no fix); a Python flag, a layer that ignores it,
a plain function and a legacy `tf_keras` layer are not."""

from __future__ import annotations

import textwrap

import pytest
from tests.training_flags import FREEZING_NORMALIZATION, MODE_VARIABLE

from tfrewrite.api import check_source


def _found(source: str) -> list[tuple[int, str]]:
    return [
        (f.start.line, f.message) for f in check_source(textwrap.dedent(source), select=["TFR110"])
    ]


def test_a_mode_variable_handed_to_a_layer_of_the_project_is_reported() -> None:
    found = _found(MODE_VARIABLE)
    assert [line for line, _ in found] == [24]
    assert "`training` is given a tensor, `self.training_mode`" in found[0][1]
    assert "`self.encoder` (a Keras layer of class `Encoder`)" in found[0][1]


def test_a_flag_handed_on_to_the_keras_layer_a_class_extends_is_reported() -> None:
    found = _found(FREEZING_NORMALIZATION)
    assert [line for line, _ in found] == [10]
    assert "Keras' `BatchNormalization`" in found[0][1]


def test_a_tensor_a_caller_passes_is_reported() -> None:
    source = """
    import tensorflow as tf

    dropout = tf.keras.layers.Dropout(0.3)


    @tf.function
    def forward(x, training):
        return dropout(x, training=training)


    forward(tf.ones([2, 3]), tf.constant(True))
    """
    assert [line for line, _ in _found(source)] == [9]


@pytest.mark.parametrize(
    ("case", "source"),
    [
        (
            "a Python flag at every call",
            """
            import tensorflow as tf

            dropout = tf.keras.layers.Dropout(0.3)

            @tf.function
            def forward(x, training):
                return dropout(x, training=training)

            forward(tf.ones([2, 3]), True)
            """,
        ),
        (
            "a parameter nothing shows to be a tensor",
            """
            import tensorflow as tf

            dropout = tf.keras.layers.Dropout(0.3)

            @tf.function
            def forward(x, training):
                return dropout(x, training=training)
            """,
        ),
        (
            "a layer that ignores the flag",
            """
            import tensorflow as tf

            dense = tf.keras.layers.Dense(3)

            @tf.function
            def forward(x):
                return dense(x, training=tf.constant(True))
            """,
        ),
        (
            "a plain function, which AutoGraph converts",
            """
            import tensorflow as tf

            def scale(x, training):
                if training:
                    return x * 2.0
                return x

            @tf.function
            def forward(x):
                return scale(x, training=tf.constant(True))
            """,
        ),
        (
            "a legacy Keras 2 layer, which takes a tensor",
            """
            import tensorflow as tf
            import tf_keras

            dropout = tf_keras.layers.Dropout(0.3)

            @tf.function
            def forward(x):
                return dropout(x, training=tf.constant(True))
            """,
        ),
        (
            "eager code",
            """
            import tensorflow as tf

            dropout = tf.keras.layers.Dropout(0.3)

            def forward(x):
                return dropout(x, training=tf.constant(True))
            """,
        ),
    ],
)
def test_not_reported(case: str, source: str) -> None:
    assert _found(source) == [], case


def test_a_class_extending_a_module_by_mistake_is_no_layer() -> None:
    # `class Block(tf.keras.layers)` names the module, not a layer class:
    # the class statement raises, and nothing of it runs traced.
    source = """
    import tensorflow as tf


    class Block(tf.keras.layers):
        def call(self, x, width):
            if width > 2:
                return x
            return -x
    """
    assert check_source(textwrap.dedent(source)) == []
