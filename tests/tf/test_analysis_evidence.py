"""Each new kind of tensor evidence that enables a safe rewrite, proven under
TensorFlow: the original run eagerly equals the rewrite run eagerly and
traced with `tf.function(autograph=False)` (no AutoGraph to lean on), on
inputs that reach both branches. The rewrites come from tfrewrite's own API
on small sources, as a user's `tfrewrite fix` would produce them."""

from __future__ import annotations

import pytest
import tensorflow as tf

from tfrewrite.api import fix_source_with_findings
from tfrewrite.findings import Applicability

from .equivalence import assert_rewrite_equivalent, assert_same, load_module, python_function

pytestmark = pytest.mark.tensorflow

CASES = {
    "call_site": """
import tensorflow as tf

@tf.function
def f(x):
    if x > 0:
        return x * 2
    return -x


def main():
    return f(tf.constant(1))
""",
    "call_site_arithmetic": """
import tensorflow as tf

@tf.function
def f(x):
    if x > 0:
        return x * 2
    return -x


def main():
    return f(tf.constant(1.5) - 1)
""",
    "module_constant": """
import tensorflow as tf

DELTA = 1.0

@tf.function
def huber(y_true, y_pred):
    err = tf.reduce_mean(tf.abs(y_true - y_pred))
    if err < DELTA:
        return 0.5 * err * err
    return DELTA * (err - 0.5 * DELTA)
""",
    "self_attr": """
import tensorflow as tf

class Clipped(tf.keras.losses.Loss):
    def __init__(self, clip=1.0, name="clipped"):
        super().__init__(name=name)
        self.clip = clip

    def call(self, y_true, y_pred):
        err = tf.reduce_mean(tf.abs(y_true - y_pred))
        if err > self.clip:
            return self.clip * tf.sqrt(err)
        return err
""",
    "variable": """
import tensorflow as tf

threshold = tf.Variable(0.5)

@tf.function
def gate(x):
    if threshold > 0.25:
        return x * 2.0
    return x
""",
    "shape_index": """
import tensorflow as tf

@tf.function
def pooled(x):
    if tf.shape(x)[0] > 2:
        return tf.reduce_sum(x)
    return tf.reduce_mean(x)
""",
    "cast_scalar": """
import tensorflow as tf

@tf.function
def pooled(x):
    if tf.cast(tf.size(x), tf.float32) > 2.0:
        return tf.reduce_sum(x)
    return tf.reduce_mean(x)
""",
    "bool_constant": """
import tensorflow as tf

@tf.function
def maybe_negate(x):
    flag = tf.constant(True)
    if tf.reduce_sum(x) > 0.0:
        flag = tf.constant(False)
    if flag:
        return -x
    return x
""",
    "input_signature": """
import tensorflow as tf

@tf.function(input_signature=[tf.TensorSpec([], tf.float32)])
def relu(t):
    if t > 0:
        return t
    return t * 0.0
""",
}

SCALARS = [(tf.constant(v),) for v in (-2.0, 0.0, 0.5, 3.0)]
PAIRS = [(tf.zeros([3]), tf.fill([3], v)) for v in (-3.0, -0.5, 0.2, 2.0)]
VECTORS = [(tf.constant(v),) for v in ([1.0, 2.0], [1.0, -2.0, 3.0, 4.0], [-1.0])]
ARGUMENTS = {
    "call_site": ("f", [(tf.constant(v),) for v in (-2, 0, 3)]),
    "call_site_arithmetic": ("f", [(tf.constant(v),) for v in (-2.5, 0.0, 0.5)]),
    "module_constant": ("huber", PAIRS),
    "variable": ("gate", VECTORS),
    "shape_index": ("pooled", VECTORS),
    "cast_scalar": ("pooled", VECTORS),
    "bool_constant": ("maybe_negate", VECTORS),
    "input_signature": ("relu", SCALARS),
}


def safe_rewrite(source: str) -> str:
    """The source after plain `tfrewrite fix`: every applied fix was safe."""
    fixed, applied, remaining = fix_source_with_findings(source, select=["TFR1"])
    assert applied and all(f.code == "TFR101" for f in applied), applied
    assert all(f.fix is None or f.fix.applicability is Applicability.SAFE for f in applied)
    assert not [f for f in remaining if f.code == "TFR101"], remaining
    assert "tf.cond" in fixed
    return fixed


@pytest.mark.parametrize("name", sorted(ARGUMENTS))
def test_rewrite_enabled_by_new_evidence_matches_eager(name):
    source = CASES[name]
    function, inputs = ARGUMENTS[name]
    assert_rewrite_equivalent(source, safe_rewrite(source), function, inputs)


def test_original_needs_autograph_where_the_evidence_says_tensor():
    """The evidence is right: the original fails without AutoGraph."""
    original = python_function(load_module(CASES["call_site"]).f)
    with pytest.raises(tf.errors.OperatorNotAllowedInGraphError):
        tf.function(original, autograph=False)(tf.constant(1))


def test_rewrite_of_a_method_reading_a_numeric_init_attribute():
    source = CASES["self_attr"]
    fixed = safe_rewrite(source)
    original = load_module(source).Clipped(clip=1.0)
    rewritten = load_module(fixed).Clipped(clip=1.0)
    traced = tf.function(rewritten.call, autograph=False)
    for y_true, y_pred in PAIRS:
        expected = original.call(y_true, y_pred)
        assert_same(expected, rewritten.call(y_true, y_pred))
        assert_same(expected, traced(y_true, y_pred))
