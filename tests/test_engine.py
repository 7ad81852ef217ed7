"""The pipeline pieces: index, project facts across modules, discovery,
sources, text edits and the fix loop."""

from __future__ import annotations

import textwrap
from pathlib import Path

import libcst as cst
from hypothesis import given, settings
from hypothesis import strategies as st

from tfrewrite.facts.import_requests import ImportRequest
from tfrewrite.facts.index import build_index, module_name_for
from tfrewrite.facts.project import compute_facts
from tfrewrite.pipeline.engine import InputFile, RunOptions, run
from tfrewrite.pipeline.fixer import apply_fixes
from tfrewrite.report.edits import apply_text_edits, text_edits
from tfrewrite.rewrite.fixes import CstFix, NodeEdit
from tfrewrite.workspace.discovery import discover
from tfrewrite.workspace.sources import read_source, write_atomic

SRC = Path(__file__).parent.parent / "src" / "tfrewrite"


def index(source: str, path: str = "m.py", module: str = "m"):
    return build_index(textwrap.dedent(source), path, module)


def test_index_resolves_every_import_spelling() -> None:
    idx = index(
        """
        import tensorflow as tf
        import numpy.random as npr
        from numpy.random import normal as gauss
        from . import helpers
        """,
        "pkg/m.py",
        "pkg.m",
    )
    assert idx.imports == {
        "tf": "tensorflow",
        "npr": "numpy.random",
        "gauss": "numpy.random.normal",
        "helpers": "pkg.helpers",
    }


def test_traced_roots_and_reasons() -> None:
    idx = index(
        """
        import tensorflow as tf
        from tensorflow import keras

        @tf.function
        def decorated(x):
            return helper(x)

        def helper(x):
            return x

        def wrapped(x):
            return x

        fast = tf.function(wrapped)

        def compiled(y_true, y_pred):
            return y_pred

        class MyLoss(keras.losses.Loss):
            def call(self, y_true, y_pred):
                return y_pred

        class MyLayer(keras.layers.Layer):
            def call(self, inputs):
                def inner(z):
                    return z
                return inner(inputs)

        def untouched(x):
            return x

        model.compile(loss=compiled, metrics=["mae"])
        """
    )
    traced = compute_facts([idx]).for_path("m.py")
    assert set(traced) == {
        "decorated",
        "helper",
        "wrapped",
        "compiled",
        "MyLoss.call",
        "MyLayer.call",
        "MyLayer.call.inner",
    }
    assert traced["compiled"].is_loss and traced["MyLoss.call"].is_loss
    assert not traced["decorated"].is_loss
    assert "called from traced `decorated`" in traced["helper"].reason


def test_loss_defined_in_one_module_compiled_in_another(tmp_path: Path) -> None:
    (tmp_path / "losses.py").write_text(
        "import numpy as np\n\n\ndef noisy(y_true, y_pred):\n    return helper(y_pred)\n\n\n"
        "def helper(x):\n    return x + np.random.normal()\n"
    )
    (tmp_path / "train.py").write_text(
        "from tensorflow import keras\nfrom losses import noisy\n\nmodel = keras.Sequential()\n"
        "model.compile(loss=noisy)\n"
    )
    (tmp_path / "unrelated.py").write_text("def f():\n    return 1\n")
    files = [InputFile(str(p)) for p in sorted(tmp_path.glob("*.py"))]
    result = run(files, RunOptions(rule_codes=(), root=str(tmp_path)), jobs=1)
    # losses.py mentions neither TensorFlow nor Keras, yet it was indexed
    # because train.py compiles a function from it; unrelated.py was not.
    assert result.indexed == 2
    idx_losses = build_index(
        (tmp_path / "losses.py").read_text(), str(tmp_path / "losses.py"), "losses"
    )
    idx_train = build_index(
        (tmp_path / "train.py").read_text(), str(tmp_path / "train.py"), "train"
    )
    facts = compute_facts([idx_losses, idx_train]).for_path(str(tmp_path / "losses.py"))
    assert set(facts) == {"noisy", "helper"}
    assert facts["noisy"].is_loss


def test_module_names(tmp_path: Path) -> None:
    assert module_name_for(tmp_path / "src" / "pkg" / "losses.py", tmp_path) == "pkg.losses"
    assert module_name_for(tmp_path / "pkg" / "__init__.py", tmp_path) == "pkg"


def test_syntax_error_is_recorded_not_raised() -> None:
    idx = index("def f(:\n    pass\n")
    assert idx.syntax_error is not None and idx.syntax_error[0] == 1


def test_discovery_honours_gitignore_and_exclude(tmp_path: Path) -> None:
    for name in ["a.py", "build/b.py", "gen/c_pb2.py", "keep/d.py", "keep/skip.py", "notes.txt"]:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x = 1\n")
    (tmp_path / ".gitignore").write_text("*_pb2.py\nkeep/skip.py\n")
    found = {p.relative_to(tmp_path).as_posix() for p in discover([tmp_path], tmp_path, ["build"])}
    assert found == {"a.py", "keep/d.py"}
    # A file named explicitly is always included.
    explicit = list(discover([tmp_path / "keep" / "skip.py"], tmp_path, []))
    assert explicit == [tmp_path / "keep" / "skip.py"]


def test_sources_keep_encoding_and_newlines(tmp_path: Path) -> None:
    path = tmp_path / "latin.py"
    text = "# -*- coding: latin-1 -*-\r\nname = 'caf\xe9'\r\n"
    path.write_bytes(text.encode("latin-1"))
    source = read_source(path)
    assert source.encoding == "iso-8859-1" and source.text == text
    write_atomic(path, source.text.replace("caf", "CAF"), source.encoding)
    assert path.read_bytes() == text.replace("caf", "CAF").encode("latin-1")


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.text(alphabet="ab\n é😀", max_size=12), max_size=6),
    st.lists(st.text(alphabet="ab\n é😀", max_size=12), max_size=6),
)
def test_text_edits_round_trip(old_parts: list[str], new_parts: list[str]) -> None:
    old, new = "".join(old_parts), "".join(new_parts)
    assert apply_text_edits(old, text_edits(old, new)) == new


def test_fixer_defers_overlapping_fixes_and_adds_imports_once() -> None:
    module = cst.parse_module("x = f(g(1))\n")
    call_f = module.body[0].body[0].value
    call_g = call_f.args[0].value
    fix_outer = CstFix(
        "outer",
        (NodeEdit(call_f, cst.parse_expression("tf.f(g(1))")),),
        (ImportRequest("tensorflow", None, "tf"),),
    )
    fix_inner = CstFix(
        "inner",
        (NodeEdit(call_g, cst.parse_expression("tf.g(1)")),),
        (ImportRequest("tensorflow", None, "tf"),),
    )
    new, applied = apply_fixes(module, [fix_inner, fix_outer])
    assert applied == [0]  # the outer fix overlaps the applied inner one: next round
    assert new.code == "import tensorflow as tf\n\nx = f(tf.g(1))\n"


def test_parallel_run_equals_serial(tmp_path: Path) -> None:
    for i in range(20):
        (tmp_path / f"m{i}.py").write_text(
            "import tensorflow as tf\nflag = 1\n\n"
            "@tf.function\ndef f(x):\n    return x * flag\n\nflag = 2\n"
        )
    files = [InputFile(str(p)) for p in sorted(tmp_path.glob("*.py"))]
    options = RunOptions(rule_codes=("TFR201",), root=str(tmp_path))
    serial = run(files, options, jobs=1)
    parallel = run(files, options, jobs=2)
    assert serial.findings == parallel.findings and len(serial.findings) == 20
    # As the command line runs it: workers forked from a small server process.
    fresh = run(files, options, jobs=2, fresh_workers=True)
    assert fresh.findings == serial.findings and fresh.parsed == 20


def test_node_ranges_equal_libcst_positions() -> None:
    import random

    from libcst.metadata import MetadataWrapper, PositionProvider

    from tfrewrite.facts.walk import iter_nodes
    from tfrewrite.workspace.positions import node_ranges

    source = (SRC / "pipeline" / "engine.py").read_text()
    module = cst.parse_module(source)
    nodes = list(iter_nodes(module))
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    rng = random.Random(0)
    for _ in range(50):
        picked = rng.sample(nodes, rng.randint(1, 4))
        assert node_ranges(module, picked) == [expected[n] for n in picked]


def test_a_rule_context_gives_libcst_positions_however_often_asked() -> None:
    """`RuleContext.ranges` generates only up to the nodes asked the first
    times, then every position at once: the same ranges either way."""
    import random

    from libcst.metadata import MetadataWrapper, PositionProvider

    from tfrewrite.facts.context import RuleContext
    from tfrewrite.facts.index import build_index
    from tfrewrite.facts.walk import iter_nodes

    source = (SRC / "pipeline" / "fix_rounds.py").read_text()
    module = cst.parse_module(source)
    ctx = RuleContext("fix_rounds.py", module, build_index(source, "fix_rounds.py", "m"), {})
    nodes = list(iter_nodes(module))
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    rng = random.Random(1)
    for _ in range(6):
        picked = rng.sample(nodes, 3)
        assert ctx.ranges(picked) == [expected[n] for n in picked]
        assert ctx.lines(picked) == [(expected[n].start.line, expected[n].end.line) for n in picked]


def test_fixes_on_the_same_node_wait_and_are_counted_once() -> None:
    module = cst.parse_module("x = f(1)\n")
    call = module.body[0].body[0].value
    first = CstFix("first", (NodeEdit(call, cst.parse_expression("g(1)")),))
    second = CstFix("second", (NodeEdit(call, cst.parse_expression("h(1)")),))
    new, applied = apply_fixes(module, [first, second])
    assert applied == [0]
    assert new.code == "x = g(1)\n"


# -- the fix loop reaches the fixed point ---------------------------------------------------

EXAMPLES = Path(__file__).parent.parent / "examples"


def _fix_once(source: str, path: str = "script.py"):
    from tfrewrite.api import fix_source_with_findings

    return fix_source_with_findings(source, path, None, unsafe_fixes=True)


def test_one_fix_of_the_tutorial_script_reaches_the_fixed_point() -> None:
    source = (EXAMPLES / "eager_tutorial.py").read_text()
    fixed, applied, remaining = _fix_once(source)
    again, applied_again, remaining_again = _fix_once(fixed)
    assert applied and applied_again == [] and again == fixed
    assert [(f.code, f.start.line) for f in remaining] == [
        (f.code, f.start.line) for f in remaining_again
    ]


def test_decorating_a_step_fixes_or_reports_what_its_callees_do_under_tracing() -> None:
    """A step decorated in round 1 makes its helper traced: the helper's
    `random.random()` would become a trace-time constant. It is fixed in the
    same run (or the step stays eager), never left for a second `fix`."""
    source = textwrap.dedent(
        """
        import random

        import tensorflow as tf

        def jitter(x):
            return x * (1.0 + 0.1 * random.random())

        def train_step(x, y):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(jitter(x), training=True) - y))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))

        for x, y in batches:
            train_step(x, y)
        """
    ).lstrip()
    fixed, applied, remaining = _fix_once(source)
    again, applied_again, _ = _fix_once(fixed)
    assert applied_again == [] and again == fixed
    if "@tf.function" in fixed:
        assert "random.random()" not in fixed  # fixed with the decorator
    else:
        [step] = [f for f in remaining if f.code == "TFR302"]
        assert "line 6" in step.message  # the reason the step stays eager


def test_step_blocked_by_one_blocker_gets_none_of_the_traced_code_fixes() -> None:
    source = textwrap.dedent(
        """
        import logging

        import tensorflow as tf

        def train_step(x, y):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            print("loss", loss)
            logging.info("done")

        for x, y in batches:
            train_step(x, y)
        """
    ).lstrip()
    fixed, applied, remaining = _fix_once(source)
    assert fixed == source and applied == []
    # The step stays eager: its print is no hazard there, and not reported.
    assert sorted(f.code for f in remaining) == ["TFR302"]
    [step] = [f for f in remaining if f.code == "TFR302"]
    assert "line 11 calls `logging.info`" in step.message
    assert all(f.fix is None for f in remaining)


def test_an_insertion_is_never_moved_onto_the_previous_edit() -> None:
    old, new = "\n", "a\n\n\n"
    assert apply_text_edits(old, text_edits(old, new)) == new


def test_blockers_of_one_kind_are_listed_once_with_their_lines() -> None:
    from tfrewrite.pipeline.decoration_gate import _listing
    from tfrewrite.workspace.line_names import place_lines

    problems = [(n, "calls Python `print()`") for n in (231, 232, 233, 240)]
    problems += [(243, "calls Python `input()`"), (250, "calls Python `print()`")]
    assert place_lines(_listing(sorted(problems))) == (
        "calls Python `print()` (lines 231-233, 240, 250); line 243 calls Python `input()`"
    )
