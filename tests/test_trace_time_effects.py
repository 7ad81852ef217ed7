"""Python effects that traced code runs once, at trace time (TFR202):
`next` on a Python iterator made outside the function, and writes to files
through Python; and a TensorFlow op given a non-string `name` (TFR206),
which eager ignores and tracing rejects. Each hazard has its idiomatic
control, which must stay clean: `next` on a dataset's iterator, TensorFlow's
own writers, a string name."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tfrewrite.api import check_source
from tfrewrite.cli import app
from tfrewrite.facts.op_names import name_argument, non_string_name
from tfrewrite.facts.tf_name_positions import NAME_POSITIONS


def _findings(source: str, code: str) -> list[str]:
    return [
        f.message for f in check_source(textwrap.dedent(source), select=[code]) if f.code == code
    ]


# -- next() on a Python iterator ---------------------------------------------------------

MODULE_ITERATOR = """
import tensorflow as tf

it = iter([1, 2, 3])

@tf.function
def h(x):
    return x + next(it)
"""

GENERATOR_ON_SELF = """
import numpy as np
import tensorflow as tf

class Feeder(tf.Module):
    def __init__(self):
        self.batches = self._batches()

    def _batches(self):
        step = 0
        while True:
            step += 1
            yield np.full(3, step, np.float32)

    @tf.function
    def step(self, x):
        return x + next(self.batches)
"""

ENCLOSING_GENERATOR = """
import itertools
import tensorflow as tf

def make_step():
    counter = itertools.count()
    squares = (i * i for i in range(10))

    @tf.function
    def step(x):
        return x + next(counter) + squares.__next__()

    return step
"""

MODULE_GENERATOR_FUNCTION = """
import tensorflow as tf

def numbers():
    yield 1
    yield 2

gen = numbers()

class Model(tf.keras.Model):
    def call(self, x):
        return x * next(gen, 0)
"""


@pytest.mark.parametrize(
    ("source", "count", "spelled"),
    [
        (MODULE_ITERATOR, 1, "`next(it)`"),
        (GENERATOR_ON_SELF, 1, "`next(self.batches)`"),
        (ENCLOSING_GENERATOR, 2, "`squares.__next__()`"),
        (MODULE_GENERATOR_FUNCTION, 1, "`next(gen, 0)`"),
    ],
    ids=["module-iter", "generator-on-self", "enclosing", "generator-function"],
)
def test_next_on_a_python_iterator_made_outside_is_reported(
    source: str, count: int, spelled: str
) -> None:
    messages = _findings(source, "TFR202")
    assert len(messages) == count, messages
    assert any(m.startswith(spelled) for m in messages), messages
    assert all("advances once per trace" in m for m in messages)


DATASET_ITERATORS = """
import tensorflow as tf

dataset = tf.data.Dataset.range(10).repeat()
it = iter(dataset)

class Trainer(tf.Module):
    def __init__(self, ds):
        self.iterator = iter(ds)

    @tf.function
    def step(self, x):
        return x + tf.cast(next(self.iterator), x.dtype)

@tf.function
def step(x):
    return x + tf.cast(next(it), x.dtype)

@tf.function
def train_epoch(iterator):
    for _ in tf.range(3):
        tf.print(next(iterator))
"""

LOCAL_ITERATORS = """
import tensorflow as tf

@tf.function
def pairs(x):
    parts = iter([x, 2 * x])
    first = next(parts)
    return first + next(parts)

it = iter([1, 2, 3])

def eager_only(x):
    return x + next(it)

class Fresh(tf.Module):
    def _items(self):
        yield 1

    @tf.function
    def first(self, x):
        self.items = self._items()
        return x + next(self.items)
"""


@pytest.mark.parametrize(
    "source",
    [DATASET_ITERATORS, LOCAL_ITERATORS],
    ids=["dataset-iterators", "local-or-untraced"],
)
def test_next_on_a_dataset_iterator_or_a_local_one_is_clean(source: str) -> None:
    assert _findings(source, "TFR202") == []


def test_an_attribute_replaced_from_outside_the_class_is_not_proven_python() -> None:
    source = """
    import tensorflow as tf

    class Trainer(tf.Module):
        def __init__(self):
            self.batches = iter([])

        @tf.function
        def step(self, x):
            return x + tf.cast(next(self.batches), x.dtype)

    trainer = Trainer()
    trainer.batches = iter(tf.data.Dataset.range(5))
    """
    assert _findings(source, "TFR202") == []


def test_a_module_name_rebound_to_a_dataset_iterator_is_not_proven_python() -> None:
    source = """
    import tensorflow as tf

    it = iter([1, 2, 3])

    def reset(dataset):
        global it
        it = iter(dataset)

    @tf.function
    def h(x):
        return x + next(it)
    """
    assert _findings(source, "TFR202") == []


# -- file writes ---------------------------------------------------------------------------

FILE_WRITES = """
import json

import numpy as np
import tensorflow as tf

@tf.function
def g(x, fh):
    open("log.txt", "a").write("step\\n")
    with open("trace.jsonl", mode="w") as out:
        out.write("x\\n")
        json.dump({"step": 1}, out)
    json.dump({"loss": 1.0}, fh)
    np.save("weights.npy", np.zeros(3))
    with tf.io.gfile.GFile("log.txt", "a") as f:
        f.write("x")
    return x
"""


def test_python_file_writes_in_traced_code_are_reported_once_each() -> None:
    messages = _findings(FILE_WRITES, "TFR202")
    starts = [m.split(" in traced", 1)[0] for m in messages]
    assert starts == [
        '`open(...)` opens a file for writing (mode "a")',
        '`open(...)` opens a file for writing (mode "w")',
        "`json.dump(...)` writes to a Python file object",
        "`np.save(...)` writes a file",
        '`tf.io.gfile.GFile(...)` opens a file for writing (mode "a")',
    ], messages
    assert all("later calls write nothing" in m for m in messages)


TENSORFLOW_WRITERS = """
import sys

import tensorflow as tf

writer = tf.summary.create_file_writer("logs")

@tf.function
def g(x, step):
    tf.io.write_file("out.txt", tf.strings.as_string(x))
    tf.print(x, output_stream="file:///tmp/out.txt")
    with writer.as_default():
        tf.summary.scalar("x", x, step=step)
    with open("config.json") as fh:
        config = fh.read()
    return x

def save(x):
    with open("out.txt", "w") as fh:
        fh.write(str(x))
"""


def test_tensorflow_writers_reads_and_untraced_writes_are_clean() -> None:
    assert _findings(TENSORFLOW_WRITERS, "TFR202") == []


def test_a_module_open_is_not_the_builtin() -> None:
    source = """
    import tensorflow as tf

    def open(path, mode):
        return tf.io.write_file(path, mode)

    @tf.function
    def g(x):
        open("out.txt", "w")
        return x
    """
    assert _findings(source, "TFR202") == []


# -- recursion: measured, not reported -------------------------------------------------------

RECURSIVE_HELPER = """
import tensorflow as tf

def depth(layers):
    if not layers:
        return 0
    return 1 + depth(layers[1:])

@tf.function
def f(x):
    return x * depth([1, 2, 3])
"""


def test_a_recursive_helper_called_at_python_level_is_clean() -> None:
    assert [f.code for f in check_source(RECURSIVE_HELPER)] == []


# -- a non-string `name` ---------------------------------------------------------------------


def test_the_name_table_knows_where_common_ops_take_name() -> None:
    assert NAME_POSITIONS["tensorflow.sqrt"] == 1
    assert NAME_POSITIONS["tensorflow.reduce_sum"] == 3
    assert NAME_POSITIONS["tensorflow.cast"] == 2
    assert NAME_POSITIONS["tensorflow.zeros"] == 2


NON_STRING_NAMES = """
import numpy as np
import tensorflow as tf

@tf.function
def f(x):
    a = tf.sqrt(x, tf.float32)
    b = tf.math.reduce_sum(x, 0, False, np.float32)
    c = tf.cast(x, tf.int32, name=3)
    d = tf.nn.relu(x, True)
    e = tf.add(x, x, -1.5)
    return a, b, c, d, e
"""


def test_a_non_string_name_in_traced_code_is_reported() -> None:
    messages = _findings(NON_STRING_NAMES, "TFR206")
    assert [m.split(" in traced", 1)[0] for m in messages] == [
        "`tf.sqrt(...)`",
        "`tf.math.reduce_sum(...)`",
        "`tf.cast(...)`",
        "`tf.nn.relu(...)`",
        "`tf.add(...)`",
    ]
    assert "a dtype, `tf.float32`, where it takes `name`" in messages[0]
    assert "cast with `tf.cast`" in messages[0]
    assert "a NumPy type" in messages[1]
    assert "an int, `3`, as `name=`" in messages[2]
    assert "a bool" in messages[3] and "a float" in messages[4]


STRING_NAMES = """
import tensorflow as tf

@tf.function
def f(x, label):
    a = tf.sqrt(x, "root")
    b = tf.reduce_sum(x, 0, False, name=label)
    c = tf.zeros_like(x, tf.float32)
    d = tf.cast(x, tf.int32, None)
    e = tf.add(x, x, name=0)
    f = tf.keras.layers.Dense(3, name=3)
    g = tf.random.normal([3], 0.0, 1.0, tf.float32)
    h = tf.sqrt(*[x, tf.float32])
    return a, b, c, d, e, f, g, h

def eager(x):
    return tf.sqrt(x, tf.float32)
"""


def test_string_falsy_unknown_and_untraced_names_are_clean() -> None:
    assert _findings(STRING_NAMES, "TFR206") == []


def test_name_argument_follows_keywords_and_positions() -> None:
    import libcst as cst

    from tfrewrite.facts.names import NameResolver

    resolver = NameResolver({"tf": "tensorflow", "np": "numpy"})
    call = cst.parse_expression("tf.reduce_sum(x, 0, False, tf.float32)")
    assert isinstance(call, cst.Call)
    arg = name_argument(call, "tensorflow.reduce_sum")
    assert arg is not None and non_string_name(arg.value, resolver) == "a dtype"
    keyword = cst.parse_expression("tf.reduce_sum(x, name='s')")
    assert isinstance(keyword, cst.Call)
    found = name_argument(keyword, "tensorflow.reduce_sum")
    assert found is not None and non_string_name(found.value, resolver) is None


REPLACED_IN_A_FUNCTION = """
import tensorflow as tf

class Trainer(tf.Module):
    def __init__(self):
        self.batches = iter([])

    @tf.function
    def step(self, x):
        return x + tf.cast(next(self.batches), x.dtype)

def setup(trainer, dataset):
    trainer.batches = iter(dataset)
"""

REBOUND_BY_A_FUNCTION = """
import tensorflow as tf

it = iter([1, 2, 3])

@tf.function
def h(x):
    return x + tf.cast(next(it), x.dtype)

def reset(dataset):
    global it
    it = iter(dataset)
"""


def test_check_with_its_pruned_parse_finds_what_the_api_finds(tmp_path: Path) -> None:
    """`check` parses only the code its rules can need: the set-up method
    that keeps the generator on `self` and the module's iterator must be
    kept for TFR202, as the traced ops are for TFR206."""
    sources = {
        "self_gen.py": GENERATOR_ON_SELF,
        "module_it.py": MODULE_ITERATOR,
        "writes.py": FILE_WRITES,
        "names.py": NON_STRING_NAMES,
        "replaced.py": REPLACED_IN_A_FUNCTION,
        "rebound.py": REBOUND_BY_A_FUNCTION,
    }
    expected: list[tuple[str, str]] = []
    for name, source in sources.items():
        (tmp_path / name).write_text(source)
        expected += [
            (name, f.code) for f in check_source(source, path=name, select=["TFR202", "TFR206"])
        ]
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        result = CliRunner().invoke(
            app,
            ["check", "--no-cache", "--select", "TFR202,TFR206", "--output-format", "concise", "."],
        )
    finally:
        os.chdir(old)
    found = sorted(
        (line.split(":", 1)[0], line.split(": ", 1)[1].split(" ", 1)[0])
        for line in result.output.splitlines()
        if ": TFR2" in line
    )
    assert found == sorted(expected), result.output
    assert len(found) == 1 + 1 + 5 + 5  # nothing where a function replaces the iterator


def test_an_attribute_of_an_object_self_holds_set_in_traced_code_is_reported() -> None:
    """`self.func.calls = 0` in a traced `call` resets a counter of the
    object the layer holds once, while tracing; `self.func = ...` in `build`
    sets the layer up once, by design."""
    source = textwrap.dedent(
        """
        import tensorflow as tf


        class Counter(tf.keras.layers.Layer):
            def call(self, x):
                self.calls += 1
                return x * 2.0


        class Block(tf.keras.layers.Layer):
            def build(self, input_shape):
                self.func = Counter()
                self.func.calls = 0

            def call(self, x):
                self.func.calls = 0
                return self.func(x)
        """
    )
    found = [(f.code, f.start.line) for f in check_source(source, select=["TFR202"])]
    assert found == [("TFR202", 7), ("TFR202", 17)]
