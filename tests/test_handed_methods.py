"""Methods handed to `Dataset.map` through an object a function builds:
`ds.map(aug.flip)` for `aug = Augment()`, and the dispatch by name
`ds.map(getattr(aug, "get" + name))` for each name a config lists, which
may fetch any method of the class whose name starts so. A `.map` given
`num_parallel_calls` is a dataset's, whatever its receiver holds
(`self.dataset`)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tfrewrite.pipeline.engine import InputFile, RunOptions, run

AUGMENT = """
import tensorflow as tf


class Augment:
    def __init__(self, p):
        self.p = p

    def getFlip(self, x, y):
        if tf.random.uniform(()) > self.p:
            x = tf.image.flip_left_right(x)
        return x, y

    def getShift(self, x, y):
        if tf.random.uniform(()) > self.p:
            x = tf.roll(x, 1, axis=0)
        return x, y

    def blur(self, x, y):
        if tf.random.uniform(()) > self.p:
            x = x * 0.5
        return x, y
"""

LOADER = """
import tensorflow as tf
from augment import Augment


class Loader:
    def __init__(self, files):
        self.dataset = tf.data.TFRecordDataset(files)

    def augment(self, names, p):
        aug = Augment(p)
        for name in names:
            self.dataset = self.dataset.map(getattr(aug, "get" + name), num_parallel_calls=4)
"""

DIRECT = """
import tensorflow as tf
from augment import Augment


def pipeline(ds, p):
    aug = Augment(p)
    return ds.batch(8).map(aug.blur)
"""


def _findings(root: Path, loader: str) -> list[tuple[str, int]]:
    (root / "augment.py").write_text(textwrap.dedent(AUGMENT))
    (root / "loader.py").write_text(textwrap.dedent(loader))
    files = [InputFile(str(root / "augment.py")), InputFile(str(root / "loader.py"))]
    result = run(files, RunOptions(rule_codes=("TFR101",), root=str(root)), jobs=1)
    return sorted((Path(f.path).name, f.start.line) for f in result.findings)


def test_methods_a_getattr_prefix_may_fetch_run_traced(tmp_path: Path) -> None:
    # getFlip and getShift: `blur` does not start with "get".
    assert _findings(tmp_path, LOADER) == [("augment.py", 10), ("augment.py", 15)]


def test_a_method_of_an_object_the_function_builds_runs_traced(tmp_path: Path) -> None:
    assert _findings(tmp_path, DIRECT) == [("augment.py", 20)]


SCRIPT = """
import tensorflow as tf
from augment import Augment

aug = Augment(0.5)
ds = tf.data.Dataset.from_tensor_slices(tf.zeros((4, 2))).map(aug.blur, num_parallel_calls=2)
"""


def test_a_method_of_a_module_level_object_runs_traced(tmp_path: Path) -> None:
    assert _findings(tmp_path, SCRIPT) == [("augment.py", 20)]


FACTORY = """
import tensorflow as tf


def make_parse(sequence_length):
    def parse_fn(x):
        pad = sequence_length - tf.shape(x)[0]
        if pad < 0:
            pad += sequence_length
        return tf.pad(x, [[0, pad]])

    return parse_fn


def load(files, sequence_length):
    return tf.data.TFRecordDataset(files).map(make_parse(sequence_length))
"""


def test_what_a_factory_called_in_map_returns_is_traced() -> None:
    """`ds.map(make_parse(n))` hands `map` the `parse_fn` the factory
    defines and returns: its tensor `if` is traced code."""
    from tfrewrite.facts.index import build_index
    from tfrewrite.facts.project import compute_facts

    index = build_index(textwrap.dedent(FACTORY), "data.py", "data")
    traced = compute_facts([index]).for_path("data.py")
    assert "make_parse.parse_fn" in traced and "make_parse" not in traced


# The factory above, its result bound to a name before `map` is handed it.
BOUND_FACTORY = (
    FACTORY.split("\n\ndef load(")[0]
    + """

parse = make_parse(16)
train = tf.data.TFRecordDataset(["a.tfrecord"]).map(parse, num_parallel_calls=4)


def load(files, sequence_length):
    fn = make_parse(sequence_length)
    return tf.data.TFRecordDataset(files).map(fn)
"""
)


def test_what_a_factory_returns_is_traced_through_the_name_it_is_bound_to() -> None:
    """`parse = make_parse(16)` at module level, or `fn = make_parse(n)` in
    a function, then `ds.map(parse)`: the name holds the `parse_fn` the
    factory returns, which `map` traces."""
    from tfrewrite.facts.index import build_index
    from tfrewrite.facts.project import compute_facts

    index = build_index(textwrap.dedent(BOUND_FACTORY), "data.py", "data")
    traced = compute_facts([index]).for_path("data.py")
    assert "make_parse.parse_fn" in traced and "make_parse" not in traced
    assert sorted(site.target for site in index.traced_sites) == ["data.make_parse()"] * 2


OPTIONAL_LOOP = """
import tensorflow as tf


@tf.function
def run_steps(iterator, steps):
    for _ in tf.range(steps):
        element = iterator.get_next_as_optional()
        if not element.has_value():
            break
        step(element.get_value())
"""


def test_an_optional_elements_check_is_a_tensor_condition() -> None:
    """`iterator.get_next_as_optional().has_value()` is a boolean scalar
    tensor: the `if` on it needs AutoGraph (reported; `break` leaves no
    `tf.cond` form)."""
    from tfrewrite.api import check_source

    [finding] = check_source(textwrap.dedent(OPTIONAL_LOOP), select=["TFR101"])
    assert finding.start.line == 9 and finding.fix is None
