"""The hazards of `tests/test_trace_time_effects.py`, shown under TensorFlow
on the original code: run eagerly and traced, the same calls differ.

- `next` on a Python iterator made outside a traced function advances once
  per trace (eagerly 2, 3, 4; traced 2, 2, 2), while `next` on a dataset's
  iterator runs on every call (the control).
- A Python file write runs once, while tracing; `tf.print` to a file writes
  on every call (the control).
- A recursive `tf.function` (measured, not reported): with a tensor argument
  tracing never ends (AutoGraph stages both branches of the `if`, and the
  recursive call traces again), raising `StagingError` from a
  `RecursionError`; with a Python int it works and traces once per value.
- A non-string `name` is ignored eagerly and raises `TypeError` traced; a
  string runs both ways (the control). The committed table of where each
  function takes `name` is what the installed TensorFlow's signatures give.
"""

from __future__ import annotations

import io
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
import tensorflow as tf
from tests import test_trace_time_effects as cases

from tfrewrite.facts import tf_name_positions

from .equivalence import load_file_module, load_path, run_eagerly

pytestmark = pytest.mark.tensorflow

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "tf_name_positions.py"


def _three_calls(fn, *args) -> list[float]:
    return [float(np.asarray(fn(*args)).ravel()[0]) for _ in range(3)]


# -- next() on a Python iterator ---------------------------------------------------------


def test_next_on_a_module_iterator_advances_once_per_trace(tmp_path: Path) -> None:
    eager = load_file_module(cases.MODULE_ITERATOR, tmp_path)
    traced = load_file_module(cases.MODULE_ITERATOR, tmp_path)
    x = tf.constant(1)
    assert run_eagerly(lambda: _three_calls(eager.h, x)) == [2.0, 3.0, 4.0]
    assert _three_calls(traced.h, x) == [2.0, 2.0, 2.0]


def test_next_on_a_generator_kept_on_self_advances_once_per_trace(tmp_path: Path) -> None:
    eager = load_file_module(cases.GENERATOR_ON_SELF, tmp_path).Feeder()
    traced = load_file_module(cases.GENERATOR_ON_SELF, tmp_path).Feeder()
    x = tf.ones(3)
    assert run_eagerly(lambda: _three_calls(eager.step, x)) == [2.0, 3.0, 4.0]
    assert _three_calls(traced.step, x) == [2.0, 2.0, 2.0]


def test_next_on_a_dataset_iterator_runs_on_every_traced_call(tmp_path: Path) -> None:
    eager = load_file_module(cases.DATASET_ITERATORS, tmp_path)
    traced = load_file_module(cases.DATASET_ITERATORS, tmp_path)
    x = tf.constant(1)
    assert run_eagerly(lambda: _three_calls(eager.step, x)) == [1.0, 2.0, 3.0]
    assert _three_calls(traced.step, x) == [1.0, 2.0, 3.0]
    trainer = traced.Trainer(tf.data.Dataset.range(10))
    assert _three_calls(trainer.step, x) == [1.0, 2.0, 3.0]


# -- file writes ---------------------------------------------------------------------------


def _write_three_times(module: ModuleType, eagerly: bool) -> tuple[int, int, int]:
    """(lines of log.txt, records written to the file object given, bytes
    appended through GFile) after three calls."""
    sink = io.StringIO()

    def calls() -> None:
        for _ in range(3):
            module.g(tf.constant(1.0), sink)

    run_eagerly(calls) if eagerly else calls()
    lines = Path("log.txt").read_text().count("step\n")
    gfile = Path("log.txt").read_text().count("x")
    return lines, sink.getvalue().count("loss"), gfile


def test_python_file_writes_run_once_traced(tmp_path: Path, monkeypatch) -> None:
    eager_dir, traced_dir = tmp_path / "eager", tmp_path / "traced"
    eager_dir.mkdir()
    traced_dir.mkdir()
    monkeypatch.chdir(eager_dir)
    eager = _write_three_times(load_file_module(cases.FILE_WRITES, tmp_path), eagerly=True)
    monkeypatch.chdir(traced_dir)
    traced = _write_three_times(load_file_module(cases.FILE_WRITES, tmp_path), eagerly=False)
    assert eager == (3, 3, 3)
    assert traced == (1, 1, 1)
    assert (traced_dir / "weights.npy").exists()  # written once, at trace time


def test_tf_print_to_a_file_writes_on_every_traced_call(tmp_path: Path) -> None:
    out = tmp_path / "out.txt"

    @tf.function
    def g(x):
        tf.print(x, output_stream=f"file://{out}")
        tf.io.write_file(str(tmp_path / "last.txt"), tf.strings.as_string(x))
        return x

    for value in (1, 2, 3):
        g(tf.constant(value))
    assert out.read_text().split() == ["1", "2", "3"]
    assert (tmp_path / "last.txt").read_text() == "3"


# -- recursion (measured; tfrewrite reports nothing) ------------------------------------------

RECURSIVE = """
import tensorflow as tf

@tf.function
def fact(n):
    if n <= 1:
        return 1
    return n * fact(n - 1)

class Counter(tf.Module):
    @tf.function
    def fact(self, n):
        if n <= 1:
            return tf.constant(1)
        return n * self.fact(n - 1)
"""


def test_recursion_with_a_tensor_argument_never_finishes_tracing(tmp_path: Path) -> None:
    module = load_file_module(RECURSIVE, tmp_path)
    assert int(run_eagerly(module.fact, tf.constant(5))) == 120
    counter = module.Counter()  # held: a traced method keeps only a weak reference to it
    for fact in (module.fact, counter.fact):
        with pytest.raises(Exception, match="RecursionError") as raised:
            fact(tf.constant(5))
        assert type(raised.value).__name__ == "StagingError"


def test_recursion_with_a_python_int_traces_once_per_value(tmp_path: Path) -> None:
    module = load_file_module(RECURSIVE, tmp_path)
    assert int(module.fact(5)) == 120
    assert module.fact.experimental_get_tracing_count() == 5  # fact(5) ... fact(1)
    assert int(module.fact(6)) == 720
    assert module.fact.experimental_get_tracing_count() == 6
    counter = module.Counter()
    assert int(counter.fact(5)) == 120


# -- a non-string `name` ---------------------------------------------------------------------

X = np.array([[1.0, 4.0], [9.0, 16.0]], np.float32)


@pytest.mark.parametrize(
    ("call", "plain"),
    [
        (lambda x: tf.sqrt(x, tf.float32), lambda x: tf.sqrt(x)),
        (lambda x: tf.math.reduce_sum(x, 0, False, np.float32), lambda x: tf.reduce_sum(x, 0)),
        (lambda x: tf.cast(x, tf.int32, name=3), lambda x: tf.cast(x, tf.int32)),
        (lambda x: tf.nn.relu(x, True), lambda x: tf.nn.relu(x)),
        (lambda x: tf.add(x, x, -1.5), lambda x: tf.add(x, x)),
        (lambda x: tf.zeros_like(x, tf.float32, tf.float32), lambda x: tf.zeros_like(x)),
        (lambda x: tf.matmul(x, x, name=tf.int64), lambda x: tf.matmul(x, x)),
    ],
    ids=["sqrt", "reduce_sum", "cast", "relu", "add", "zeros_like", "matmul"],
)
def test_a_non_string_name_is_ignored_eagerly_and_raises_traced(call, plain) -> None:
    x = tf.constant(X)
    np.testing.assert_array_equal(call(x).numpy(), plain(x).numpy())
    with pytest.raises(TypeError):
        tf.function(call, autograph=False)(x)


def test_the_whole_source_case_runs_eagerly_and_raises_traced(tmp_path: Path) -> None:
    module = load_file_module(cases.NON_STRING_NAMES, tmp_path)
    run_eagerly(module.f, tf.constant(X))
    with pytest.raises(TypeError):
        module.f(tf.constant(X))


def test_string_falsy_and_dtype_place_names_run_traced(tmp_path: Path) -> None:
    @tf.function
    def f(x):
        a = tf.sqrt(x, "root")
        b = tf.reduce_sum(x, 0, False, name="total")
        c = tf.zeros_like(x, tf.float32)
        d = tf.cast(x, tf.int32, None)
        e = tf.add(x, x, name=0)
        return a, b, c, d, e

    f(tf.constant(X))


def _script() -> ModuleType:
    return load_path(SCRIPT, "tf_name_positions_script")


def test_the_committed_name_positions_are_the_installed_tensorflows() -> None:
    recorded = tf_name_positions.TENSORFLOW_VERSION
    if tf.__version__ != recorded:
        pytest.skip(f"generated from TensorFlow {recorded}; {tf.__version__} is installed")
    script = _script()
    positions = script.name_positions()
    assert positions == tf_name_positions.NAME_POSITIONS, (
        "regenerate: python scripts/tf_name_positions.py"
    )
    assert script.render(tf.__version__, positions) == Path(tf_name_positions.__file__).read_text()


def test_the_measurement_script_sees_ops_ignore_the_name_eagerly_and_raise_traced() -> None:
    names = ["tensorflow.sqrt", "tensorflow.math.reduce_sum", "tensorflow.nn.relu"]
    outcomes = _script().traced_outcomes([*names, "tensorflow.math.conj"])
    assert {name: outcomes[name] for name in names} == dict.fromkeys(names, ("ok", "TypeError"))
    assert outcomes["tensorflow.math.conj"] == ("ok", "ok")  # a real input is returned as it is
