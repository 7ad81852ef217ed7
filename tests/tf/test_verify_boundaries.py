"""The inputs `verify.boundaries` places on each side of a function's
conditions: each lands where its label says, for every form the module's
docstring says is reached."""

from __future__ import annotations

import math
import textwrap
import types

import numpy as np
import pytest

from tfrewrite.verify import boundaries, conditions, inputs, proof_inputs

pytestmark = pytest.mark.tensorflow


def _inputs(source: str, specs: dict[str, str] | None = None, empty: bool = True) -> list:
    """(label, arguments, {compared: measured median}) of every boundary input of `f`."""
    source = textwrap.dedent(source)
    module = types.ModuleType("case")
    exec(compile(source, "case.py", "exec"), module.__dict__)
    configured = {k: inputs.parse_spec(v) for k, v in (specs or {}).items()}
    parsed = inputs.specs_for(module.f, configured)
    base = inputs.draw(parsed, 0)
    found = conditions.collect(source, None, "f")
    measure = proof_inputs.measurer(module, None)
    out = []
    for label, args in boundaries.variants(base, parsed, found, measure, empty=empty):
        values = {}
        for t in found.thresholds:
            value = measure(t, args)
            values[t.compared] = (
                None
                if value is None
                else float(np.sort(np.ravel(value))[(np.size(value) - 1) // 2])
            )
        out.append((label, args, values))
    return out


def _landed(found: list, compared: str) -> dict[str, float]:
    """label -> value, for the inputs aimed at `compared`."""
    return {label: values[compared] for label, _, values in found if f"`{compared}`" in label}


def test_a_scalar_parameter_is_set_on_the_constant() -> None:
    found = _inputs(
        """
        import tensorflow as tf

        def f(step):
            return tf.cond(step < 100.0, lambda: 1.0, lambda: 0.1)
        """,
        {"step": "float32[]"},
    )
    landed = _landed(found, "step")
    assert landed["`step` at 100"] == 100.0
    assert 99.8 <= landed["`step` just below 100"] < 100.0
    assert 100.0 < landed["`step` just above 100"] <= 100.2


def test_reductions_of_one_parameter() -> None:
    found = _inputs(
        """
        import tensorflow as tf

        def f(y_true, y_pred):
            a = tf.reduce_mean(y_pred) > 2.0
            b = tf.norm(y_pred) < 0.25
            c = tf.reduce_max(y_pred) >= -1.0
            return a, b, c
        """
    )
    for compared, c in (
        ("tf.reduce_mean(y_pred)", 2.0),
        ("tf.norm(y_pred)", 0.25),
        ("tf.reduce_max(y_pred)", -1.0),
    ):
        landed = _landed(found, compared)
        assert landed[f"`{compared}` at {c:g}"] == pytest.approx(c, rel=1e-6, abs=1e-7)
        assert landed[f"`{compared}` just below {c:g}"] < c
        assert landed[f"`{compared}` just above {c:g}"] > c


def test_a_reduction_of_two_parameters_is_reached_by_scaling() -> None:
    """Shifting both leaves the difference alone; scaling both moves it."""
    found = _inputs(
        """
        import tensorflow as tf

        def f(y_true, y_pred):
            error = tf.reduce_mean(tf.square(y_true - y_pred))
            return tf.cond(error > 1.0, lambda: error, lambda: 2.0 * error)
        """
    )
    compared = "tf.reduce_mean(tf.square(y_true - y_pred))"
    landed = _landed(found, compared)
    assert 0.998 <= landed[f"`{compared}` just below 1"] < 1.0
    assert 1.0 < landed[f"`{compared}` just above 1"] <= 1.002


def test_constants_of_both_versions() -> None:
    original = "import tensorflow as tf\n\ndef f(x):\n    return tf.where(x > 1.0, 1.0, x)\n"
    rewrite = original.replace("x > 1.0", "x > 1.2")
    found = conditions.collect(original, rewrite, "f")
    module = types.ModuleType("case")
    exec(original, module.__dict__)
    specs = {"x": inputs.TensorSpec("float32", (8, 4), 0.0, 1.0, strict=False)}
    base = inputs.draw(specs, 0)
    measure = proof_inputs.measurer(module, None)
    labels = {}
    for label, args in boundaries.variants(base, specs, found, measure):
        labels[label] = args["x"]
    between = labels["`x` between 1 and 1.2"]
    # The median element lies between: elements fall on both sides of each threshold.
    assert ((between > 1.0) & (between <= 1.2)).any()
    assert labels["`x` at 1.2"].max() == np.float32(1.2)


def test_special_values_and_an_empty_batch() -> None:
    source = """
    import tensorflow as tf

    def f(y_true, y_pred):
        if tf.size(y_pred) == 0:
            return 0.0
        ok = tf.reduce_all(tf.math.is_finite(y_pred))
        return tf.where(ok, tf.reduce_mean(y_pred - y_true), 0.0)
    """
    found = {label: args for label, args, _ in _inputs(source)}
    assert math.isnan(found["y_pred with a NaN"]["y_pred"].flat[0])
    assert found["y_pred with a +inf"]["y_pred"].flat[0] == math.inf
    assert found["y_pred with a -inf"]["y_pred"].flat[0] == -math.inf
    assert not np.isnan(found["y_pred with a NaN"]["y_true"]).any()
    empty = found["an empty batch (0 rows)"]
    assert empty["y_true"].shape == empty["y_pred"].shape == (0, 4)
    assert empty["y_pred"].dtype == np.float32
    # A traced function with a fixed batch size gets no empty batch.
    assert "an empty batch (0 rows)" not in {label for label, _, _ in _inputs(source, empty=False)}


def test_a_configured_range_is_not_left() -> None:
    """Inside [0, 1] the mean reaches 0.5 but never 2: no input is aimed there."""
    found = _inputs(
        """
        import tensorflow as tf

        def f(x):
            return tf.reduce_mean(x) > 0.5, tf.reduce_mean(x) > 2.0
        """,
        {"x": "float32[8,4] in [0,1]"},
    )
    landed = _landed(found, "tf.reduce_mean(x)")
    assert {"`tf.reduce_mean(x)` just below 0.5", "`tf.reduce_mean(x)` just above 0.5"} <= set(
        landed
    )
    for words in ("just below 2", "at 2", "just above 2"):
        assert f"`tf.reduce_mean(x)` {words}" not in landed, landed
    for _, args, _ in found:
        assert 0.0 <= args["x"].min() and args["x"].max() <= 1.0


def test_an_integer_value_is_probed_one_apart() -> None:
    found = _inputs(
        """
        import tensorflow as tf

        def f(labels):
            return tf.reduce_max(labels) > 5
        """,
        {"labels": "int32[8] in [0,9]"},
    )
    landed = _landed(found, "tf.reduce_max(labels)")
    assert landed.get("`tf.reduce_max(labels)` just below 5") == 4
    assert landed.get("`tf.reduce_max(labels)` at 5") == 5
    assert landed.get("`tf.reduce_max(labels)` just above 5") == 6


def test_a_value_that_cannot_be_evaluated_gives_no_input() -> None:
    found = _inputs(
        """
        import tensorflow as tf

        def f(y_true, y_pred):
            return tf.cond(undefined_helper(y_pred) > 1.0, lambda: y_true, lambda: y_pred)
        """
    )
    assert found == []


def test_special_values_leave_a_configured_range() -> None:
    """The function tests for infinity: a range it is configured with does not clip it away."""
    found = {
        label: args
        for label, args, _ in _inputs(
            """
            import tensorflow as tf

            def f(x):
                return tf.where(tf.math.is_inf(x), 0.0, x)
            """,
            {"x": "float32[8,4] in [0,1]"},
        )
    }
    assert found["x with a +inf"]["x"].flat[0] == math.inf
    assert found["x with a -inf"]["x"].flat[0] == -math.inf
    assert "x with a NaN" not in found
