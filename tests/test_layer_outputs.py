"""What calling a Keras library layer returns: one tensor, unless the layer
is built (or called) to return several. `self.dense(x)` on an attribute
every assignment of which builds a layer, and `layers.Dense(2)(x)` inline,
are tensors, so what reads them in traced code is judged as reading a
tensor: a print of a layer's output in a model's `call` is TFR103."""

from __future__ import annotations

import textwrap

import pytest

from tfrewrite.api import check_source, fix_source

MODEL = """
    import tensorflow as tf
    from tensorflow.keras import layers


    class PairNet(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.head = {layer}

        def call(self, x):
            h = self.head(x)
            print("h", h)
            return h
"""


def _codes(layer: str) -> list[str]:
    source = textwrap.dedent(MODEL.format(layer=layer))
    return [f.code for f in check_source(source, select=["TFR103"])]


@pytest.mark.parametrize(
    "layer",
    [
        "layers.Dense(2)",
        "tf.keras.layers.Conv1D(4, 3, activation='relu')",
        "layers.Bidirectional(layers.LSTM(4, return_sequences=True))",
    ],
)
def test_a_layer_attributes_output_is_a_tensor(layer: str) -> None:
    assert _codes(layer) == ["TFR103"]


@pytest.mark.parametrize(
    "layer",
    [
        "layers.LSTM(4, return_state=True)",  # a list: output and states
        "layers.Bidirectional(layers.LSTM(4, return_state=True))",
        "layers.Lambda(lambda t: (t, t))",  # whatever the function returns
        "make_head()",  # a project function: not known
    ],
)
def test_a_layer_that_may_return_several_values_is_not_known_to_give_a_tensor(layer: str) -> None:
    assert _codes(layer) == []


def test_an_attribute_also_bound_to_something_else_is_not_a_layer() -> None:
    source = textwrap.dedent(MODEL.format(layer="layers.Dense(2)")).replace(
        "    def call(self, x):",
        "    def swap(self, f):\n        self.head = f\n\n    def call(self, x):",
    )
    assert "def swap" in source
    assert check_source(source, select=["TFR103"]) == []


def test_a_layer_built_and_called_inline_gives_a_tensor() -> None:
    source = textwrap.dedent(MODEL.format(layer="layers.Dense(2)")).replace(
        "h = self.head(x)", "h = layers.Dense(2)(x)"
    )
    assert [f.code for f in check_source(source, select=["TFR103"])] == ["TFR103"]
    # Called to return attention scores too: a tuple.
    attention = source.replace(
        "h = layers.Dense(2)(x)",
        "h = layers.MultiHeadAttention(2, 4)(x, x, return_attention_scores=True)",
    )
    assert check_source(attention, select=["TFR103"]) == []


def test_the_print_of_a_layer_output_becomes_tf_print() -> None:
    source = textwrap.dedent(MODEL.format(layer="layers.Dense(2)"))
    fixed = fix_source(source, select=["TFR103"], unsafe_fixes=True)
    assert 'tf.print("h", h, summarize=-1, output_stream=sys.stdout)' in fixed


# A Keras layer class of the project: what its `call` returns is what
# calling one of its objects gives.
PROJECT_LAYER = """
    class Scorer(tf.keras.layers.Layer):
        def __init__(self):
            super().__init__()
            self.project = layers.Dense(2)

        def call(self, x):
            scores = self.project(x)
            return {returned}

"""


def _with_project_layer(returned: str) -> str:
    source = textwrap.dedent(MODEL.format(layer="Scorer()"))
    layer = textwrap.dedent(PROJECT_LAYER.format(returned=returned))
    return source.replace("\n\nclass PairNet", "\n\n" + layer + "\nclass PairNet")


def test_a_project_layer_whose_call_returns_a_tensor_gives_a_tensor() -> None:
    source = _with_project_layer("tf.nn.softmax(scores)")
    assert [f.code for f in check_source(source, select=["TFR103"])] == ["TFR103"]


@pytest.mark.parametrize("returned", ["scores, x", "{'scores': scores}", "helper(scores)"])
def test_a_project_layer_that_may_return_something_else_is_not_known(returned: str) -> None:
    assert check_source(_with_project_layer(returned), select=["TFR103"]) == []
