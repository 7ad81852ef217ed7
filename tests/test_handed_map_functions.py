"""Functions reaching `Dataset.map` through the code that builds the
pipeline: a method that maps whatever function its second positional
parameter holds, handed a `functools.partial` bound to a name first; and a
lambda whose defaults bind Python values where it is written, so the tracer
fills only its other parameters."""

from __future__ import annotations

from pathlib import Path

from tests.projects import check_project, found_lines

LOADER = """
    from functools import partial

    import numpy as np
    import tensorflow as tf


    def augment(image, size):
        image = tf.image.resize(image, size)
        k = np.random.randint(0, 4)
        return tf.image.rot90(image, k)


    def parse(path, label, size):
        image = tf.image.decode_png(tf.io.read_file(path), channels=3)
        return augment(image, size), label


    class Loader:
        def __init__(self, size):
            self.size = size

        def _mapped(self, paths, map_fn, batch=32):
            ds = tf.data.Dataset.from_tensor_slices(paths)
            return ds.map(map_fn).batch(batch)

        def train(self, paths):
            load = partial(parse, size=self.size)
            return self._mapped(paths, load)
"""


def test_a_partial_handed_positionally_to_the_method_that_maps_it(tmp_path: Path) -> None:
    found = check_project(tmp_path, {"loader.py": LOADER}, ("TFR102",))
    assert found_lines(found) == [("loader.py", 9)]


def test_a_partial_inline_handed_by_keyword(tmp_path: Path) -> None:
    source = LOADER.replace(
        "load = partial(parse, size=self.size)\n            return self._mapped(paths, load)",
        "return self._mapped(paths, map_fn=partial(parse, size=self.size))",
    )
    found = check_project(tmp_path, {"loader.py": source}, ("TFR102",))
    assert found_lines(found) == [("loader.py", 9)]


def test_data_handed_positionally_is_no_function(tmp_path: Path) -> None:
    """The method's second argument is data, and no `map` traces `parse`."""
    source = LOADER.replace("return ds.map(map_fn)", "return ds.map(lambda p: p)")
    assert check_project(tmp_path, {"loader.py": source}, ("TFR102",)) == []


PIPELINE = """
    import tensorflow as tf


    @tf.function
    def pre_process(data, label, normalized: bool):
        data = tf.transpose(data)
        if normalized:
            return data, label
        return data[:-3], label


    def dataset(records, normalized: bool):
        ds = tf.data.Dataset.from_tensor_slices(records)
        return ds.map(
            lambda data, label, normalized=normalized: pre_process(data, label, normalized)
        )
"""


def test_a_lambda_default_is_the_python_value_it_binds(tmp_path: Path) -> None:
    assert check_project(tmp_path, {"pipeline.py": PIPELINE}, ("TFR101",)) == []


def test_the_parameters_the_tracer_fills_are_tensors(tmp_path: Path) -> None:
    source = PIPELINE.replace(
        "lambda data, label, normalized=normalized: pre_process(data, label, normalized)",
        "lambda data, label, flag: pre_process(data, label, flag)",
    )
    found = check_project(tmp_path, {"pipeline.py": source}, ("TFR101",))
    assert found_lines(found) == [("pipeline.py", 7)]


LIBRARY_MAP = """
    import tensorflow as tf


    def map(f, xs):
        return tf.map_fn(f, xs)
"""

LOADER_BY_LAMBDA = """
    import tensorflow as tf


    def load(path, channels, resize):
        image = tf.image.decode_png(tf.io.read_file(path), channels=channels)
        if resize:
            image = tf.image.resize(image, (64, 64))
        return image


    def dataset(paths, channels, resize):
        args = (channels, resize)
        ds = tf.data.Dataset.from_tensor_slices(paths)
        ds = ds.map(lambda p: load(p, *args))
        return list(map(str, paths)), ds
"""


def test_a_dataset_map_is_not_a_project_function_of_that_name(tmp_path: Path) -> None:
    """`ds.map(...)` and Python's `map(...)` hand nothing to the project's
    own `map(f, xs)`, which gives `f` to `tf.map_fn`."""
    files = {"backend.py": LIBRARY_MAP, "loader.py": LOADER_BY_LAMBDA}
    assert check_project(tmp_path, files, ("TFR101",)) == []


LOADER_WITH_FLAGS = """
    import tensorflow as tf


    @tf.function
    def load(path, size=None, augment=True):
        image = tf.image.decode_png(tf.io.read_file(path), channels=3)
        if augment:
            image = tf.image.random_flip_left_right(image)
        if size is not None:
            image = tf.image.resize(image, size)
        return image


    def dataset(paths):
        return tf.data.Dataset.from_tensor_slices(paths).map(load)
"""


def test_a_mapped_function_keeps_its_number_and_bool_defaults(tmp_path: Path) -> None:
    # The dataset's one component fills `path`; `augment` keeps `True`.
    assert check_project(tmp_path, {"loader.py": LOADER_WITH_FLAGS}, ("TFR101",)) == []
    # A parameter without such a default is one the elements may fill.
    source = LOADER_WITH_FLAGS.replace("augment=True", "augment")
    source = source.replace("size=None, augment", "augment, size=None")
    found = check_project(tmp_path, {"loader.py": source}, ("TFR101",))
    assert found_lines(found) == [("loader.py", 7)]
