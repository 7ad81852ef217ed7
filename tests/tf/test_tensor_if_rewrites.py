"""TFR101 under TensorFlow: every rewrite form, run on inputs that take every
branch. The original run eagerly must equal the rewrite run eagerly and the
rewrite traced with `tf.function(autograph=False)` (no AutoGraph to lean
on); for several forms the original itself is shown to fail under
`autograph=False`, which is what the rewrite removes.

The cases follow AutoGraph's own behaviour tests (`cond_basic_test.py`,
`early_return_test.py`, `nested_control_flow_test.py`,
`logical_expression_test.py`, `basic_ifexp_test.py`), in loss-function form.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import tensorflow as tf

from tfrewrite.api import check_source, fix_source

from .equivalence import (
    assert_rewrite_equivalent,
    assert_same,
    load_module,
    python_function,
    run_eagerly,
)
from .fdcapture import capture_fds


def pair(error: float) -> tuple[tf.Tensor, tf.Tensor]:
    """(y_true, y_pred) whose mean error `mean(y_pred - y_true)` is `error`
    and whose `y_pred` values all equal `error`."""
    return tf.zeros([3]), tf.fill([3], error)


# Mean errors that reach the branches of every case below.
ERRORS = [-3.0, -1.5, -0.5, 0.0, 0.5, 1.5, 3.0]
INPUTS = [pair(e) for e in ERRORS]

CASES = {
    "parameter_rebound_to_a_tensor": """
        import tensorflow as tf

        @tf.function
        def loss(y_true, y_pred, scale=1.0):
            scale = tf.reduce_mean(y_pred - y_true)
            if scale > 1.0:
                return scale * 2.0
            return scale
        """,
    # A nested helper every call of which passes a reduction without an axis:
    # a proven scalar tensor, so the `if` is a safe `tf.cond`.
    "nested_helper_fed_a_reduction": """
        import tensorflow as tf

        @tf.function
        def loss(y_true, y_pred):
            def clipped(m):
                if m > 1.0:
                    m = m - 1.0
                return m

            return clipped(tf.reduce_mean(y_pred - y_true))
        """,
    "return_return": """
        import tensorflow as tf

        @tf.function
        def loss(y_true, y_pred):
            err = tf.reduce_mean(y_pred - y_true)
            if err > 1.0:
                return err * 2.0
            else:
                return err
        """,
    "early_return_fall_through": """
        import tensorflow as tf

        @tf.function
        def loss(y_true, y_pred):
            err = tf.reduce_mean(y_pred - y_true)
            if err > 1.0:
                return tf.sqrt(err)
            squared = tf.square(err)
            return squared + 1.0
        """,
    "two_early_returns": """
        import tensorflow as tf

        @tf.function
        def loss(y_true, y_pred):
            err = tf.reduce_mean(y_pred - y_true)
            if err > 1.0:
                return err
            if err < -1.0:
                return -err
            return err * 0.5
        """,
    "assign_both_branches_two_outputs": """
        import tensorflow as tf

        @tf.function
        def loss(y_true, y_pred):
            err = tf.reduce_mean(y_pred - y_true)
            if err > 0.0:
                w = err * 2.0
                b = err + 1.0
            else:
                w = -err
                b = err - 1.0
            return w * b
        """,
    "assign_one_branch_keeps_old_value": """
        import tensorflow as tf

        @tf.function
        def loss(y_true, y_pred):
            err = tf.reduce_mean(y_pred - y_true)
            scale = tf.constant(1.0)
            if err > 0.5:
                scale = scale * 3.0
            return err * scale
        """,
    "branch_local_variable": """
        import tensorflow as tf

        @tf.function
        def loss(y_true, y_pred):
            err = tf.reduce_mean(y_pred - y_true)
            if err > 0.0:
                tmp = tf.square(err)
                result = tmp + err
            else:
                result = -err
            return result
        """,
    "augmented_assignment": """
        import tensorflow as tf

        @tf.function
        def loss(y_true, y_pred):
            err = tf.reduce_mean(y_pred - y_true)
            total = err
            if err < 0.0:
                total += 10.0
                total *= 2.0
            return total
        """,
    "tuple_assignment": """
        import tensorflow as tf

        @tf.function
        def loss(y_true, y_pred):
            err = tf.reduce_mean(y_pred - y_true)
            a, b = err, err + 1.0
            if err > 0.0:
                a, b = b * 2.0, a
            return a - b
        """,
    "elif_chain": """
        import tensorflow as tf

        @tf.function
        def loss(y_true, y_pred):
            err = tf.reduce_mean(y_pred - y_true)
            if err > 1.0:
                factor = 3.0
            elif err > 0.0:
                factor = 2.0
            elif err > -1.0:
                factor = 1.0
            else:
                factor = 0.5
            return err * factor
        """,
    "elif_returns": """
        import tensorflow as tf

        @tf.function
        def loss(y_true, y_pred):
            err = tf.reduce_mean(y_pred - y_true)
            if err > 1.0:
                return err * 2.0
            elif err < -1.0:
                return -err
            else:
                return err + 0.25
        """,
    "nested_ifs": """
        import tensorflow as tf

        @tf.function
        def loss(y_true, y_pred):
            err = tf.reduce_mean(y_pred - y_true)
            scale = 1.0
            if err > 0.0:
                scale = 2.0
                if err > 1.0:
                    scale = 3.0
            else:
                if err < -1.0:
                    scale = 0.25
            return err * scale
        """,
    "early_return_in_nested_if": """
        import tensorflow as tf

        @tf.function
        def loss(y_true, y_pred):
            err = tf.reduce_mean(y_pred - y_true)
            if err > 0.0:
                if err > 1.0:
                    return err * 10.0
            result = err + 1.0
            return result
        """,
    "early_return_inside_python_if": """
        import tensorflow as tf

        @tf.function
        def loss(y_true, y_pred, clip=True):
            err = tf.reduce_mean(y_pred - y_true)
            if clip:
                if err > 1.0:
                    return tf.constant(1.0)
            return err
        """,
    "logical_and_or_not": """
        import tensorflow as tf

        @tf.function
        def loss(y_true, y_pred):
            err = tf.reduce_mean(y_pred - y_true)
            peak = tf.reduce_max(y_pred)
            if (err > 0.0 and peak < 2.0) or not err > -1.0:
                return err * 4.0
            return err
        """,
    "chained_comparison": """
        import tensorflow as tf

        @tf.function
        def loss(y_true, y_pred):
            m = tf.reduce_mean(y_pred - y_true)
            if -1.0 < m <= 1.0:
                m = m * 10.0
            return m
        """,
    "tf_equal_condition": """
        import tensorflow as tf

        @tf.function
        def loss(y_true, y_pred):
            err = tf.reduce_mean(y_pred - y_true)
            if tf.equal(err, 0.0):
                return tf.constant(-1.0)
            return err
        """,
    "non_bool_scalar_condition": """
        import tensorflow as tf

        @tf.function
        def loss(y_true, y_pred):
            positives = tf.math.count_nonzero(y_pred > 0.0)
            total = tf.reduce_sum(y_pred)
            if positives:
                total = total / tf.cast(positives, tf.float32)
            if tf.reduce_sum(y_pred):
                total = total + 1.0
            return total
        """,
    "conditional_expression": """
        import tensorflow as tf

        @tf.function
        def loss(y_true, y_pred):
            err = tf.reduce_mean(y_pred - y_true)
            scale = 2.0 if err > 0.0 else 1
            return err * scale
        """,
    "literal_int_becomes_float": """
        import tensorflow as tf

        @tf.function
        def loss(y_true, y_pred):
            err = tf.reduce_mean(y_pred - y_true)
            if err > 0.0:
                penalty = tf.square(err)
            else:
                penalty = 0
            return err + penalty
        """,
    "comments_and_block": """
        import tensorflow as tf

        @tf.function
        def loss(y_true, y_pred):
            mse = tf.reduce_mean(tf.square(y_pred - y_true))
            # clip large losses
            if mse > 4.0:  # large
                # square root keeps the gradient small
                mse = tf.sqrt(mse)
                mse = mse + 1.0
            return mse
        """,
    "inside_a_python_loop": """
        import tensorflow as tf

        @tf.function
        def loss(y_true, y_pred):
            total = tf.reduce_sum(y_pred)
            for _ in range(3):
                if total > 1.0:
                    total = total * 0.5
            return total
        """,
    "inside_a_with_block": """
        import tensorflow as tf

        @tf.function
        def loss(y_true, y_pred):
            m = tf.reduce_mean(y_pred)
            with tf.name_scope("clip"):
                if m > 1.0:
                    m = tf.sqrt(m)
            return m
        """,
    "tuple_returns": """
        import tensorflow as tf

        @tf.function
        def loss(y_true, y_pred):
            m = tf.reduce_mean(y_pred)
            if m > 1.0:
                return m, m * 2.0
            return m * 0.5, m
        """,
    "walrus_in_the_condition": """
        import tensorflow as tf

        @tf.function
        def loss(y_true, y_pred):
            m = tf.reduce_mean(y_pred)
            if (s := tf.reduce_sum(y_pred)) > 1.0:
                m = m + s
            return m
        """,
    "later_rebinding_by_a_helper": """
        import tensorflow as tf

        def postprocess(value):
            return value + 1.0

        @tf.function
        def loss(y_true, y_pred):
            m = tf.reduce_mean(y_pred)
            if m > 1.0:
                m = m * 0.5
            m = postprocess(m)
            return m
        """,
    "tensorflow_side_effect_with_output": """
        import tensorflow as tf

        @tf.function
        def loss(y_true, y_pred):
            m = tf.reduce_mean(y_pred)
            if m < 0.0:
                tf.print("negative mean")
                m = -m
            return m
        """,
    "returns_inside_with_blocks": """
        import tensorflow as tf

        @tf.function
        def loss(y_true, y_pred):
            x = tf.reduce_mean(y_pred - y_true)
            with tf.name_scope("outer"):
                if x > 0.0:
                    if x < 2.0:
                        with tf.name_scope("inner"):
                            return x
                    else:
                        return x * x
                else:
                    return x * x * x
            return x * x * x * x
        """,
    "successive_ifs_with_the_same_local_names": """
        import tensorflow as tf

        @tf.function
        def loss(y_true, y_pred):
            m = tf.reduce_mean(y_pred - y_true)
            if m > 1.0:
                tmp = m * 2.0
                m = tmp + 1.0
            if m > 5.0:
                tmp = m / 2.0
                m = tmp - 1.0
            return m
        """,
    "conditional_expressions_inside_branches": """
        import tensorflow as tf

        @tf.function
        def loss(y_true, y_pred):
            x = tf.reduce_mean(y_pred - y_true)
            if x > 0.0:
                x = -x if x < 2.0 else x
                y = 2.0 * x if x < 1.0 else x
            else:
                x = -2.0 * x if x > -1.0 else 1.0
                y = -x if x < 1.0 else x
            # Eagerly, a Python number may come out: stack makes a tensor of both.
            return tf.stack([x, y])
        """,
    "composite_boolean_operators": """
        import tensorflow as tf

        @tf.function
        def loss(y_true, y_pred):
            a = tf.reduce_mean(y_pred - y_true)
            b = tf.reduce_max(y_pred)
            if a > 1.0 or b < -2.0 or a < b and b < 0.25:
                return a
            return b * 2.0
        """,
    "python_number_variable_then_early_return": """
        import tensorflow as tf

        @tf.function
        def loss(y_true, y_pred):
            err = tf.reduce_mean(y_pred - y_true)
            scale = 1.0
            if err > 1.0:
                scale = 2.0
                if err > 2.0:
                    scale = 3.0
            elif err < -1.0:
                scale = 0.5
            if y_pred.shape[-1] == 1:
                err = err * 1.0
            tmp = err * scale
            if tmp > 0.5:
                return tmp
            return -tmp
        """,
    "later_round_sees_through_branch_functions": """
        import tensorflow as tf

        @tf.function
        def loss(y_true, y_pred):
            m = tf.reduce_mean(y_pred - y_true)
            if m > 1.0:
                m = m * 2.0
                tf.print(m)
            if m > 0.5:
                if m > 3.0:
                    m = m + 1.0
            return m
        """,
    "returned_python_int_becomes_float": """
        import tensorflow as tf

        @tf.function
        def loss(y_true, y_pred):
            err = tf.reduce_mean(y_pred - y_true)
            if err < 0.0:
                return 0 + tf.zeros(())
            if err > 1.0:
                penalty = 0
            else:
                penalty = err * 0.5
            return err + penalty
        """,
    "rest_reads_and_rebinds_a_local": """
        import tensorflow as tf

        @tf.function
        def loss(y_true, y_pred):
            t = tf.reduce_sum(y_pred)
            if t > 1.0:
                return t
            t = tf.stack([t, t])
            return tf.reduce_sum(t)
        """,
    "and_guards_an_integer_division": """
        import tensorflow as tf

        @tf.function
        def loss(y_true, y_pred):
            err = tf.reduce_mean(y_pred - y_true)
            count = tf.reduce_sum(tf.cast(y_pred > 0.0, tf.int32))
            if count > 0 and 6 // count > 1:
                return err * 2.0
            return err
        """,
    "or_guards_a_modulo": """
        import tensorflow as tf

        @tf.function
        def loss(y_true, y_pred):
            err = tf.reduce_mean(y_pred - y_true)
            count = tf.reduce_sum(tf.cast(y_pred > 0.0, tf.int32))
            if count == 0 or 6 % count == 0:
                err = err * 2.0
            return err
        """,
    "augmented_assignments_of_a_tensor_and_a_python_float": """
        import tensorflow as tf

        @tf.function
        def loss(y_true, y_pred):
            err = tf.reduce_mean(y_pred - y_true)
            total = err
            scale = 1.0
            if err > 0.0:
                total += err * 2.0
                scale *= 3.0
            else:
                total -= 1.0
            return total * scale
        """,
    "walrus_in_a_branch": """
        import tensorflow as tf

        @tf.function
        def loss(y_true, y_pred):
            err = tf.reduce_mean(y_pred - y_true)
            m = err
            out = err
            if err > 0.0:
                out = (m := err * 2.0) + 1.0
            return out + m
        """,
    "explicit_super_in_a_branch_of_layer_call": """
        import keras
        import tensorflow as tf

        class Base(keras.layers.Layer):
            def call(self, x):
                return x * 2.0

        class Sub(Base):
            def call(self, x):
                m = tf.reduce_mean(x)
                if m > 0.0:
                    x = super(Sub, self).call(x)
                    x = x + 1.0
                return x

        layer = Sub()

        @tf.function
        def loss(y_true, y_pred):
            return tf.reduce_sum(layer(y_pred))
        """,
    "closure_defined_inside_the_branch_sees_its_assignment": """
        import tensorflow as tf

        @tf.function
        def loss(y_true, y_pred):
            err = tf.reduce_mean(y_pred - y_true)
            k = 1.0
            if err > 0.0:
                k = 3.0
                scaled = lambda: err * k
                out = scaled()
            else:
                out = err
            return out + k
        """,
}

# Cases where the original needs AutoGraph: it fails under `autograph=False`.
NEEDS_AUTOGRAPH = [
    "return_return",
    "early_return_fall_through",
    "assign_one_branch_keeps_old_value",
    "elif_chain",
    "logical_and_or_not",
    "conditional_expression",
    "early_return_in_nested_if",
]


# Cases whose fix is unsafe: Python numbers whose later uses meet no tensor
# of known dtype (right for float32 values, which these inputs are).
UNSAFE = {
    "augmented_assignments_of_a_tensor_and_a_python_float",
    "closure_defined_inside_the_branch_sees_its_assignment",
    "python_number_variable_then_early_return",
}


def rewrite(source: str, unsafe: bool = False) -> str:
    source = textwrap.dedent(source)
    fixed = fix_source(source, select=["TFR101"], unsafe_fixes=unsafe)
    assert fixed != source, "no rewrite happened"
    assert check_source(fixed, select=["TFR101"]) == [], fixed
    return fixed


@pytest.mark.parametrize("name", sorted(CASES))
def test_rewrite_matches_the_original(name):
    source = textwrap.dedent(CASES[name])
    rewritten = rewrite(source, unsafe=name in UNSAFE)
    assert_rewrite_equivalent(source, rewritten, "loss", INPUTS, autograph=False)


@pytest.mark.parametrize("name", NEEDS_AUTOGRAPH)
def test_the_original_needs_autograph(name):
    source = textwrap.dedent(CASES[name])
    original = python_function(load_module(source).loss)
    with pytest.raises(tf.errors.OperatorNotAllowedInGraphError):
        tf.function(original, autograph=False)(*pair(2.0))
    rewritten = python_function(load_module(rewrite(source)).loss)
    tf.function(rewritten, autograph=False)(*pair(2.0))


def test_every_branch_is_taken():
    """The inputs reach both sides of the conditions the cases use."""
    errors = set(ERRORS)
    for threshold in (1.0, 0.0, -1.0, 0.5, 4.0**0.5):
        assert any(e > threshold for e in errors) and any(e <= threshold for e in errors)
    assert 0.0 in errors


def test_variable_update_stays_in_its_branch():
    source = textwrap.dedent(
        """
        import tensorflow as tf

        counter = tf.Variable(0.0)

        @tf.function
        def loss(y_true, y_pred):
            err = tf.reduce_mean(y_pred - y_true)
            if err > 0.0:
                counter.assign_add(1.0)
            else:
                counter.assign_sub(10.0)
            return err
        """
    )
    module = load_module(rewrite(source))
    traced = tf.function(python_function(module.loss), autograph=False)
    for error in (1.0, 2.0, -1.0):
        traced(*pair(error))
    assert module.counter.numpy() == pytest.approx(2.0 - 10.0)


def test_tf_print_runs_only_in_the_branch_taken():
    source = textwrap.dedent(
        """
        import tensorflow as tf

        @tf.function
        def loss(y_true, y_pred):
            err = tf.reduce_mean(y_pred - y_true)
            if err > 0.0:
                tf.print("positive")
            else:
                tf.print("not positive")
            return err
        """
    )
    traced = tf.function(python_function(load_module(rewrite(source)).loss), autograph=False)
    with capture_fds() as out:
        traced(*pair(1.0))
        traced(*pair(-1.0))
        traced(*pair(2.0))
    lines = [line for line in (out.stdout + out.stderr).splitlines() if "positive" in line]
    assert lines == ["positive", "not positive", "positive"]


def test_loss_given_to_compile_is_rewritten_and_trains_the_same():
    source = textwrap.dedent(
        """
        import keras
        import tensorflow as tf

        def loss(y_true, y_pred):
            err = tf.reduce_mean(tf.abs(y_pred - y_true))
            if err > 1.0:
                return tf.sqrt(err)
            return err

        def make_model():
            dense = keras.layers.Dense(1, kernel_initializer="ones")
            model = keras.Sequential([keras.Input((2,)), dense])
            model.compile(optimizer="sgd", loss=loss)
            return model
        """
    )
    rewritten = rewrite(source)
    assert "tf.cond(" in rewritten
    x = tf.constant([[1.0, 2.0], [0.1, 0.1], [3.0, -1.0]])
    y = tf.constant([[0.0], [0.0], [5.0]])
    results = []
    for src in (source, rewritten):
        module = load_module(src)
        model = module.make_model()
        model.compile(optimizer="sgd", loss=module.loss, run_eagerly=src is source)
        results.append(model.evaluate(x, y, verbose=0))
    assert_same(results[0], results[1], rtol=1e-5, atol=1e-6)


def test_a_closure_of_a_rebound_name_is_refused_not_rewritten():
    """Rewritten, the branch's `k = 3.0` would bind a local of the branch
    function, and `scaled()` would still read `k = 1.0`."""
    source = textwrap.dedent(
        """
        import tensorflow as tf

        @tf.function
        def loss(y_true, y_pred):
            err = tf.reduce_mean(y_pred - y_true)
            k = 1.0
            scaled = lambda: err * k
            if err > 0.0:
                k = 3.0
                out = scaled()
            else:
                out = err
            return out
        """
    )
    assert fix_source(source, select=["TFR101"]) == source
    (finding,) = check_source(source, select=["TFR101"])
    assert finding.fix is None and "`scaled`" in finding.message
    wrong = source.replace(
        "    if err > 0.0:\n        k = 3.0\n        out = scaled()\n"
        "    else:\n        out = err\n",
        "    k, out = tf.cond(err > 0.0, lambda: (3.0, scaled()), lambda: (k, err))\n",
    )
    assert wrong != source
    original = python_function(load_module(source).loss)
    naive = python_function(load_module(wrong).loss)
    assert float(run_eagerly(original, *pair(0.5))) == pytest.approx(1.5)
    assert float(naive(*pair(0.5))) == pytest.approx(0.5)


def test_the_lazy_condition_skips_the_division_python_skips():
    """`tf.logical_and` would divide by a zero count and fail; the rewrite
    evaluates the right operand only when the left one is true, as Python."""
    source = textwrap.dedent(CASES["and_guards_an_integer_division"])
    rewritten = python_function(load_module(rewrite(source)).loss)
    zero_count = pair(-1.0)
    assert_same(
        run_eagerly(python_function(load_module(source).loss), *zero_count), tf.constant(-1.0)
    )
    assert_same(tf.function(rewritten, autograph=False)(*zero_count), tf.constant(-1.0))
    with pytest.raises(tf.errors.InvalidArgumentError):
        count = tf.constant(0)
        tf.logical_and(count > 0, 6 // count > 1)


# -- dtypes: Python numbers take the dtype of the tensors they meet ----------------------

DTYPE_CASES = {
    "python_ints_meet_a_float_tensor_later": """
        import tensorflow as tf

        @tf.function
        def loss(y_true, y_pred):
            err = tf.reduce_mean(y_pred - y_true)
            factor = 1
            if err > 1.0:
                factor = 10
            return err * factor
        """,
    "python_float_passed_through": """
        import tensorflow as tf

        @tf.function
        def loss(y_true, y_pred):
            mse = tf.reduce_mean(tf.square(y_true - y_pred))
            loss = 0.0
            if mse > 1.0:
                loss = mse
            return loss
        """,
    "python_int_against_a_tensor_branch": """
        import tensorflow as tf

        @tf.function
        def loss(y_true, y_pred):
            err = tf.reduce_mean(y_pred - y_true)
            if err > 0.0:
                penalty = tf.square(err)
            else:
                penalty = 0
            return err + penalty
        """,
    "returned_python_int": """
        import tensorflow as tf

        @tf.function
        def loss(y_true, y_pred):
            err = tf.reduce_mean(y_pred - y_true)
            if err < 0.0:
                return 0
            return err
        """,
    "conditional_expression_of_numbers": """
        import tensorflow as tf

        @tf.function
        def loss(y_true, y_pred):
            m = tf.reduce_mean(y_pred)
            scale = 2.0 if m > 0.5 else 1
            return m * scale
        """,
    "elif_chain_of_numbers": """
        import tensorflow as tf

        @tf.function
        def loss(y_true, y_pred):
            err = tf.reduce_mean(y_pred - y_true)
            if err > 1.0:
                factor = 3.0
            elif err > 0.0:
                factor = 2.0
            else:
                factor = 0.5
            return err * factor
        """,
    "nested_if_of_numbers": """
        import tensorflow as tf

        @tf.function
        def loss(y_true, y_pred):
            err = tf.reduce_mean(y_pred - y_true)
            scale = 1.0
            if err > 0.0:
                scale = 2.0
                if err > 1.0:
                    scale = 3.0
            return err * scale
        """,
    "long_elif_chain_with_nested_elif": """
        import tensorflow as tf

        @tf.function
        def loss(y_true, y_pred):
            err = tf.reduce_mean(y_pred - y_true)
            if err > 2.0:
                w = err * 3.0
            elif err > 1.0:
                if err > 1.5:
                    w = err * 2.0
                elif err > 1.2:
                    w = err + 1.0
                else:
                    w = err
            elif err > 0.0:
                w = err * 0.5
            elif err > -1.0:
                w = -err
            else:
                w = err * err
            return w
        """,
}
DTYPES = [tf.float16, tf.float32, tf.float64]
# Errors reaching every branch of the cases above (thresholds -1, 0, 0.5, 1, 1.2, 1.5, 2).
DTYPE_ERRORS = [-3.0, -0.5, 0.25, 0.75, 1.1, 1.3, 1.75, 3.0]


def typed_pair(error: float, dtype: tf.DType) -> tuple[tf.Tensor, tf.Tensor]:
    return tf.zeros([3], dtype), tf.fill([3], tf.constant(error, dtype))


def _gradient(fn, y_true, y_pred):
    """d fn / d y_pred; zeros where the result does not depend on it (a
    Python number returned by the original)."""
    with tf.GradientTape() as tape:
        tape.watch(y_pred)
        value = fn(y_true, y_pred)
    if not tf.is_tensor(value):
        return tf.zeros_like(y_pred)
    gradient = tape.gradient(value, y_pred)
    return tf.zeros_like(y_pred) if gradient is None else gradient


def _as_tensor(value, dtype: tf.DType):
    """A Python number the original returned, as the tensor of the input
    dtype the rewrite returns in its place (the value must match)."""
    return value if tf.is_tensor(value) else tf.constant(value, dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("name", sorted(DTYPE_CASES))
def test_numbers_in_branches_keep_the_dtype_of_the_values_they_meet(name, dtype):
    """float16 and float64 values as well as float32: the rewrite traced with
    and without AutoGraph returns what the original returns eagerly, with the
    same dtype and the same gradient."""
    source = textwrap.dedent(DTYPE_CASES[name])
    rewritten = rewrite(source)
    original = python_function(load_module(source).loss)
    fixed_fn = python_function(load_module(rewritten).loss)
    tolerance = 1e-3 if dtype == tf.float16 else 1e-6
    for autograph in (False, True):
        traced = tf.function(fixed_fn, autograph=autograph)
        for error in DTYPE_ERRORS:
            args = typed_pair(error, dtype)
            expected = _as_tensor(run_eagerly(original, *args), dtype)
            assert_same(expected, traced(*args), tolerance, tolerance, f"{name} at {error}")
            assert_same(
                run_eagerly(_gradient, original, *args),
                _gradient(traced, *args),
                tolerance,
                tolerance,
                f"gradient of {name} at {error}",
            )


def test_a_rank_test_stays_static_so_the_squeeze_branch_is_not_built():
    """A `tf.cond` builds both branches; `tf.squeeze(x, -1)` fails to build
    for a last dimension other than 1, so a shape test must stay Python."""
    source = textwrap.dedent(
        """
        import tensorflow as tf

        @tf.function
        def loss(y_true, y_pred):
            if y_pred.shape.rank == 2 and y_pred.shape[-1] == 1:
                y_pred = tf.squeeze(y_pred, -1)
            err = tf.reduce_mean(y_pred - y_true)
            if err > 1.0:
                err = err * 2.0
            return err
        """
    )
    rewritten = rewrite(source)
    assert "if y_pred.shape.rank == 2 and y_pred.shape[-1] == 1:" in rewritten
    inputs = [
        (tf.zeros([3]), tf.fill([3, 1], 2.0)),
        (tf.zeros([3]), tf.fill([3], 0.5)),
        (tf.zeros([3, 2]), tf.fill([3, 2], 2.0)),
    ]
    assert_rewrite_equivalent(source, rewritten, "loss", inputs, autograph=False)


def test_a_likely_tensor_argument_rewrite_matches_autograph():
    """`@tf.function def f(x): if x > 0: ...` called with tensors: the unsafe
    fix, traced without AutoGraph, matches the original run eagerly."""
    source = textwrap.dedent(
        """
        import tensorflow as tf

        @tf.function
        def f(x):
            if x > 0:
                return x * 2
            return -x
        """
    )
    rewritten = rewrite(source, unsafe=True)
    inputs = [(tf.constant(v),) for v in (-2, 0, 3)] + [(tf.constant(v),) for v in (-1.5, 2.5)]
    assert_rewrite_equivalent(source, rewritten, "f", inputs, autograph=False)


KERAS_OPS_LOSS = """
import keras
from keras import ops


def margin_loss(y_true, y_pred):
    err = ops.mean(ops.abs(y_true - y_pred))
    if err > 1.0:
        return ops.sqrt(err)
    penalty = 0
    if err < 0.1:
        penalty = err * 2.0
    return err + penalty


model = keras.Sequential([keras.layers.Dense(1)])
model.compile(optimizer="adam", loss=margin_loss)
"""


def test_a_keras_ops_loss_rewritten_with_keras_ops_cond_matches():
    rewritten = rewrite(KERAS_OPS_LOSS)
    assert "import tensorflow" not in rewritten
    inputs = [typed_pair(e, dtype) for e in (-3.0, -0.05, 0.0, 0.05, 0.5, 3.0) for dtype in DTYPES]
    assert_rewrite_equivalent(KERAS_OPS_LOSS, rewritten, "margin_loss", inputs, autograph=False)


def test_a_rank_test_rewritten_to_the_static_rank_builds_only_the_branch_taken():
    source = textwrap.dedent(
        """
        import tensorflow as tf

        @tf.function
        def loss(y_true, y_pred):
            if tf.rank(y_pred) == 2:
                y_pred = tf.squeeze(y_pred, -1)
            return tf.reduce_mean(y_pred - y_true)
        """
    )
    rewritten = rewrite(source, unsafe=True)
    assert "if y_pred.shape.rank == 2:" in rewritten
    inputs = [(tf.zeros([3]), tf.fill([3, 1], 2.0)), (tf.zeros([3]), tf.fill([3], 0.5))]
    assert_rewrite_equivalent(source, rewritten, "loss", inputs, autograph=False)
    assert_rewrite_equivalent(source, rewritten, "loss", inputs, autograph=True)


def test_an_if_on_the_elements_of_a_likely_tensor_argument_matches():
    source = textwrap.dedent(
        """
        import tensorflow as tf

        @tf.function
        def odd_sum(items):
            total = tf.constant(0)
            for c in items:
                if c % 2 > 0:
                    total += c
            return total
        """
    )
    rewritten = rewrite(source, unsafe=True)
    inputs = [([tf.constant(v) for v in values],) for values in ([1, 2, 3], [2, 4], [5])]
    assert_rewrite_equivalent(source, rewritten, "odd_sum", inputs, autograph=False)


# An `if`/`elif` chain holding an `if`/`elif`, refused at first for its `print`.
NESTED_CHAIN = (Path(__file__).parent.parent / "data" / "nested_chain.py").read_text()


def test_a_chain_with_a_nested_chain_rewritten_in_two_rounds_matches():
    """An `if`/`elif` chain holding an `if`/`elif` (a static shape test, then a
    tensor one) and a `print`: `fix` converts the inner chain, then the outer
    one once the `print` is a `tf.print`; the rewrite runs without AutoGraph.
    The inputs reach every branch, both shape sides included."""
    fixed = fix_source(NESTED_CHAIN, select=["TFR101", "TFR103"])
    assert check_source(fixed, select=["TFR101", "TFR103"]) == []
    inputs = [
        (tf.fill([size], error),) for size in (1, 3) for error in (-1.0, 0.5, 1.2, 1.6, 1.8, 2.5)
    ]
    with capture_fds():
        assert_rewrite_equivalent(NESTED_CHAIN, fixed, "forward", inputs, autograph=False)


def test_an_index_of_a_slice_of_the_dynamic_shape_is_a_scalar_condition():
    """`size = tf.shape(images)[1:-1]` is rank 1 like `tf.shape(images)`, so
    `size[0]` is a scalar: the `if` becomes a safe `tf.cond`, equal to the
    eager original on images on both sides of the threshold, without
    AutoGraph."""
    source = textwrap.dedent(
        """
        import tensorflow as tf

        @tf.function
        def score(images):
            size = tf.shape(images)[1:-1]
            if size[0] < 8:
                out = tf.reduce_mean(images)
            else:
                out = tf.reduce_max(images)
            return out
        """
    )
    rewritten = rewrite(source)
    assert "tf.cond(" in rewritten
    inputs = [(tf.fill([2, 4, 4, 3], 2.0),), (tf.random.uniform([2, 16, 16, 3]),)]
    assert_rewrite_equivalent(source, rewritten, "score", inputs, autograph=False)
