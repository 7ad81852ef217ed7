"""What `verify.conditions` reads from a function's source: the constants
its comparisons use, in both versions, and its NaN, infinity and emptiness
tests (standard library only, no TensorFlow)."""

from __future__ import annotations

import textwrap

from tfrewrite.verify.conditions import Conditions, collect


def _collect(original: str, rewrite: str | None = None, qualname: str = "f") -> Conditions:
    return collect(
        textwrap.dedent(original),
        textwrap.dedent(rewrite) if rewrite is not None else None,
        qualname,
        method="." in qualname,
    )


def _constants(found: Conditions) -> dict[str, tuple[float, ...]]:
    return {t.compared: t.constants for t in found.thresholds}


def test_a_moved_threshold_is_read_from_both_versions() -> None:
    original = """
    import tensorflow as tf

    def f(y_true, y_pred):
        error = tf.reduce_mean(tf.abs(y_true - y_pred))
        if error > 1.0:
            return error * 2.0
        return tf.square(error)
    """
    rewrite = """
    import tensorflow as tf

    def f(y_true, y_pred):
        error = tf.reduce_mean(tf.abs(y_true - y_pred))
        return tf.cond(error > 1.2, lambda: error * 2.0, lambda: tf.square(error))
    """
    found = _collect(original, rewrite)
    assert _constants(found) == {"tf.reduce_mean(tf.abs(y_true - y_pred))": (1.0, 1.2)}
    (threshold,) = found.thresholds
    assert threshold.parameters == ("y_pred", "y_true")
    assert threshold.side == "original"


def test_comparison_forms_and_named_constants() -> None:
    found = _collect(
        """
        import tensorflow as tf

        LIMIT = 2.0

        def f(x, step):
            t = 0.5
            a = tf.where(x < t, 0.0, x)
            b = tf.greater(tf.norm(x), 3)
            c = -1e-3 >= tf.reduce_min(x)
            d = tf.math.less_equal(x=tf.reduce_max(x), y=LIMIT)
            if step > 100:
                pass
            return a, b, c, d
        """
    )
    assert _constants(found) == {
        "x": (0.5,),
        "tf.norm(x)": (3.0,),
        "tf.reduce_min(x)": (-0.001,),
        "tf.reduce_max(x)": (2.0,),
        "step": (100.0,),
    }


def test_special_values_and_emptiness() -> None:
    found = _collect(
        """
        import numpy as np
        import tensorflow as tf

        def f(y_true, y_pred, weights):
            loss = tf.reduce_mean(tf.square(y_true - y_pred))
            if tf.math.is_nan(loss):
                loss = 0.0
            if not tf.reduce_all(tf.math.is_finite(weights)):
                weights = tf.ones_like(weights)
            if tf.shape(y_pred)[0] == 0:
                return 0.0
            return loss * np.isinf(weights).sum()
        """
    )
    assert found.nan == ("weights", "y_pred", "y_true")
    assert found.inf == ("weights",)
    assert found.empty == ("y_pred",)
    assert not found.thresholds


def test_what_is_left_out() -> None:
    """Values read from no parameter, from names bound otherwise than by a
    plain assignment, and comparisons with no number."""
    found = _collect(
        """
        import tensorflow as tf

        class Loss:
            def f(self, x, mode):
                for i in range(3):
                    if i > 1:
                        pass
                if self.scale > 2.0 or mode == "train" or x > mode:
                    pass
                return tf.map_fn(lambda v: v > 0.5, x)
        """,
        qualname="Loss.f",
    )
    assert not found


def test_a_reassigned_parameter_is_followed_to_its_earlier_value() -> None:
    found = _collect(
        """
        import tensorflow as tf

        def f(x):
            x = tf.clip_by_value(x, 0.0, 1.0)
            scaled = x * 2.0
            if scaled > 1.5:
                return scaled
            return x
        """
    )
    assert _constants(found) == {"tf.clip_by_value(x, 0.0, 1.0) * 2.0": (1.5,)}


def test_unparsable_or_missing_function() -> None:
    assert not collect("def f(:\n", None, "f")
    assert not collect("def g(x):\n    return x > 1\n", None, "f")


def test_a_module_name_rebound_is_no_constant() -> None:
    found = _collect(
        """
        LIMIT = 1.0
        LIMIT += 1
        SCALE = 2.0

        def f(x):
            return x > LIMIT, x < SCALE
        """
    )
    assert _constants(found) == {"x": (2.0,)}
