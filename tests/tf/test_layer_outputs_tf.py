"""A print of a Keras layer's output in a model's `call` (TFR103), under
TensorFlow: traced, the original prints once, at trace time, a symbolic
tensor; the rewrite traced prints the values on every call, as the original
does eagerly."""

from __future__ import annotations

import textwrap

import pytest
from tests.test_layer_outputs import MODEL
from tests.tf.equivalence import load_module
from tests.tf.fdcapture import capture_fds

from tfrewrite.api import fix_source

pytestmark = pytest.mark.tensorflow


def _printed(call, inputs) -> list[str]:
    with capture_fds() as out:
        for x in inputs:
            call(x)
    return out.stdout_lines()


def test_the_rewritten_print_shows_each_calls_layer_output() -> None:
    import tensorflow as tf

    source = textwrap.dedent(MODEL.format(layer="layers.Dense(2)"))
    inputs = [tf.fill((1, 3), float(i)) for i in (1, 2, 3)]
    tf.keras.utils.set_random_seed(0)
    original = load_module(source, "layer_print_original").PairNet()
    _printed(original, inputs[:1])  # Keras builds the model with a symbolic call first
    eager = _printed(original, inputs)
    assert len(eager) == 3
    traced = _printed(tf.function(original), inputs)
    assert len(traced) == 1 and "Tensor(" in traced[0]
    fixed = load_module(
        fix_source(source, select=["TFR103"], unsafe_fixes=True), "layer_print_fixed"
    )
    tf.keras.utils.set_random_seed(0)
    rewritten = fixed.PairNet()
    _printed(rewritten, inputs[:1])
    for autograph in (True, False):
        lines = _printed(tf.function(rewritten, autograph=autograph), inputs)
        assert len(lines) == 3 and "Tensor(" not in "".join(lines)
        assert lines[0] != lines[1]  # each call's own output


def test_the_rewritten_print_shows_each_calls_project_layer_output() -> None:
    """The same with a Keras layer class of the project as the head."""
    import tensorflow as tf
    from tests.test_layer_outputs import _with_project_layer

    source = _with_project_layer("tf.nn.softmax(scores)")
    inputs = [tf.fill((1, 3), float(i)) for i in (1, 2, 3)]
    original = load_module(source, "project_layer_print_original").PairNet()
    _printed(original, inputs[:1])
    traced = _printed(tf.function(original), inputs)
    assert len(traced) == 1 and "Tensor(" in traced[0]
    fixed = fix_source(source, select=["TFR103"], unsafe_fixes=True)
    rewritten = load_module(fixed, "project_layer_print_fixed").PairNet()
    _printed(rewritten, inputs[:1])
    lines = _printed(tf.function(rewritten, autograph=False), inputs)
    assert len(lines) == 3 and "Tensor(" not in "".join(lines)
