"""Verification pieces that need no TensorFlow: module slicing, changed-function
detection, branch instrumentation, input specifications, settings, printed-value
comparison and the report."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from tfrewrite.config import ConfigError
from tfrewrite.verify import (
    capture,
    coverage,
    inputs,
    loader,
    module_slice,
    project_imports,
    remedies,
    report,
)
from tfrewrite.verify.settings import parse_verify_settings
from tfrewrite.verify.targets import changed_functions, loss_shaped, pair_targets

DATA = Path(__file__).parent / "data" / "verify"

SCRIPT = textwrap.dedent(
    """
    from __future__ import annotations
    import os
    import numpy as np
    import tensorflow as tf
    from helpers import unused_helper

    EPSILON = 1e-7
    USE_ABSOLUTE_ERROR = False
    UNRELATED = 3


    def _safe(x):
        return tf.maximum(x, EPSILON)


    class Scaler:
        factor = 2.0


    @tf.function
    def loss(y_true, y_pred):
        if USE_ABSOLUTE_ERROR:
            return tf.reduce_mean(tf.abs(y_true - y_pred))
        return _safe(tf.reduce_mean(tf.square(y_true - y_pred))) * Scaler.factor


    model = build_model()
    model.fit(np.zeros(3), epochs=100)

    if __name__ == "__main__":
        USE_ABSOLUTE_ERROR = True
        train()
    """
)


def _kept_source(source: str, qualname: str) -> str:
    return ast.unparse(module_slice.slice_module(source, qualname).tree)


def test_slice_keeps_dependencies_and_drops_training_code() -> None:
    kept = _kept_source(SCRIPT, "loss")
    assert "from __future__ import annotations" in kept
    assert "import tensorflow as tf" in kept
    assert "EPSILON = 1e-07" in kept and "USE_ABSOLUTE_ERROR = False" in kept
    assert "def _safe" in kept and "class Scaler" in kept and "def loss" in kept
    for dropped in (
        "import os",
        "import numpy",
        "unused_helper",
        "UNRELATED",
        "model",
        "fit",
        "__main__",
    ):
        assert dropped not in kept, dropped


def test_slice_follows_helpers_transitively() -> None:
    kept = _kept_source(SCRIPT, "_safe")
    assert "EPSILON" in kept and "import tensorflow as tf" in kept
    assert "def loss" not in kept and "USE_ABSOLUTE_ERROR" not in kept


def test_slice_keeps_line_numbers() -> None:
    piece = module_slice.slice_module(SCRIPT, "loss")
    original_line = SCRIPT.splitlines().index("def loss(y_true, y_pred):") + 1
    definition = next(
        s for s in piece.tree.body if isinstance(s, ast.FunctionDef) and s.name == "loss"
    )
    assert definition.lineno == original_line


def test_slice_constants_and_flags() -> None:
    piece = module_slice.slice_module(SCRIPT, "loss")
    assert piece.constants == {"EPSILON": 1e-7, "USE_ABSOLUTE_ERROR": False}
    # A flag is tested in a condition (and reassigned under __main__); EPSILON is a plain constant.
    assert piece.flags == {"USE_ABSOLUTE_ERROR": False}


def test_slice_of_a_method_keeps_its_class_and_bases() -> None:
    source = (DATA / "dice" / "before" / "losses.py").read_text()
    kept = _kept_source(source, "DiceLoss.call")
    assert (
        "class DiceLoss(keras.losses.Loss)" in kept
        and "import keras" in kept
        and "SMOOTH = 1.0" in kept
    )
    assert "model" not in kept


def test_slice_of_a_training_script_never_reaches_its_module_code() -> None:
    source = (DATA / "flag_loss.py").read_text()
    kept = _kept_source(source, "bad_loss")
    assert "SystemExit" not in kept and "print(" not in kept


def test_unknown_function_is_a_load_error() -> None:
    with pytest.raises(project_imports.LoadError, match="not defined"):
        module_slice.slice_module(SCRIPT, "missing")
    with pytest.raises(project_imports.LoadError, match="syntax error"):
        module_slice.slice_module("def broken(:\n", "broken")


def test_changed_functions_compares_function_sources() -> None:
    before = (DATA / "cond_before.py").read_text()
    after = (DATA / "cond_after.py").read_text()
    assert changed_functions(before, after) == ["clipped_loss"]
    assert changed_functions(before, before) == []


def test_loss_shape_from_the_signature() -> None:
    source = textwrap.dedent(
        """
        def loss(y_true, y_pred, sample_weight=None): ...
        def helper(x): ...
        def three(a, b, c): ...
        class L:
            def call(self, y_true, y_pred): ...
        """
    )
    assert loss_shaped(source, "loss") and loss_shaped(source, "L.call")
    assert not loss_shaped(source, "helper") and not loss_shaped(source, "three")


def test_changed_helper_is_verified_through_its_callers() -> None:
    before = (
        "import tensorflow as tf\n\ndef noise(x):\n    return x\n\n"
        "def loss(y_true, y_pred):\n    return noise(y_pred) - y_true\n"
    )
    after = before.replace("return x\n", "return x * 1.0\n")
    targets = pair_targets("m.py", "m", before, after, parse_verify_settings({}))
    assert [(t.qualname, t.reason) for t in targets] == [
        ("loss", "calls `noise`, which the rewrite changed")
    ]


def test_changed_function_without_inputs_is_not_proven() -> None:
    before = "def scale(model, x):\n    return model(x) * model.factor\n"
    after = "def scale(model, x):\n    return model(x) * model.factor + 0\n"
    [target] = pair_targets("m.py", "m", before, after, parse_verify_settings({}))
    assert target.problem and 'harness."m:scale"' in target.problem
    # The message names the parameter that cannot be synthesised and why.
    assert "`model` is called" in target.problem
    assert '{"model": ..., "x": ...}' in target.problem


def test_changed_function_with_tensor_parameters_is_searched() -> None:
    before = "def scale(x, factor, offset):\n    return x * factor\n"
    after = "def scale(x, factor, offset):\n    return x * factor + 0\n"
    [target] = pair_targets("m.py", "m", before, after, parse_verify_settings({}))
    assert target.problem is None and target.qualname == "scale"


def test_step_defined_inside_a_function_is_verified_through_its_loop() -> None:
    before = textwrap.dedent(
        """
        import tensorflow as tf

        def train(hparams, data):
            optimizer = tf.keras.optimizers.Adam()

            def train_step(x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean((x - y) ** 2)
                return loss

            for x, y in data.take(hparams.steps):
                train_step(x, y)
        """
    )
    after = before.replace("    def train_step", "    @tf.function\n    def train_step")
    [target] = pair_targets("m.py", "m", before, after, parse_verify_settings({}))
    assert target.covers == ("train",) and target.loop is not None
    assert target.problem and '{"hparams": ..., "data": ...}' in target.problem
    assert 'harness."m:train"' in target.problem


def test_traced_functions_left_alone_get_original_only_checks() -> None:
    source = (DATA / "flag_loss.py").read_text()
    [target] = pair_targets(
        "flag_loss.py",
        "flag_loss",
        source,
        source,
        parse_verify_settings({}),
        {"bad_loss": "decorated"},
    )
    assert target.rewrite_source is None and target.qualname == "bad_loss"


def test_introduced_conds_are_instrumented() -> None:
    before = (DATA / "cond_before.py").read_text()
    after = (DATA / "cond_after.py").read_text()
    piece = module_slice.slice_module(after, "clipped_loss")
    tree, lines = coverage.instrument(before, piece.tree)
    assert lines == [8]
    text = ast.unparse(tree)
    assert f"{coverage.RECORDER_NAME}(8, True, lambda: error * MARGIN)" in text
    assert f"{coverage.RECORDER_NAME}(8, False, lambda: tf.square(error))" in text
    compile(tree, "x", "exec")
    # A cond already in the original was not introduced by the rewrite.
    assert coverage.instrument(after, piece.tree)[1] == []


def test_cond_keywords_and_aliases_are_recognised() -> None:
    source = (
        "from tensorflow import cond as branch\n\ndef f(x):\n"
        "    return branch(x > 0, true_fn=lambda: x, false_fn=lambda: -x)\n"
    )
    tree, lines = coverage.instrument("", ast.parse(source))
    assert lines == [4]
    assert "true_fn=__tfrewrite_branch__(4, True" in ast.unparse(tree)


def test_branch_recorder_records_only_while_active() -> None:
    recorder = coverage.BranchRecorder([3])
    branch = recorder(3, True, lambda: 1)
    assert branch() == 1 and recorder.missing() == [(3, True), (3, False)]
    recorder.active = True
    branch()
    assert recorder.missing() == [(3, False)]
    assert recorder.summary() == [{"line": 3, "true": True, "false": False}]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("float32[8,16,16,1] in [0,1]", inputs.TensorSpec("float32", (8, 16, 16, 1), 0.0, 1.0)),
        ("float32[8, 4]", inputs.TensorSpec("float32", (8, 4))),
        ("int32[8] in [0, 9]", inputs.TensorSpec("int32", (8,), 0.0, 9.0)),
        ("float64[]", inputs.TensorSpec("float64", ())),
        ("float32 in [-1e-3,2.5]", inputs.TensorSpec("float32", (), -1e-3, 2.5)),
    ],
)
def test_parse_spec(text: str, expected: inputs.TensorSpec) -> None:
    assert inputs.parse_spec(text) == expected


@pytest.mark.parametrize(
    "text", ["float32[8", "tensor[3]", "float32[2] in [1,0]", "float32[2] in 0,1"]
)
def test_bad_specs_are_rejected(text: str) -> None:
    with pytest.raises(inputs.SpecError):
        inputs.parse_spec(text)


def test_non_string_spec_is_a_python_value() -> None:
    assert inputs.parse_spec(True) == inputs.ValueSpec(True)


def test_specs_for_loss_shaped_and_configured_functions() -> None:
    def loss(y_true, y_pred, sample_weight=None):
        return y_true

    def helper(x, axis=-1):
        return x

    specs = inputs.specs_for(loss, {})
    assert list(specs) == ["y_true", "y_pred"] and str(specs["y_pred"]) == "float32[8,4] in [0,1]"
    assert not specs["y_pred"].strict  # the branch search may leave the default range
    with pytest.raises(inputs.SpecError, match="parameter `x`"):
        inputs.specs_for(helper, {})
    configured = {"x": inputs.parse_spec("float32[3]"), "axis": inputs.parse_spec(0)}
    assert inputs.specs_for(helper, configured) == configured
    with pytest.raises(inputs.SpecError, match="not a parameter"):
        inputs.specs_for(helper, {"y": inputs.parse_spec("float32[3]")})


def test_draws_respect_ranges_and_variants_stay_inside() -> None:
    specs = {
        "y_true": inputs.parse_spec("float32[8,4] in [0,1]"),
        "y_pred": inputs.parse_spec("float32[8,4] in [0,1]"),
    }
    base = inputs.draw(specs, 0)
    assert base["y_true"].dtype.name == "float32" and base["y_true"].shape == (8, 4)
    assert (inputs.draw(specs, 0)["y_pred"] == base["y_pred"]).all()
    labels = []
    for label, args in inputs.variants(base, specs, seeds=2):
        labels.append(label)
        for value in args.values():
            assert value.dtype.name == "float32" and 0.0 <= value.min() and value.max() <= 1.0
    assert (
        "all inputs low" in labels
        and "y_pred negated" in labels
        and labels[-1].startswith("random draw")
    )


def test_settings_parse_inputs_and_tolerances() -> None:
    vs = parse_verify_settings(
        {
            "rtol": 1e-4,
            "timeout": 5,
            "inputs": {"losses:dice": {"y_true": "float32[8,16,16,1] in [0,1]"}},
        }
    )
    assert vs.rtol == 1e-4 and vs.timeout == 5.0
    assert vs.inputs_for("pkg.losses", "dice") == {
        "y_true": inputs.TensorSpec("float32", (8, 16, 16, 1), 0.0, 1.0)
    }
    assert vs.inputs_for("other", "dice") is None


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"rtoll": 1}, "unknown key"),
        ({"rtol": "small"}, "non-negative number"),
        ({"inputs": {"dice": {}}}, "module:function"),
        ({"inputs": {"m:f": {"x": "float32["}}}, "bad input specification"),
    ],
)
def test_settings_errors(table: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_verify_settings(table)


def test_printed_numbers_ignore_formatting() -> None:
    assert capture.numbers("tf.Tensor(0.25, shape=(2, 3), dtype=float32)") == [0.25]
    values = capture.numbers("[1 -2.5e-3 nan]")
    assert values[:2] == [1.0, -0.0025] and len(values) == 3 and values[2] != values[2]
    ok, _ = capture.same_numbers(
        "tf.Tensor(0.23257089, shape=(), dtype=float32)\n", "0.232571\n", 1e-4, 1e-5
    )
    assert ok
    ok, why = capture.same_numbers("0.5\n", "0.6\n", 1e-4, 1e-5)
    assert not ok and "0.6" in why
    # tf.print abbreviates long tensors (summarize=3): values the original showed are lost.
    ok, why = capture.same_numbers("[1 2 3 4 5 6 7 8]", "[1 2 3 ... 6 7 8]", 0, 0)
    assert not ok and "summarize=-1" in why
    # A static shape that tracing does not know prints as None.
    ok, why = capture.same_numbers("8 0.5\n", "None 0.5\n", 0, 0)
    assert not ok and "tf.shape" in why
    assert not capture.same_numbers("[1 2 3 4 5 6 7 8]", "[1 2 9 ... 6 7 8]", 0, 0)[0]


def _result(verdict: str, **extra: object) -> dict:
    return {
        "path": "m.py",
        "line": 3,
        "function": "f",
        "reason": "changed by the rewrite",
        "mode": "rewrite",
        "verdict": verdict,
        "checks": [],
        "branches": [],
        **extra,
    }


def test_exit_codes_follow_verdicts() -> None:
    assert (
        report.exit_code([_result("equivalent"), {**_result("consistent"), "mode": "original"}])
        == 0
    )
    for verdict in ("mismatch", "not proven", "diverges"):
        assert report.exit_code([_result("equivalent"), _result(verdict)]) == 1
    assert report.exit_code([_result("mismatch"), _result("error", error="boom")]) == 2


def test_text_report_is_a_table_per_function() -> None:
    check = {
        "name": "rewrite traced",
        "ok": False,
        "max_abs": 0.5,
        "max_rel": None,
        "runs": 3,
        "detail": "on random draw (seed 0): result: 1, expected 0.5",
        "traceback": None,
    }
    text = report.render_text(
        [_result("mismatch", checks=[check], branches=[{"line": 8, "true": True, "false": False}])]
    )
    assert "m.py:3: f" in text and "MISMATCH" in text
    assert (
        "rewrite traced" in text
        and "5.00e-01" in text
        and "inf" in text
        and "FAIL: on random draw" in text
    )
    assert "0/1 covered (tf.cond on rewrite line 8: false never taken)" in text
    assert text.splitlines()[-1] == "Verified 1 function: 1 mismatch."


def test_restore_functions_puts_back_only_the_rejected_function() -> None:
    from tfrewrite.verify.gate import restore_functions

    before = (
        "import tensorflow as tf\n\n\ndef a(x, y):\n    return x\n\n\ndef b(x, y):\n    return y\n"
    )
    after = (
        "import tensorflow as tf\nimport sys\n\n\ndef a(x, y):\n    return tf.identity(x)\n\n\n"
        "@tf.function\ndef b(x, y):\n    return tf.identity(\n        y\n    )\n"
    )
    restored = restore_functions(before, after, {"b"})
    assert (
        restored
        == "import tensorflow as tf\nimport sys\n\n\ndef a(x, y):\n    return tf.identity(x)\n\n\n"
        "def b(x, y):\n    return y\n"
    )
    assert restore_functions(before, after, {"missing"}) is None


def test_settings_harness_for_train_steps() -> None:
    vs = parse_verify_settings({"harness": {"train:train_step": "verify_harness:build"}})
    assert vs.harness_for("pkg.train", "train_step") == "verify_harness:build"
    with pytest.raises(ConfigError, match="harness"):
        parse_verify_settings({"harness": {"train_step": "build"}})
    source = "def train_step(model, optimizer, x, y):\n    return 0\n"
    changed = source.replace("return 0", "return 1")
    [target] = pair_targets("train.py", "train", source, changed, vs)
    assert target.harness == "verify_harness:build" and target.problem is None


TUTORIAL = textwrap.dedent(
    """
    import tensorflow as tf

    model = make_model()
    dataset = make_dataset()


    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(model(x) - y)
        optimizer.apply_gradients(zip(tape.gradient(loss, model.weights), model.weights))
        return loss


    def fit(model, optimizer, batches, epochs=1):
        for epoch in range(epochs):
            for x, y in batches:
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(model(x) - y)
                optimizer.minimize(loss, model.weights, tape=tape)


    if __name__ == "__main__":
        optimizer = make_optimizer()
        model.build((None, 4))
        model.fit(dataset)
        for epoch in range(3):
            for x, y in dataset:
                loss = train_step(x, y)
            print(loss)
    """
)


def test_loop_sites_find_the_loop_that_reaches_a_step() -> None:
    from tfrewrite.verify import loops

    [site] = loops.loop_sites(TUTORIAL, loops.calls_name("train_step"))
    assert (site.scope, site.index, site.header) == (loops.MAIN, 0, "for x, y in dataset")
    [site] = loops.loop_sites(TUTORIAL, loops.opens_tape)
    assert site.scope == "fit" and site.params == ["model", "optimizer", "batches"]


def test_replay_samples_the_path_records_the_innermost_and_keeps_only_setup() -> None:
    from tfrewrite.verify import loops

    text, recorded = loops.replay_source(TUTORIAL, loops.MAIN, 0, loops.reaches_step("train_step"))
    replay = text[text.index(f"def {loops.REPLAY}") :]
    assert "optimizer = make_optimizer()" in replay and "model.build((None, 4))" in replay
    assert "model.fit" not in replay  # training before the loop is left out
    assert f"for epoch in {loops.SAMPLE}(range(3), {loops.OUTER})" in replay  # two epochs
    assert f"for x, y in {loops.SAMPLE}(dataset)" in replay
    assert f"{loops.RECORD}(globals())" in replay and "global " in replay
    assert recorded == ["loss", "x", "y"]
    # In a function, the replay takes the function's parameters.
    text, _ = loops.replay_source(TUTORIAL, "fit", 0, loops.opens_tape)
    assert f"def {loops.REPLAY}(model, optimizer, batches, epochs=1)" in text


NESTED_STEP = """\
def train(data, warm=False):
    if warm:
        model = load("saved")
    else:
        model = build()

    def train_step(x):
        return model(x)

    for x in data:
        train_step(x)
        missing_name
"""


def test_replay_binds_what_a_nested_step_reads_and_keeps_the_script_lines() -> None:
    """`model` is read only by the nested step; the replay binds it, and its
    statements carry the lines they have in the script."""
    from tfrewrite.verify import loops

    text, _ = loops.replay_source(NESTED_STEP, "train", 0, loops.calls_name("train_step"))
    replay = text[text.index(f"def {loops.REPLAY}") :]
    assert "if warm:" in replay and "model = build()" in replay
    piece = module_slice.slice_module(text, loops.REPLAY)
    loader.appended.relocate(piece.tree, text)
    function = module_slice.find_definition(piece.tree, loops.REPLAY)
    lines = {ast.unparse(n): n.lineno for n in ast.walk(function) if isinstance(n, ast.stmt)}
    assert lines["model = build()"] == 5 and lines["missing_name"] == 12
    assert lines["return model(x)"] == 8


def test_train_loop_targets_say_what_is_missing() -> None:
    from tfrewrite.verify import loops

    rewrite = TUTORIAL.replace(
        "def train_step(x, y):", "@tf.function(reduce_retracing=True)\ndef train_step(x, y):"
    ).replace(
        "        for x, y in batches:",
        "        for x, y in batches:  # changed\n            pass\n",
    )
    settings = parse_verify_settings({})
    targets = {t.qualname: t for t in pair_targets("t.py", "t", TUTORIAL, rewrite, settings)}
    main = targets["loop at line 27"]
    assert {k: v for k, v in main.loop.items() if k != "hint"} == {
        "original": [loops.MAIN, 0],
        "rewrite": [loops.MAIN, 0],
        "step": "train_step",
    }
    assert 'harness."t:__main__" = "verify_harness:build"' in main.loop["hint"]
    assert main.problem is None and main.covers == ("train_step",)
    fit = targets["loop at line 16 in `fit`"]
    assert "write verify_harness.py" in fit.problem and 'harness."t:fit"' in fit.problem
    assert '"model": ...' in fit.problem


def test_changes_outside_functions_are_named() -> None:
    before = "import tensorflow as tf\n\nSCALE = tf.constant(2.0)\nX = 1\n"
    after = "import tensorflow as tf\n\nSCALE = 2.0\nX = 1\n"
    [target] = pair_targets("m.py", "m", before, after, parse_verify_settings({}))
    assert target.problem and "SCALE = tf.constant(2.0)" in target.problem
    assert "outside any function" in target.problem
    # Switching graphs back on is proven by the traced functions' own checks.
    eager = "import tensorflow as tf\n\ntf.config.run_functions_eagerly(True)\nX = 1\n"
    assert (
        pair_targets(
            "m.py", "m", eager, after.replace("SCALE = 2.0\n", ""), parse_verify_settings({})
        )
        == []
    )


GUIDE = """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(1)])


def train_step(x, y):
    return model(x) - y


for x, y in [(1.0, 2.0)]:
    loss = train_step(x, y)


def train_step(images):
    return model(images)


for images in [1.0]:
    out = train_step(images)
"""


def test_a_module_level_loop_replays_with_what_was_defined_before_it() -> None:
    """A script runs top to bottom: a loop sees the first `train_step`, not
    the one a later section of the script defines."""
    from tfrewrite.verify import loops

    text, _ = loops.replay_source(GUIDE, "", 0, loops.reaches_step("train_step"))
    assert "def train_step(x, y)" in text and "def train_step(images)" not in text
    text, _ = loops.replay_source(GUIDE, "", 1, loops.reaches_step("train_step"))
    assert text.index("def train_step(x, y)") < text.index("def train_step(images)")


def test_a_library_that_cannot_import_its_optional_dependency_names_the_package() -> None:
    from tfrewrite.verify import project_imports

    err = ImportError("Could not import PIL.Image. The use of `array_to_img` requires PIL.")
    found = project_imports.missing_package(err)
    if found is not None:  # PIL absent here, as in the verification workers
        assert found.name == "PIL" and "pip install pillow" in str(found)
    assert project_imports.missing_package(ImportError("Could not import os.path.")) is None


def test_a_module_tensorflow_removed_is_a_needed_environment() -> None:
    """TF-GAN imports `tf.estimator`, which TensorFlow 2.16 removed: a fact
    about the workers' environment, said with what to use instead."""
    from tfrewrite.verify import project_imports

    err = ImportError(
        "cannot import name 'estimator' from 'tensorflow' (/x/tensorflow/__init__.py)"
    )
    found = project_imports.missing_package(err)
    assert found is not None
    assert "`tensorflow.estimator`" in str(found) and "TensorFlow 2.16 removed" in str(found)
    assert "use TensorFlow older than 2.16 for the workers" in str(found)
    assert (
        project_imports.missing_package(ImportError("cannot import name 'nn' from 'tensorflow'"))
        is None
    )


def test_keras_three_code_under_keras_two_needs_keras_three(monkeypatch) -> None:
    """`from keras import ops` under TensorFlow 2.15's Keras 2: the workers'
    environment, said with what to use, not an error of the rewrite."""
    import sys
    import types

    from tfrewrite.verify import project_imports

    err = ImportError("cannot import name 'ops' from 'keras' (/x/keras/__init__.py)")
    monkeypatch.setitem(sys.modules, "keras", types.SimpleNamespace(__version__="2.15.0"))
    found = project_imports.missing_package(err)
    assert found is not None and "Keras 3: this code imports Keras 3 APIs" in str(found)
    assert "Keras 2.15.0 lacks" in str(found) and "TensorFlow 2.16 or later" in str(found)
    monkeypatch.setitem(sys.modules, "keras", types.SimpleNamespace(__version__="3.15.1"))
    assert project_imports.missing_package(err) is None  # Keras 3's own problem


def test_keras_two_code_under_keras_three_is_said_with_the_remedy() -> None:
    """`metric.reset_states()` (Keras 2) on a Keras 3 metric: the message
    names the missing attribute and how to run or fix the code."""
    import types

    Mean = type("Mean", (), {"__module__": "keras.src.metrics.reduction_metrics"})
    try:
        Mean().reset_states()  # type: ignore[attr-defined]
    except AttributeError as err:
        text = remedies.remedy(err, "gan.py")
    assert text is not None and "has no `Mean.reset_states`" in text
    assert "TF_USE_LEGACY_KERAS=1" in text
    other = types.SimpleNamespace()
    try:
        other.reset_states()  # type: ignore[attr-defined]
    except AttributeError as err:
        assert remedies.remedy(err, "gan.py") is None


def test_a_keras_two_call_of_a_keras_three_method_is_said_with_the_remedy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`self.add_variable(name=..., shape=...)`: Keras 3 requires its
    `initializer`; Python's TypeError names `Layer.add_variable()` only, so
    the class is found among the loaded Keras modules."""
    import sys
    import types

    def add_variable(self: object, shape: object, initializer: object) -> None: ...

    layer_module = types.ModuleType("keras.src.layers.layer")
    layer_module.Layer = type(  # type: ignore[attr-defined]
        "Layer", (), {"__module__": "keras.src.layers.layer", "add_variable": add_variable}
    )
    add_variable.__qualname__ = "Layer.add_variable"
    monkeypatch.setitem(sys.modules, "keras", types.SimpleNamespace(__version__="3.15.1"))
    monkeypatch.setitem(sys.modules, "keras.src.layers.layer", layer_module)
    try:
        layer_module.Layer().add_variable(shape=[2])  # type: ignore[attr-defined]
    except TypeError as err:
        text = remedies.remedy(err, "mnist.py")
    assert text is not None and "Keras 3.15.1 calls `Layer.add_variable`" in text
    assert "TF_USE_LEGACY_KERAS=1" in text
    try:
        len(1, 2)  # type: ignore[call-arg]
    except TypeError as err:
        assert remedies.remedy(err, "mnist.py") is None


def test_a_file_the_code_reads_that_does_not_exist_is_named() -> None:
    """ESRGAN's second phase loads the generator the first saved, and hides
    Keras' error behind its own: the path is still named."""

    def load() -> None:
        try:
            raise OSError("No file or directory found at /no/such/Phase_1/generator")
        except Exception:
            raise FileNotFoundError("Pre-trained Generator model not found!") from None

    try:
        load()
    except FileNotFoundError as err:
        text = remedies.remedy(err, "train_lib.py")
    assert text is not None and "the code reads `/no/such/Phase_1/generator`" in text
    try:
        open("/no/such/file.txt")
    except FileNotFoundError as err:
        assert "`/no/such/file.txt`" in (remedies.remedy(err, "x.py") or "")
    assert remedies.remedy(OSError("disk full"), "x.py") is None


def test_a_name_tensorflow_no_longer_has_is_a_needed_environment(monkeypatch) -> None:
    """`from tensorflow.keras.mixed_precision import experimental` (TensorFlow
    2.3's API) where the workers' module has no such name: the environment,
    said with what to use; a name the module has failed for another reason."""
    import sys
    import types

    from tfrewrite.verify import project_imports

    module = types.ModuleType("tensorflow.keras.mixed_precision")
    module.Policy = object  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "tensorflow.keras.mixed_precision", module)
    err = ImportError(
        "cannot import name 'experimental' from 'tensorflow.keras.mixed_precision' "
        "(/x/tf_keras/api/_v2/keras/mixed_precision/__init__.py)"
    )
    found = project_imports.missing_package(err, record=False)
    assert found is not None
    assert "`tensorflow.keras.mixed_precision.experimental`" in str(found)
    assert "no longer has" in str(found) and "older TensorFlow" in str(found)
    present = ImportError("cannot import name 'Policy' from 'tensorflow.keras.mixed_precision'")
    assert project_imports.missing_package(present, record=False) is None
