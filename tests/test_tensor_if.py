"""TFR101 (tensor-if) as before/after source pairs: every rewrite form, every
refusal (a finding with the reason and no fix), and the Python conditions
that must stay Python `if`s without a finding."""

from __future__ import annotations

import textwrap

import pytest

from tfrewrite.api import check_source, fix_source

HEADER = "import tensorflow as tf\n\n@tf.function\ndef loss(y_true, y_pred):\n"


def loss_source(body: str) -> str:
    """A traced loss function with `body` (dedented) as its body."""
    return HEADER + textwrap.indent(textwrap.dedent(body).strip("\n") + "\n", "    ")


def fixed(source: str) -> str:
    result = fix_source(source, select=["TFR101"])
    assert fix_source(result, select=["TFR101"]) == result, "fixing twice changed the result"
    assert check_source(result, select=["TFR101"]) == [], result
    return result


def messages(source: str) -> list[str]:
    return [f.message for f in check_source(source, select=["TFR101"])]


# -- forms: (before body, after body) -----------------------------------------------------

FORMS = {
    "return_return": (
        """
        err = tf.reduce_mean(y_pred - y_true)
        if err > 1.0:
            return err * 2.0
        else:
            return err
        """,
        """
        err = tf.reduce_mean(y_pred - y_true)
        return tf.cond(err > 1.0, lambda: err * 2.0, lambda: err)
        """,
    ),
    "early_return_rest_becomes_false_branch": (
        """
        err = tf.reduce_mean(y_pred - y_true)
        if err > 1.0:
            return tf.sqrt(err)
        squared = tf.square(err)
        return squared + 1.0
        """,
        """
        err = tf.reduce_mean(y_pred - y_true)
        def _false_fn():
            squared = tf.square(err)
            return squared + 1.0
        return tf.cond(err > 1.0, lambda: tf.sqrt(err), _false_fn)
        """,
    ),
    "two_early_returns": (
        """
        err = tf.reduce_mean(y_pred - y_true)
        if err > 1.0:
            return err
        if err < -1.0:
            return -err
        return err * 0.5
        """,
        """
        err = tf.reduce_mean(y_pred - y_true)
        return tf.cond(
            err > 1.0,
            lambda: err,
            lambda: tf.cond(err < -1.0, lambda: -err, lambda: err * 0.5),
        )
        """,
    ),
    "two_outputs": (
        """
        err = tf.reduce_mean(y_pred - y_true)
        if err > 1.0:
            w = err * 2.0
            b = err + 1.0
        else:
            w = err
            b = -err
        return w + b
        """,
        """
        err = tf.reduce_mean(y_pred - y_true)
        w, b = tf.cond(err > 1.0, lambda: (err * 2.0, err + 1.0), lambda: (err, -err))
        return w + b
        """,
    ),
    "one_branch_keeps_old_value": (
        """
        err = tf.reduce_mean(y_pred - y_true)
        scale = tf.constant(1.0)
        if err > 0.5:
            scale = scale * 3.0
        return err * scale
        """,
        """
        err = tf.reduce_mean(y_pred - y_true)
        scale = tf.constant(1.0)
        scale = tf.cond(err > 0.5, lambda: scale * 3.0, lambda: scale)
        return err * scale
        """,
    ),
    "branch_local_variable_stays_local": (
        """
        err = tf.reduce_mean(y_pred - y_true)
        if err > 0.0:
            tmp = tf.square(err)
            result = tmp + err
        else:
            result = -err
        return result
        """,
        """
        err = tf.reduce_mean(y_pred - y_true)
        def _result_if_true():
            tmp = tf.square(err)
            result = tmp + err
            return result
        result = tf.cond(err > 0.0, _result_if_true, lambda: -err)
        return result
        """,
    ),
    "augmented_assignment_as_lambda": (
        """
        total = tf.reduce_sum(y_pred)
        if total < 0.0:
            total *= -2.0 + 1.0
        return total
        """,
        """
        total = tf.reduce_sum(y_pred)
        total = tf.cond(total < 0.0, lambda: total * (-2.0 + 1.0), lambda: total)
        return total
        """,
    ),
    "augmented_assignments_take_the_old_value_as_parameter": (
        """
        err = tf.reduce_mean(y_pred - y_true)
        total = err
        if err < 0.0:
            total += 10.0
            total *= 2.0
        return total
        """,
        """
        err = tf.reduce_mean(y_pred - y_true)
        total = err
        def _total_if_true(total):
            total += 10.0
            total *= 2.0
            return total
        total = tf.cond(err < 0.0, lambda: _total_if_true(total), lambda: total)
        return total
        """,
    ),
    "tuple_assignment": (
        """
        err = tf.reduce_mean(y_pred - y_true)
        a, b = err, err + 1.0
        if err > 0.0:
            a, b = b * 2.0, a
        return a - b
        """,
        """
        err = tf.reduce_mean(y_pred - y_true)
        a, b = err, err + 1.0
        def _true_fn(a, b):
            a, b = b * 2.0, a
            return a, b
        a, b = tf.cond(err > 0.0, lambda: _true_fn(a, b), lambda: (a, b))
        return a - b
        """,
    ),
    "elif_chain_becomes_nested_conds": (
        """
        err = tf.reduce_mean(y_pred - y_true)
        if err > 1.0:
            return err * 2.0
        elif err < -1.0:
            return -err
        else:
            return err + 0.25
        """,
        """
        err = tf.reduce_mean(y_pred - y_true)
        return tf.cond(
            err > 1.0,
            lambda: err * 2.0,
            lambda: tf.cond(err < -1.0, lambda: -err, lambda: err + 0.25),
        )
        """,
    ),
    "elif_chain_with_assignments": (
        """
        err = tf.reduce_mean(y_pred - y_true)
        if err > 1.0:
            factor = 3.0
        elif err > 0.0:
            factor = 2.0
        else:
            factor = 0.5
        return err * factor
        """,
        """
        err = tf.reduce_mean(y_pred - y_true)
        factor = tf.cond(
            err > 1.0,
            lambda: tf.constant(3.0, dtype=err.dtype),
            lambda: tf.cond(
                err > 0.0,
                lambda: tf.constant(2.0, dtype=err.dtype),
                lambda: tf.constant(0.5, dtype=err.dtype),
            ),
        )
        return err * factor
        """,
    ),
    "nested_ifs_inside_out": (
        """
        err = tf.reduce_mean(y_pred - y_true)
        scale = 1.0
        if err > 0.0:
            scale = 2.0
            if err > 1.0:
                scale = 3.0
        return err * scale
        """,
        """
        err = tf.reduce_mean(y_pred - y_true)
        scale = 1.0
        def _scale_if_true():
            scale = 2.0
            scale = tf.cond(
                err > 1.0,
                lambda: tf.constant(3.0, dtype=err.dtype),
                lambda: tf.cast(scale, err.dtype),
            )
            return scale
        scale = tf.cond(err > 0.0, _scale_if_true, lambda: tf.cast(scale, err.dtype))
        return err * scale
        """,
    ),
    "early_return_in_nested_if": (
        """
        err = tf.reduce_mean(y_pred - y_true)
        if err > 0.0:
            if err > 1.0:
                return err * 10.0
        return err + 1.0
        """,
        """
        err = tf.reduce_mean(y_pred - y_true)
        return tf.cond(
            err > 0.0,
            lambda: tf.cond(err > 1.0, lambda: err * 10.0, lambda: err + 1.0),
            lambda: err + 1.0,
        )
        """,
    ),
    "logical_operators": (
        """
        err = tf.reduce_mean(y_pred - y_true)
        peak = tf.reduce_max(y_pred)
        if (err > 0.0 and peak < 2.0) or not err > -1.0:
            return err * 4.0
        return err
        """,
        """
        err = tf.reduce_mean(y_pred - y_true)
        peak = tf.reduce_max(y_pred)
        return tf.cond(
            tf.logical_or(tf.logical_and(err > 0.0, peak < 2.0), tf.logical_not(err > -1.0)),
            lambda: err * 4.0,
            lambda: err,
        )
        """,
    ),
    "chained_comparison": (
        """
        m = tf.reduce_mean(y_pred - y_true)
        if -1.0 < m <= 1.0:
            m = m * 10.0
        return m
        """,
        """
        m = tf.reduce_mean(y_pred - y_true)
        m = tf.cond(tf.logical_and(-1.0 < m, m <= 1.0), lambda: m * 10.0, lambda: m)
        return m
        """,
    ),
    "tf_equal": (
        """
        err = tf.reduce_mean(y_pred - y_true)
        if tf.equal(err, 0.0):
            return tf.constant(-1.0)
        return err
        """,
        """
        err = tf.reduce_mean(y_pred - y_true)
        return tf.cond(tf.equal(err, 0.0), lambda: tf.constant(-1.0), lambda: err)
        """,
    ),
    "numeric_scalar_compared_to_zero": (
        """
        positives = tf.math.count_nonzero(y_pred > 0.0)
        total = tf.reduce_sum(y_pred)
        if positives:
            total = total / tf.cast(positives, tf.float32)
        return total
        """,
        """
        positives = tf.math.count_nonzero(y_pred > 0.0)
        total = tf.reduce_sum(y_pred)
        total = tf.cond(
            positives != 0,
            lambda: total / tf.cast(positives, tf.float32),
            lambda: total,
        )
        return total
        """,
    ),
    "conditional_expression": (
        """
        err = tf.reduce_mean(y_pred - y_true)
        return (err * 2.0) if tf.reduce_max(y_pred) > 0.5 else err
        """,
        """
        err = tf.reduce_mean(y_pred - y_true)
        return tf.cond(tf.reduce_max(y_pred) > 0.5, lambda: err * 2.0, lambda: err)
        """,
    ),
    "python_int_becomes_float": (
        """
        err = tf.reduce_mean(y_pred - y_true)
        if err > 0.0:
            penalty = tf.square(err)
        else:
            penalty = 0
        return err + penalty
        """,
        """
        err = tf.reduce_mean(y_pred - y_true)
        penalty = tf.cond(
            err > 0.0,
            lambda: tf.square(err),
            lambda: tf.constant(0.0, dtype=err.dtype),
        )
        return err + penalty
        """,
    ),
    "returned_python_int_becomes_float": (
        """
        err = tf.reduce_mean(y_pred - y_true)
        if err < 0.0:
            return 0
        return err
        """,
        """
        err = tf.reduce_mean(y_pred - y_true)
        return tf.cond(err < 0.0, lambda: tf.constant(0.0, dtype=err.dtype), lambda: err)
        """,
    ),
    "tensorflow_side_effects_stay_in_the_branch": (
        """
        err = tf.reduce_mean(y_pred - y_true)
        if err > 0.0:
            tf.print("positive error", err)
            step.assign_add(1)
        return err
        """,
        """
        err = tf.reduce_mean(y_pred - y_true)
        def _true_fn():
            tf.print("positive error", err)
            step.assign_add(1)
        tf.cond(err > 0.0, _true_fn, lambda: None)
        return err
        """,
    ),
    "comments_are_kept": (
        """
        mse = tf.reduce_mean(tf.square(y_pred - y_true))
        # clip large losses
        if mse > 4.0:  # large
            # the square root keeps the gradient small
            mse = tf.sqrt(mse)
        # negative-free anyway
        else:
            mse = mse * 1.0
        return mse
        """,
        """
        mse = tf.reduce_mean(tf.square(y_pred - y_true))
        # clip large losses
        def _mse_if_true(mse):  # large
            # the square root keeps the gradient small
            mse = tf.sqrt(mse)
            return mse
        # negative-free anyway
        def _mse_if_false(mse):
            mse = mse * 1.0
            return mse
        mse = tf.cond(mse > 4.0, lambda: _mse_if_true(mse), lambda: _mse_if_false(mse))
        return mse
        """,
    ),
    "branch_function_name_avoids_names_in_use": (
        """
        _err_if_true = 2.0
        err = tf.reduce_mean(y_pred - y_true)
        if err > 0.0:
            err = tf.square(err)
            err = err * 2.0
        return err * _err_if_true
        """,
        """
        _err_if_true = 2.0
        err = tf.reduce_mean(y_pred - y_true)
        def _err_if_true_2(err):
            err = tf.square(err)
            err = err * 2.0
            return err
        err = tf.cond(err > 0.0, lambda: _err_if_true_2(err), lambda: err)
        return err * _err_if_true
        """,
    ),
    "conditional_expressions_inside_branches": (
        """
        x = tf.reduce_mean(y_pred)
        if x > 0.0:
            x = -x if x < 5.0 else x
        else:
            x = -2.0 * x if x < 5.0 else 1.0
        return x
        """,
        """
        x = tf.reduce_mean(y_pred)
        x = tf.cond(
            x > 0.0,
            lambda: tf.cond(x < 5.0, lambda: -x, lambda: x),
            lambda: tf.cond(
                x < 5.0,
                lambda: -2.0 * x,
                lambda: tf.constant(1.0, dtype=x.dtype),
            ),
        )
        return x
        """,
    ),
    "composite_boolean_operators": (
        """
        a = tf.reduce_mean(y_pred)
        b = tf.reduce_max(y_pred)
        if a > 0.0 or b > 1.0 or a < b and b < 2.0:
            return a
        return b
        """,
        """
        a = tf.reduce_mean(y_pred)
        b = tf.reduce_max(y_pred)
        return tf.cond(
            tf.logical_or(tf.logical_or(a > 0.0, b > 1.0), tf.logical_and(a < b, b < 2.0)),
            lambda: a,
            lambda: b,
        )
        """,
    ),
    "inside_a_python_loop": (
        """
        total = tf.reduce_sum(y_pred)
        for _ in range(3):
            if total > 1.0:
                total = total * 0.5
        return total
        """,
        """
        total = tf.reduce_sum(y_pred)
        for _ in range(3):
            total = tf.cond(total > 1.0, lambda: total * 0.5, lambda: total)
        return total
        """,
    ),
    "inside_a_with_block": (
        """
        m = tf.reduce_mean(y_pred)
        with tf.name_scope("clip"):
            if m > 1.0:
                m = tf.sqrt(m)
        return m
        """,
        """
        m = tf.reduce_mean(y_pred)
        with tf.name_scope("clip"):
            m = tf.cond(m > 1.0, lambda: tf.sqrt(m), lambda: m)
        return m
        """,
    ),
    "tuple_returns": (
        """
        m = tf.reduce_mean(y_pred)
        if m > 1.0:
            return m, m * 2.0
        return m * 0.5, m
        """,
        """
        m = tf.reduce_mean(y_pred)
        return tf.cond(m > 1.0, lambda: (m, m * 2.0), lambda: (m * 0.5, m))
        """,
    ),
    "walrus_in_the_condition": (
        """
        m = tf.reduce_mean(y_pred)
        if (s := tf.reduce_sum(y_pred)) > 1.0:
            m = m + s
        return m
        """,
        """
        m = tf.reduce_mean(y_pred)
        m = tf.cond((s := tf.reduce_sum(y_pred)) > 1.0, lambda: m + s, lambda: m)
        return m
        """,
    ),
    "condition_uses_the_bindings_that_reach_it": (
        """
        m = tf.reduce_mean(y_pred)
        if m > 1.0:
            m = m * 0.5
        m = postprocess(m)
        return m
        """,
        """
        m = tf.reduce_mean(y_pred)
        m = tf.cond(m > 1.0, lambda: m * 0.5, lambda: m)
        m = postprocess(m)
        return m
        """,
    ),
    "successive_ifs_with_the_same_local_names": (
        """
        m = tf.reduce_mean(y_pred)
        if m > 1.0:
            tmp = m * 2.0
            m = tmp + 1.0
        if m > 5.0:
            tmp = m / 2.0
            m = tmp - 1.0
        return m
        """,
        """
        m = tf.reduce_mean(y_pred)
        def _m_if_true(m):
            tmp = m * 2.0
            m = tmp + 1.0
            return m
        m = tf.cond(m > 1.0, lambda: _m_if_true(m), lambda: m)
        def _m_if_true(m):
            tmp = m / 2.0
            m = tmp - 1.0
            return m
        m = tf.cond(m > 5.0, lambda: _m_if_true(m), lambda: m)
        return m
        """,
    ),
    "later_round_sees_through_branch_functions": (
        """
        m = tf.reduce_mean(y_pred)
        if m > 1.0:
            m = m * 2.0
            tf.print(m)
        if m > 0.5:
            if m > 3.0:
                m = m + 1.0
        return m
        """,
        """
        m = tf.reduce_mean(y_pred)
        def _m_if_true(m):
            m = m * 2.0
            tf.print(m)
            return m
        m = tf.cond(m > 1.0, lambda: _m_if_true(m), lambda: m)
        m = tf.cond(
            m > 0.5,
            lambda: tf.cond(m > 3.0, lambda: m + 1.0, lambda: m),
            lambda: m,
        )
        return m
        """,
    ),
    "returns_inside_with_blocks": (
        """
        x = tf.reduce_mean(y_pred)
        with tf.name_scope("outer"):
            if x > 0.0:
                if x < 5.0:
                    with tf.name_scope("inner"):
                        return x
                else:
                    return x * x
            else:
                return x * x * x
        return x * x * x * x
        """,
        """
        x = tf.reduce_mean(y_pred)
        with tf.name_scope("outer"):
            def _true_fn_2():
                def _true_fn():
                    with tf.name_scope("inner"):
                        return x
                return tf.cond(x < 5.0, _true_fn, lambda: x * x)
            return tf.cond(x > 0.0, _true_fn_2, lambda: x * x * x)
        return x * x * x * x
        """,
    ),
    "rest_reads_and_rebinds_a_local": (
        """
        t = tf.reduce_sum(y_pred)
        if t > 1.0:
            return t
        t = tf.stack([t, t])
        return tf.reduce_sum(t)
        """,
        """
        t = tf.reduce_sum(y_pred)
        def _false_fn(t):
            t = tf.stack([t, t])
            return tf.reduce_sum(t)
        return tf.cond(t > 1.0, lambda: t, lambda: _false_fn(t))
        """,
    ),
    "and_whose_right_operand_can_fail_stays_lazy": (
        """
        err = tf.reduce_mean(y_pred - y_true)
        count = tf.reduce_sum(tf.cast(y_pred > 0.0, tf.int32))
        if count > 0 and 6 // count > 1:
            return err * 2.0
        return err
        """,
        """
        err = tf.reduce_mean(y_pred - y_true)
        count = tf.reduce_sum(tf.cast(y_pred > 0.0, tf.int32))
        return tf.cond(
            tf.cond(count > 0, lambda: 6 // count > 1, lambda: False),
            lambda: err * 2.0,
            lambda: err,
        )
        """,
    ),
    "or_whose_right_operand_can_fail_stays_lazy": (
        """
        err = tf.reduce_mean(y_pred - y_true)
        count = tf.reduce_sum(tf.cast(y_pred > 0.0, tf.int32))
        if count == 0 or 6 % count == 0:
            err = err * 2.0
        return err
        """,
        """
        err = tf.reduce_mean(y_pred - y_true)
        count = tf.reduce_sum(tf.cast(y_pred > 0.0, tf.int32))
        err = tf.cond(
            tf.cond(count == 0, lambda: True, lambda: 6 % count == 0),
            lambda: err * 2.0,
            lambda: err,
        )
        return err
        """,
    ),
    "and_of_pure_tensorflow_math_stays_eager": (
        """
        err = tf.reduce_mean(y_pred - y_true)
        if err > 0.0 and tf.reduce_max(y_pred) < 2.0:
            return err * 2.0
        return err
        """,
        """
        err = tf.reduce_mean(y_pred - y_true)
        return tf.cond(
            tf.logical_and(err > 0.0, tf.reduce_max(y_pred) < 2.0),
            lambda: err * 2.0,
            lambda: err,
        )
        """,
    ),
    "walrus_in_a_branch_makes_a_branch_function": (
        """
        err = tf.reduce_mean(y_pred - y_true)
        m = err
        out = err
        if err > 0.0:
            out = (m := err * 2.0) + 1.0
        return out + m
        """,
        """
        err = tf.reduce_mean(y_pred - y_true)
        m = err
        out = err
        def _true_fn(m):
            out = (m := err * 2.0) + 1.0
            return out, m
        out, m = tf.cond(err > 0.0, lambda: _true_fn(m), lambda: (out, m))
        return out + m
        """,
    ),
}


@pytest.mark.parametrize("name", sorted(FORMS))
def test_form(name):
    before, after = FORMS[name]
    source = loss_source(before)
    assert len(messages(source)) >= 1
    assert fixed(source) == loss_source(after)


# -- branch functions and free names ----------------------------------------------------------


def test_a_name_read_then_assigned_in_a_block_is_a_parameter():
    source = loss_source(
        """
        mse = tf.reduce_mean(tf.square(y_pred - y_true))
        if mse > 4.0:
            mse = tf.sqrt(mse)
            tf.print(mse)
        return mse
        """
    )
    assert "def _mse_if_true(mse):" in fixed(source)
    assert "lambda: _mse_if_true(mse)" in fixed(source)


def test_nested_conditionals_wait_for_the_inner_one():
    source = loss_source(
        """
        err = tf.reduce_mean(y_pred - y_true)
        scale = 1.0
        if err > 0.0:
            if err > 1.0:
                scale = 3.0
        return err * scale
        """
    )
    found = messages(source)
    assert len(found) == 2
    assert any("after the tensor conditionals inside it" in m for m in found)


def test_tensorflow_alias_of_the_file_is_used():
    source = textwrap.dedent(
        """
        import tensorflow as tfl

        @tfl.function
        def loss(y_true, y_pred):
            err = tfl.reduce_mean(y_pred - y_true)
            if err > 0.0:
                return err
            return -err
        """
    )
    assert "return tfl.cond(err > 0.0, lambda: err, lambda: -err)" in fixed(source)


def test_unknown_dtype_scalar_is_cast_to_bool():
    source = textwrap.dedent(
        """
        import tensorflow as tf

        @tf.function
        def f(x: tf.Tensor):
            n = tf.reduce_sum(x)
            if n:
                x = x + 1
            return x
        """
    )
    assert "x = tf.cond(tf.cast(n, tf.bool), lambda: x + 1, lambda: x)" in fixed(source)


def test_loss_given_to_compile_is_traced_code():
    source = textwrap.dedent(
        """
        import tensorflow as tf

        def my_loss(y_true, y_pred):
            err = tf.reduce_mean(tf.abs(y_true - y_pred))
            if err > 1.0:
                return tf.sqrt(err)
            return err

        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        model.compile(optimizer="adam", loss=my_loss)
        """
    )
    assert "return tf.cond(err > 1.0, lambda: tf.sqrt(err), lambda: err)" in fixed(source)


def test_layer_call_converts_tensor_ifs_and_keeps_python_ones():
    source = textwrap.dedent(
        """
        import tensorflow as tf

        class Clip(tf.keras.layers.Layer):
            def call(self, x, training=None):
                if training:
                    x = x * 0.5
                if self.from_logits:
                    x = tf.sigmoid(x)
                m = tf.reduce_max(x)
                if m > 10.0:
                    x = x / m
                return x
        """
    )
    result = fixed(source)
    assert "        if training:\n" in result
    assert "        if self.from_logits:\n" in result
    assert "        x = tf.cond(m > 10.0, lambda: x / m, lambda: x)\n" in result


def test_an_import_is_added_when_the_file_has_none():
    source = textwrap.dedent(
        """
        from tensorflow import function, reduce_mean

        @function
        def loss(y_true, y_pred):
            err = reduce_mean(y_pred - y_true)
            if err > 0.0:
                return err
            return -err
        """
    )
    result = fixed(source)
    assert "import tensorflow as tf\n" in result
    assert "return tf.cond(err > 0.0, lambda: err, lambda: -err)" in result


# -- refusals: (body, reason) ---------------------------------------------------------------

REFUSALS = {
    "defined_only_in_true_branch": (
        """
        m = tf.reduce_mean(y_pred)
        if m > 0.0:
            w = m * 2.0
        return m + w
        """,
        "'w' is defined only in the true branch",
    ),
    "defined_only_in_false_branch": (
        """
        m = tf.reduce_mean(y_pred)
        if m > 0.0:
            pass
        else:
            w = m
        return w
        """,
        "'w' is defined only in the false branch",
    ),
    "assigned_on_some_paths_only": (
        """
        m = tf.reduce_mean(y_pred)
        if m > 0.0:
            if training:
                w = m
        else:
            w = -m
        return w
        """,
        "'w' is assigned only on some paths of the true branch",
    ),
    "returns_without_a_return_after": (
        """
        err = tf.reduce_mean(y_pred - y_true)
        if err > 0.0:
            return err
        tf.print(err)
        """,
        "the true branch returns a value but the false branch does not",
    ),
    "bare_return": (
        """
        err = tf.reduce_mean(y_pred - y_true)
        if err > 0.0:
            return
        return err
        """,
        "`return` without a value",
    ),
    "return_inside_a_loop": (
        """
        err = tf.reduce_mean(y_pred - y_true)
        for i in range(3):
            if err > 0.0:
                return err
        return -err
        """,
        "returns from inside a `for` block",
    ),
    "condition_not_a_scalar": (
        """
        if y_pred > 0.0:
            return y_pred
        return -y_pred
        """,
        "is a tensor not known to be a scalar",
    ),
    "length_of_a_tensor": (
        """
        kept = tf.boolean_mask(y_pred, y_pred > 0.0)
        if not tf.cast(len(kept), bool):
            kept = tf.zeros([1])
        return tf.reduce_sum(kept)
        """,
        "`len(kept)` of a tensor needs AutoGraph, since its length may be unknown while "
        "tracing: write `tf.shape(kept)[0]`",
    ),
    "condition_with_python_operand_of_unknown_shape": (
        """
        m = tf.reduce_mean(y_pred)
        if m > threshold:
            m = m * 2.0
        return m
        """,
        "`threshold` is not known to be a Python number",
    ),
    "python_and_tensor_mixed": (
        """
        if y_true is not None and tf.reduce_sum(y_pred) > 0.0:
            return tf.reduce_sum(y_pred)
        return tf.reduce_sum(y_true)
        """,
        "mixes the Python value `y_true is not None` and a tensor with `and`",
    ),
    "chained_comparison_with_a_call": (
        """
        m = tf.reduce_mean(y_pred)
        if 0.0 < tf.reduce_max(y_pred) < 1.0:
            m = m * 2.0
        return m
        """,
        "would evaluate `tf.reduce_max(y_pred)` twice",
    ),
    "break": (
        """
        m = tf.reduce_mean(y_pred)
        for i in range(3):
            if m > 1.0:
                break
            m = m * 0.5
        return m
        """,
        "contains `break`",
    ),
    "continue": (
        """
        m = tf.reduce_mean(y_pred)
        for i in range(3):
            if m > 1.0:
                continue
            m = m * 0.5
        return m
        """,
        "contains `continue`",
    ),
    "yield": (
        """
        m = tf.reduce_mean(y_pred)
        if m > 1.0:
            yield m
        yield -m
        """,
        "contains `yield`",
    ),
    "global": (
        """
        m = tf.reduce_mean(y_pred)
        if m > 1.0:
            global LAST
            LAST = m
        return m
        """,
        "'LAST' is declared `global`/`nonlocal` and assigned in a branch",
    ),
    "nonlocal": (
        """
        m = tf.reduce_mean(y_pred)
        if m > 1.0:
            nonlocal last
            last = m
        return m
        """,
        "'last' is declared `global`/`nonlocal` and assigned in a branch",
    ),
    "global_declared_for_the_function": (
        """
        global LAST
        m = tf.reduce_mean(y_pred)
        if m > 1.0:
            LAST = m
        return m
        """,
        "'LAST' is declared `global`/`nonlocal` and assigned in a branch",
    ),
    "function_defined_in_a_branch_and_used_after": (
        """
        m = tf.reduce_mean(y_pred)
        if m > 1.0:
            def scale(v):
                return v * 2.0
        else:
            def scale(v):
                return v
        return scale(m)
        """,
        "'scale' is a function, class or module defined in a branch",
    ),
    "generator_function": (
        """
        m = tf.reduce_mean(y_pred)
        yield m
        if m > 1.0:
            return m
        return -m
        """,
        "the function is a generator",
    ),
    "print": (
        """
        m = tf.reduce_mean(y_pred)
        if m > 1.0:
            print("big loss")
        return m
        """,
        "calls `print`",
    ),
    "list_append": (
        """
        m = tf.reduce_mean(y_pred)
        if m > 1.0:
            history.append(m)
        return m
        """,
        "calls `history.append`",
    ),
    "attribute_assignment": (
        """
        m = tf.reduce_mean(y_pred)
        if m > 1.0:
            state.last = m
        return m
        """,
        "assigns `state.last`",
    ),
    "raise": (
        """
        m = tf.reduce_mean(y_pred)
        if m > 1e6:
            raise ValueError("diverged")
        return m
        """,
        "uses `raise`",
    ),
    "unknown_call_for_its_effect": (
        """
        m = tf.reduce_mean(y_pred)
        if m > 1.0:
            log_big_loss(m)
        return m
        """,
        "calls `log_big_loss` for its effect",
    ),
    "int_against_unknown_dtype": (
        """
        m = tf.reduce_mean(y_pred)
        n = tf.size(y_pred)
        if m > 1.0:
            k = 0
        else:
            k = n
        return k
        """,
        "'k' is a Python int in the true branch but an integer tensor of unknown width",
    ),
    "none_in_a_branch": (
        """
        m = tf.reduce_mean(y_pred)
        if m > 1.0:
            z = None
        else:
            z = m
        return z
        """,
        "'z' is None in the true branch",
    ),
    "bool_against_float_tensors": (
        """
        m = tf.reduce_mean(y_pred)
        if m > 1.0:
            z = m > 2.0
        else:
            z = m
        return z
        """,
        "'z' is a boolean tensor in the true branch but a floating tensor",
    ),
    "python_int_before_the_if_meeting_a_tensor_of_unknown_dtype": (
        """
        m = tf.reduce_mean(y_pred)
        penalty = 0
        if m > 1.0:
            penalty = tf.cast(m > 2.0, tf.float32) * 2.0
        return penalty
        """,
        "'penalty' is a Python number before the `if` but a floating-point tensor in the true "
        "branch, and no tensor defined before the `if` is known to have its dtype",
    ),
    "nested_refusal_blocks_the_outer_if": (
        """
        m = tf.reduce_mean(y_pred)
        if m > 1.0:
            if m > 2.0:
                print("huge")
            m = m * 0.5
        return m
        """,
        "a tensor `if` inside it cannot be rewritten: the true branch calls `print`",
    ),
    "conditional_expression_with_none": (
        """
        m = tf.reduce_mean(y_pred)
        return m if m > 0.0 else None
        """,
        "the value is None in the false branch",
    ),
    "return_possibly_undefined": (
        """
        x = tf.reduce_mean(y_pred)
        if x > 0.0:
            if x < 5.0:
                return x
        else:
            return x * x * x
        """,
        "the true branch returns a value but the false branch does not",
    ),
    "code_after_a_with_block_that_may_return": (
        """
        x = tf.reduce_mean(y_pred)
        with tf.name_scope("a"):
            if x > 0.0:
                return x
            y = x * 2.0
        return y
        """,
        "code after a `with` block that returns on some paths",
    ),
    "return_inside_try": (
        """
        x = tf.reduce_mean(y_pred)
        try:
            if x > 0.0:
                return x
            return -x
        finally:
            tf.print("done")
        """,
        "returns from inside a `try` block",
    ),
    "empty_branches": (
        """
        m = tf.reduce_mean(y_pred)
        if m > 1.0:
            pass
        return m
        """,
        "both branches are empty",
    ),
    "conditional_expression_with_a_list": (
        """
        parts = tf.unstack(y_pred) if tf.size(y_pred) > 0 else []
        return parts
        """,
        "'parts' is a Python container in the false branch",
    ),
    "too_much_code_to_copy": (
        """
        m = tf.reduce_mean(y_pred)
        if m > 0.0:
            if m > 1.0:
                return m
        a = m + 1.0
        b = a * 2.0
        c = b - 1.0
        d = c / 2.0
        e = d + a
        return e
        """,
        "would have to be copied into both of its branches",
    ),
    "closure_called_in_the_branch_that_rebinds_its_name": (
        """
        err = tf.reduce_mean(y_pred - y_true)
        k = 1.0
        scaled = lambda: err * k
        if err > 0.0:
            k = 3.0
            out = scaled()
        else:
            out = err
        return out
        """,
        "the true branch assigns 'k', which the nested function `scaled` reads, and uses `scaled`",
    ),
    "closure_called_through_another_closure": (
        """
        err = tf.reduce_mean(y_pred - y_true)
        k = 1.0
        def scaled():
            return err * k
        def twice():
            return scaled() * 2.0
        if err > 0.0:
            k = 3.0
            out = twice()
        else:
            out = err
        return out
        """,
        "the true branch assigns 'k', which the nested function `twice` reads",
    ),
    "closure_called_in_the_rest_moved_into_a_branch": (
        """
        err = tf.reduce_mean(y_pred - y_true)
        k = 1.0
        def scaled():
            return err * k
        if err > 1.0:
            return err
        k = 2.0
        return scaled()
        """,
        "the false branch assigns 'k', which the nested function `scaled` reads",
    ),
    "augmented_python_int_meets_a_float_tensor": (
        """
        err = tf.reduce_mean(y_pred - y_true)
        total = 0
        if err > 0.0:
            total += err
        return total
        """,
        "'total' is a Python number before the `if` but a floating-point tensor in the true "
        "branch, and no tensor defined before the `if` is known to have its dtype",
    ),
    "chained_comparison_whose_last_operand_can_fail": (
        """
        err = tf.reduce_mean(y_pred - y_true)
        count = tf.reduce_sum(tf.cast(y_pred > 0.0, tf.int32))
        if 0 < count < 6 // count:
            return err * 2.0
        return err
        """,
        "the chained comparison would evaluate `6 // count` even when an earlier link is False",
    ),
    "branch_calls_a_closure_that_rebinds_with_nonlocal": (
        """
        err = tf.reduce_mean(y_pred - y_true)
        k = err
        def bump():
            nonlocal k
            k = k * 2.0
            return k
        if err > 0.0:
            out = bump()
        else:
            out = err
        return out + k
        """,
        "the true branch uses `bump`, which rebinds 'k' with `nonlocal`/`global`",
    ),
    "conditional_expression_calls_a_closure_that_rebinds_with_nonlocal": (
        """
        err = tf.reduce_mean(y_pred - y_true)
        k = err
        def bump():
            nonlocal k
            k = k * 2.0
            return k
        out = bump() if err > 0.0 else err
        return out + k
        """,
        "the true branch uses `bump`, which rebinds 'k' with `nonlocal`/`global`",
    ),
    "membership_test_of_a_tensor": (
        """
        err = tf.reduce_mean(y_pred - y_true)
        if err in (0.0, 1.0):
            err = err + 5.0
        return err
        """,
        "`err in (0.0, 1.0)` compares the tensor `err` with each element using `==`",
    ),
    "walrus_in_a_conditional_expression_branch": (
        """
        err = tf.reduce_mean(y_pred - y_true)
        m = err
        out = (m := err * 2.0) if err > 0.0 else m
        return out + m
        """,
        "the true branch binds 'm' with `:=`, which in a `tf.cond` branch would bind a local",
    ),
    "walrus_on_the_lazy_side_of_and": (
        """
        err = tf.reduce_mean(y_pred - y_true)
        if err > 0.0 and (m := err * 2.0) > 1.0:
            return m
        return err
        """,
        "binds a name with `:=` but runs only when the left operand does not decide",
    ),
}


@pytest.mark.parametrize("name", sorted(REFUSALS))
def test_refusal(name):
    body, reason = REFUSALS[name]
    source = loss_source(body)
    if name == "nonlocal":
        source = (
            "import tensorflow as tf\n\ndef outer():\n    last = None\n\n    "
            + source.split("\n", 2)[2].replace("\n", "\n    ").rstrip()
            + "\n"
        )
    found = check_source(source, select=["TFR101"])
    assert found, "a tensor `if` that cannot be rewritten is still a finding"
    assert any(reason in f.message and f.fix is None for f in found), [f.message for f in found]
    assert all("cannot be rewritten" in f.message for f in found if f.fix is None)
    assert fix_source(source, select=["TFR101"]).count("tf.cond") <= sum(
        1 for f in found if f.fix is not None
    )


def test_a_closure_reading_a_branch_variable_keeps_it_an_output():
    source = loss_source(
        """
        m = tf.reduce_mean(y_pred)
        read_w = lambda: w
        if m > 1.0:
            w = m * 2.0
        return read_w()
        """
    )
    assert any("'w' is defined only in the true branch" in m for m in messages(source))


def test_refused_if_is_left_unchanged():
    body, _ = REFUSALS["defined_only_in_true_branch"]
    source = loss_source(body)
    assert fix_source(source, select=["TFR101"]) == source


# -- Python conditions: no finding at all ----------------------------------------------------

PYTHON_CONDITIONS = [
    "y_pred.shape[-1] == 1",
    "len(y_pred.shape) == 2",
    "y_pred.shape.rank == 2",
    "y_true is None",
    "y_true is not None",
    "isinstance(y_true, dict)",
    "y_pred.dtype == tf.float16",
    "tf.executing_eagerly()",
    "training",
    "self.from_logits",
    "not training",
    "training and self.from_logits",
]


@pytest.mark.parametrize("condition", PYTHON_CONDITIONS)
def test_python_condition_is_not_reported(condition):
    source = textwrap.dedent(
        f"""
        import tensorflow as tf

        class MyLoss(tf.keras.losses.Loss):
            def call(self, y_true, y_pred, training=False):
                if {condition}:
                    y_pred = y_pred * 2.0
                return tf.reduce_mean(y_pred)
        """
    )
    assert messages(source) == []


def test_untraced_function_is_not_reported():
    source = textwrap.dedent(
        """
        import tensorflow as tf

        def eager_helper(x):
            if tf.reduce_sum(x) > 0:
                return x
            return -x
        """
    )
    assert messages(source) == []


def test_loss_call_is_traced():
    source = textwrap.dedent(
        """
        import tensorflow as tf

        class MyLoss(tf.keras.losses.Loss):
            def call(self, y_true, y_pred):
                err = tf.reduce_mean(y_pred - y_true)
                if err > 1.0:
                    return tf.sqrt(err)
                return err
        """
    )
    assert "return tf.cond(err > 1.0, lambda: tf.sqrt(err), lambda: err)" in fixed(source)


def test_conditional_expression_in_a_lambda_on_its_own_parameter_is_left_alone():
    source = loss_source(
        """
        m = tf.reduce_mean(y_pred)
        sign = lambda y_pred: 1.0 if y_pred > 0 else -1.0
        return m * sign(2.0)
        """
    )
    assert messages(source) == []


def test_conditional_expression_in_a_lambda_on_an_outer_tensor_is_rewritten():
    source = loss_source(
        """
        m = tf.reduce_mean(y_pred)
        pick = lambda: 2.0 if m > 0.0 else 1.0
        return m * pick()
        """
    )
    [finding] = check_source(source, select=["TFR101"])
    assert finding.fix is not None and finding.fix.applicability.value == "unsafe"
    assert "the fix assumes the values it meets are float32" in finding.message
    result = fix_source(source, select=["TFR101"], unsafe_fixes=True)
    assert "pick = lambda: tf.cond(m > 0.0, lambda: 2.0, lambda: 1.0)" in result


@pytest.mark.parametrize(
    "branch",
    ["return super().call(x)", "x = super().call(x)\n                    x = x + 1.0"],
)
def test_zero_argument_super_in_a_branch_is_refused(branch):
    """Inside a branch function or lambda, `super()` has no class cell or
    instance argument to work from and raises at trace time."""
    source = textwrap.dedent(
        f"""
        import keras
        import tensorflow as tf

        class Base(keras.layers.Layer):
            def call(self, x):
                return x * 2.0

        class Sub(Base):
            def call(self, x):
                m = tf.reduce_mean(x)
                if m > 0.0:
                    {branch}
                return x
        """
    )
    found = check_source(source, select=["TFR101"])
    assert [f.fix for f in found] == [None]
    assert "calls `super()` without arguments" in found[0].message
    assert "write `super(Sub, self)`" in found[0].message
    assert fix_source(source, select=["TFR101"]) == source
    explicit = source.replace("super()", "super(Sub, self)")
    assert "tf.cond(" in fixed(explicit)


def test_python_numbers_whose_later_uses_meet_no_known_tensor_make_the_fix_unsafe():
    """`total * scale` with `total` rebound in the branches: which dtype
    `scale` must have is not known (float64 values would not match float32)."""
    source = loss_source(
        """
        err = tf.reduce_mean(y_pred - y_true)
        total = err
        scale = 1.0
        if err > 0.0:
            total += err * 2.0
            scale *= 3.0
        else:
            total -= 1.0
        return total * scale
        """
    )
    [finding] = check_source(source, select=["TFR101"])
    assert finding.fix is not None and finding.fix.applicability.value == "unsafe"
    assert "'scale' is a Python number in both branches" in finding.message
    assert fix_source(source, select=["TFR101"]) == source


def test_python_numbers_take_the_dtype_of_the_tensor_they_meet():
    source = loss_source(
        """
        err = tf.reduce_mean(y_pred - y_true)
        factor = 1
        if err > 1.0:
            factor = 10
        return err * factor
        """
    )
    assert fixed(source) == loss_source(
        """
        err = tf.reduce_mean(y_pred - y_true)
        factor = 1
        factor = tf.cond(
            err > 1.0,
            lambda: tf.constant(10.0, dtype=err.dtype),
            lambda: tf.cast(factor, err.dtype),
        )
        return err * factor
        """
    )


def test_a_python_float_passed_through_takes_the_dtype_of_the_other_branch():
    source = loss_source(
        """
        mse = tf.reduce_mean(tf.square(y_true - y_pred))
        loss = 0.0
        if mse > 1.0:
            loss = mse
        return loss
        """
    )
    assert "loss = tf.cond(mse > 1.0, lambda: mse, lambda: tf.cast(loss, mse.dtype))" in fixed(
        source
    )


@pytest.mark.parametrize(
    "body",
    [
        """
        err = tf.reduce_mean(y_pred - y_true)
        rounds = 3 if err > 1.0 else 1
        for _ in range(rounds):
            err = err * 0.5
        return err
        """,
        """
        err = tf.reduce_mean(y_pred - y_true)
        rounds = 1
        if err > 1.0:
            rounds = 3
        for _ in range(rounds):
            err = err * 0.5
        return err
        """,
    ],
)
def test_a_result_that_feeds_range_is_refused(body):
    [finding] = check_source(loss_source(body), select=["TFR101"])
    assert finding.fix is None
    assert "'rounds' is passed to `range(...)` after the `if`, which needs a Python value" in (
        finding.message
    )


# -- likely tensors, tensor `while`, the true blocker -----------------------------------------


def test_a_traced_parameter_with_no_evidence_gets_an_unsafe_fix_that_says_what_it_assumes():
    """The canonical AutoGraph example: `f(tf.constant(1))` makes `x` a tensor."""
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
    [finding] = check_source(source, select=["TFR101"])
    assert finding.fix is not None and finding.fix.applicability.value == "unsafe"
    assert "the fix assumes `x` is a tensor argument" in finding.message
    assert fix_source(source, select=["TFR101"]) == source
    assert "    return tf.cond(x > 0, lambda: x * 2, lambda: -x)\n" in fix_source(
        source, select=["TFR101"], unsafe_fixes=True
    )


def test_python_flags_and_shapes_of_a_likely_tensor_stay_python():
    source = textwrap.dedent(
        """
        import tensorflow as tf

        @tf.function
        def f(x, training=False):
            if training:
                x = x * 0.5
            if x.shape[-1] == 1:
                x = tf.squeeze(x, -1)
            if x is None:
                return 0.0
            return x
        """
    )
    assert check_source(source, select=["TFR101"]) == []


@pytest.mark.parametrize(
    "loop",
    [
        "while tf.reduce_sum(x) > 1.0:\n        x = x / 2.0",
        "while x > 1.0:\n        x = x / 2.0",
    ],
)
def test_a_tensor_while_is_reported_without_a_fix(loop):
    # The only branch in the file is the `while`: the pass-1 gate
    # (`FunctionInfo.branches`) counts it, so the file is parsed.
    source = f"import tensorflow as tf\n\n@tf.function\ndef f(x):\n    {loop}\n    return x\n"
    [finding] = check_source(source, select=["TFR101"])
    assert finding.fix is None
    assert finding.message.startswith("Python `while` on a tensor needs AutoGraph")
    assert "write it as `tf.while_loop`" in finding.message


def test_a_python_while_is_not_reported():
    source = loss_source(
        """
        n = 0
        while n < 3:
            y_pred = y_pred * 0.5
            n += 1
        return tf.reduce_mean(y_pred)
        """
    )
    assert check_source(source, select=["TFR101"]) == []


def test_the_refusal_names_the_break_not_the_rank_of_the_condition():
    source = loss_source(
        """
        total = tf.reduce_sum(y_pred)
        for row in tf.unstack(y_true):
            if row > total:
                break
            total = total - 1.0
        return total
        """
    )
    messages_ = [f.message for f in check_source(source, select=["TFR101"])]
    assert any("contains `break`, which cannot leave a `tf.cond` branch" in m for m in messages_)
    assert not any("not known to be a scalar" in m for m in messages_)


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


def test_a_loss_written_with_keras_ops_only_gets_keras_ops_cond():
    """No `import tensorflow` is added: the loss still runs on every backend."""
    result = fix_source(KERAS_OPS_LOSS, select=["TFR101"])
    assert "tensorflow" not in result
    assert "    return ops.cond(err > 1.0, lambda: ops.sqrt(err), _false_fn)\n" in result
    assert "lambda: ops.cast(penalty, err.dtype)," in result
    assert fix_source(result, select=["TFR101"]) == result


def test_a_rank_test_becomes_the_static_rank_as_an_unsafe_fix():
    source = loss_source(
        """
        if tf.rank(y_pred) == 2:
            y_pred = tf.squeeze(y_pred, -1)
        return tf.reduce_mean(y_pred - y_true)
        """
    )
    [finding] = check_source(source, select=["TFR101"])
    assert finding.fix is not None and finding.fix.applicability.value == "unsafe"
    assert "`tf.rank(y_pred) == 2` tests a rank: a `tf.cond` would build both branches" in (
        finding.message
    )
    result = fix_source(source, select=["TFR101"], unsafe_fixes=True)
    assert "    if y_pred.shape.rank == 2:\n        y_pred = tf.squeeze(y_pred, -1)\n" in result
    assert fix_source(result, select=["TFR101"], unsafe_fixes=True) == result


def test_a_structure_check_from_tf_nest_is_a_python_if():
    source = textwrap.dedent(
        """
        import tensorflow as tf

        @tf.function
        def infer(state):
            if tf.nest.is_nested(state):
                return tf.nest.flatten(state)[0]
            return state
        """
    )
    assert check_source(source, select=["TFR101"]) == []


ODD_SUM = """
import tensorflow as tf

@tf.function
def odd_sum(items):
    total = tf.constant(0)
    for c in items:
        if c % 2 > 0:
            total += c
    return total
"""


def test_an_if_on_the_elements_of_a_likely_tensor_argument_gets_an_unsafe_fix():
    [finding] = check_source(ODD_SUM, select=["TFR101"])
    assert finding.fix is not None and finding.fix.applicability.value == "unsafe"
    assert "the fix assumes `items` is a tensor argument" in finding.message
    result = fix_source(ODD_SUM, select=["TFR101"], unsafe_fixes=True)
    assert "        total = tf.cond(c % 2 > 0, lambda: total + c, lambda: total)\n" in result


def test_a_parameter_rebound_to_a_tensor_is_a_tensor_where_tested():
    # The unconditional assignment replaces the argument: `flag` is the
    # tensor `tf.reduce_any(...)` at the `if`, whatever `flag=False` said.
    source = textwrap.dedent(
        """
        import tensorflow as tf

        @tf.function
        def f(x, flag=False):
            flag = tf.reduce_any(x > 0.0)
            if flag:
                x = x * 0.5
            return x
        """
    )
    [finding] = check_source(source, select=["TFR101"])
    assert finding.start.line == 7
    assert finding.fix is not None and finding.fix.applicability.value == "safe"
    assert "tf.cond(flag" in fix_source(source, select=["TFR101"])


def test_a_rebinding_inside_a_branch_leaves_the_argument_possible():
    # Only an assignment on every path replaces what came before it: here
    # `flag` may still be the Python argument, so no fix may rest on it.
    source = textwrap.dedent(
        """
        import tensorflow as tf

        @tf.function
        def f(x, flag=False, strict=True):
            if strict:
                flag = tf.reduce_any(x > 0.0)
            if flag:
                x = x * 0.5
            return x
        """
    )
    found = check_source(source, select=["TFR101"])
    assert all(f.fix is None or f.fix.applicability.value != "safe" for f in found)
