"""Where Keras traces a function that no `@tf.function` decorates: what a
lambda given to `compile` or to a `Lambda` layer calls, a
`functools.partial` given as a loss or metric, a function given to a
`Lambda` layer, and dicts and lists of them. Pass 1 records each as a traced
site, with the call evidence that says which arguments are tensors, and
`tfrewrite check` finds the hazards in the traced function."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tfrewrite.api import check_source
from tfrewrite.facts.index import build_index
from tfrewrite.facts.project import compute_facts
from tfrewrite.facts.traced_function import TracedFunction
from tfrewrite.pipeline.engine import InputFile, RunOptions, run


def _traced(source: str) -> dict[str, TracedFunction]:
    index = build_index(textwrap.dedent(source), "m.py", "m")
    return compute_facts([index]).for_path("m.py")


def _codes(source: str) -> list[tuple[str, int]]:
    return sorted((f.code, f.start.line) for f in check_source(textwrap.dedent(source)))


LAMBDA_LOSS = """\
import tensorflow as tf
from tensorflow import keras


def helper(y_true, y_pred, w=1.0):
    print("pred", y_pred)
    if tf.reduce_mean(y_pred) > 0:
        return w * tf.reduce_mean(tf.square(y_true - y_pred))
    return tf.reduce_mean(tf.abs(y_true - y_pred))


def build():
    model = keras.Sequential([keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss=lambda y_true, y_pred: helper(y_true, y_pred, w=3.0))
    return model
"""


def test_what_a_lambda_given_to_compile_calls_runs_traced_with_its_tensors() -> None:
    traced = _traced(LAMBDA_LOSS)
    helper = traced["helper"]
    assert helper.reason.startswith("called from a lambda given to compile(loss=...)")
    assert helper.tensor_params == {"y_true", "y_pred"}
    assert helper.python_params == {"w"}
    assert "build" not in traced  # the function holding the lambda runs eagerly


def test_hazards_in_what_a_compiled_lambda_calls_are_found() -> None:
    assert _codes(LAMBDA_LOSS) == [("TFR101", 7), ("TFR103", 6)]


def test_a_lambda_calling_its_own_parameter_or_a_builtin_traces_nothing_else() -> None:
    index = build_index(
        textwrap.dedent(
            """\
            import tensorflow as tf

            def apply(f, x):
                return f(x)

            model.compile(loss=lambda f, y: f(y) + len(y) + tf.reduce_sum(y))
            """
        ),
        "m.py",
        "m",
    )
    assert index.traced_sites == []


def test_a_lambda_a_traced_lambda_hands_to_py_function_runs_eagerly() -> None:
    """`tf.py_function` runs its function eagerly: what the inner lambda
    calls is no traced code, though the lambda around it is."""
    traced = _traced(
        """\
        import tensorflow as tf

        def load(path):
            return open(path).read()

        def normalize(x):
            return x / 255.0

        ds = tf.data.Dataset.list_files("*.png").map(
            lambda p: normalize(tf.py_function(lambda q: load(q), [p], tf.string))
        )
        """
    )
    assert set(traced) == {"normalize"}


def test_a_lambda_reaches_a_helper_nested_in_the_function_compiling_it() -> None:
    traced = _traced(
        """\
        import numpy as np
        from tensorflow import keras

        def build(model):
            def noisy(y_true, y_pred):
                return y_pred + np.random.normal()
            model.compile(loss=lambda a, b: noisy(a, b))
        """
    )
    assert set(traced) == {"build.noisy"}
    assert traced["build.noisy"].tensor_params == {"y_true", "y_pred"}


def test_lambda_parameters_shadow_the_names_around_them() -> None:
    """`y` holds a Python number outside; inside the lambda, the parameter
    `y` is what `Dataset.map` passes: a tensor."""
    traced = _traced(
        """\
        import tensorflow as tf

        def scale(v, factor):
            return v * factor

        y = 3
        ds = tf.data.Dataset.range(4).map(lambda y: scale(y, 2.0))
        """
    )
    assert traced["scale"].tensor_params == {"v"}
    assert traced["scale"].python_params == {"factor"}


PARTIAL_LOSS = """\
import functools

import numpy as np
import tensorflow as tf
from tensorflow import keras


def pinball(y_true, y_pred, quantile=0.5):
    noise = np.random.normal(0.0, 0.1)
    err = y_true - y_pred + noise
    if quantile > 0.5:
        err = err * 1.0
    return tf.reduce_mean(tf.maximum(quantile * err, (quantile - 1.0) * err))


model = keras.Sequential([keras.layers.Dense(1)])
model.compile(optimizer="sgd", loss=functools.partial(pinball, quantile=0.9))
"""


def test_a_partial_given_as_a_loss_traces_its_function_as_a_loss() -> None:
    pinball = _traced(PARTIAL_LOSS)["pinball"]
    assert pinball.is_loss and pinball.reason.startswith("given to compile(loss=...)")
    assert pinball.tensor_params == {"y_true", "y_pred"}
    assert pinball.python_params == {"quantile"}


def test_hazards_in_a_partial_loss_are_found_and_its_python_flag_is_no_tensor_if() -> None:
    assert _codes(PARTIAL_LOSS) == [("TFR102", 9)]


def test_a_partial_imported_bare_and_binding_positions_is_no_loss_signature() -> None:
    """`partial(scaled, 2.0)` as a metric: Keras calls `scaled(2.0, y_true,
    y_pred)`, so the tensors are the second and third parameters."""
    traced = _traced(
        """\
        from functools import partial
        from tensorflow import keras

        def scaled(scale, y_true, y_pred):
            print(scale)
            return scale * y_pred

        model.compile(loss="mse", metrics=[partial(scaled, 2.0)])
        """
    )
    scaled = traced["scaled"]
    assert not scaled.is_loss
    assert scaled.reason.startswith("bound by `functools.partial` and given to compile(metrics")
    assert scaled.tensor_params == {"y_true", "y_pred"}
    assert scaled.python_params == {"scale"}


def test_a_partial_given_to_dataset_map_traces_its_function_without_guessing_tensors() -> None:
    traced = _traced(
        """\
        import functools
        import tensorflow as tf

        def parse(x, training=False):
            return x

        ds = tf.data.Dataset.range(4).map(functools.partial(parse, training=True))
        """
    )
    assert traced["parse"].tensor_params == frozenset()


LAMBDA_LAYERS = """\
import tensorflow as tf
import keras


def scale(x):
    print("scale", x)
    return x * 2.0


def shift(x):
    if tf.reduce_sum(x) > 0:
        return x + 1.0
    return x


def offset(x, by=1.0):
    return x + by + np.random.uniform()


inputs = keras.Input(shape=(3,))
h = keras.layers.Lambda(scale)(inputs)
h = tf.keras.layers.Lambda(lambda x: shift(x))(h)
h = keras.layers.Lambda(function=functools.partial(offset, by=2.0))(h)
model = keras.Model(inputs, keras.layers.Dense(1)(h))
"""


def test_functions_given_to_lambda_layers_run_traced_with_their_inputs() -> None:
    traced = _traced("import functools\nimport numpy as np\n" + LAMBDA_LAYERS)
    assert traced["scale"].tensor_params == {"x"}
    assert traced["shift"].tensor_params == {"x"}
    assert traced["shift"].reason.startswith("called from a lambda given to a Keras `Lambda`")
    assert traced["offset"].tensor_params == {"x"}
    assert traced["offset"].python_params == {"by"}


def test_hazards_in_lambda_layer_functions_are_found() -> None:
    codes = _codes("import functools\nimport numpy as np\n" + LAMBDA_LAYERS)
    assert codes == [("TFR101", 13), ("TFR102", 19), ("TFR103", 8)]


MIXED = """\
import functools

import numpy as np
import tensorflow as tf
from tensorflow import keras


def weighted(y_true, y_pred, weight=1.0):
    print("weighted", weight, y_pred)
    return weight * tf.reduce_mean(tf.square(y_true - y_pred))


def jitter(y_true, y_pred):
    return tf.reduce_mean(y_pred) + np.random.normal()


def named(y_true, y_pred):
    if tf.reduce_max(y_pred) > 1.0:
        return tf.reduce_mean(y_pred)
    return tf.reduce_min(y_pred)


model.compile(
    optimizer="adam",
    loss={
        "a": functools.partial(weighted, weight=0.5),
        "b": lambda y_true, y_pred: jitter(y_true, y_pred),
        "c": named,
    },
    loss_weights={"a": 1.0, "b": 0.5, "c": 0.1},
    metrics=[[functools.partial(weighted, weight=2.0)], [lambda t, p: jitter(t, p)]],
)
"""


def test_loss_dicts_and_metric_lists_mixing_partials_lambdas_and_names() -> None:
    traced = _traced(MIXED)
    assert traced["weighted"].is_loss and traced["named"].is_loss
    assert traced["weighted"].python_params == {"weight"}
    assert traced["jitter"].tensor_params == {"y_true", "y_pred"}
    assert _codes(MIXED) == [("TFR101", 18), ("TFR102", 14), ("TFR103", 9)]


def test_a_helper_in_another_module_is_indexed_and_traced(tmp_path: Path) -> None:
    """`helpers.py` imports nothing of TensorFlow: it is indexed because the
    lambda `train.py` compiles calls into it."""
    (tmp_path / "helpers.py").write_text(
        "def helper(y_true, y_pred, w=1.0):\n    print(y_pred)\n    return w * (y_true - y_pred)\n"
    )
    (tmp_path / "train.py").write_text(
        "from tensorflow import keras\nfrom helpers import helper\n\n"
        "model = keras.Sequential()\n"
        "model.compile(loss=lambda y_true, y_pred: helper(y_true, y_pred, w=3.0))\n"
    )
    files = [InputFile(str(p)) for p in sorted(tmp_path.glob("*.py"))]
    result = run(files, RunOptions(rule_codes=("TFR103",), root=str(tmp_path)), jobs=1)
    found = [(Path(f.path).name, f.code, f.start.line) for r in result.files for f in r.findings]
    assert found == [("helpers.py", "TFR103", 2)]


AUGMENT = """\
import numpy as np
import tensorflow as tf


def jitter(x, y):
    return x + np.random.normal(), y


def flip(x, y):
    return tf.reverse(x, [0]), y


augment = lambda x, y: tf.cond(tf.random.uniform([]) < 0.5, lambda: jitter(x, y), lambda: (x, y))
ds = tf.data.Dataset.from_tensor_slices((tf.ones([4, 2]), tf.ones([4])))
ds = ds.map(augment)
"""


def test_a_lambda_a_module_name_holds_is_traced_where_the_name_is_handed() -> None:
    """`augment = lambda ...` then `ds.map(augment)`: the map traces the
    lambda, and what its `tf.cond` branches call."""
    assert set(_traced(AUGMENT)) == {"jitter"}
    assert _codes(AUGMENT) == [("TFR102", 6)]


def test_a_lambda_name_a_function_rebinds_is_not_the_module_lambda() -> None:
    source = AUGMENT.replace(
        "ds = ds.map(augment)\n",
        "def pipeline(ds, augment):\n    return ds.map(augment)\n",
    )
    assert set(_traced(source)) == set()


def test_a_branch_lambda_inside_a_traced_lambda_is_traced() -> None:
    source = AUGMENT.replace(
        "ds = ds.map(augment)\n",
        "ds = ds.map(lambda x, y: tf.cond(x[0] > 0, lambda: flip(x, y), lambda: jitter(x, y)))\n",
    )
    assert set(_traced(source)) == {"jitter", "flip"}
