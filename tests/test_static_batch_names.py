"""TFR107 through names and counts: a tensor's static batch dimension read
into a name (`rows = h.shape[0]`, `rows, cols = h.shape`) and given as a
shape or as a count (`tf.range(rows * 2)`, `repeats=rows`) holds `None`
wherever `h.shape[0]` does. And what a list argument's elements are: a
helper called as `self.pad([h, 2])` unpacks a tensor and a Python int.

The functions are traced with `reduce_retracing=True`, under which a trace
may see the batch dimension as `None` (`facts/trace_shapes.py`)."""

from __future__ import annotations

import pytest
from tests.function_sources import with_body

from tfrewrite.api import check_source, fix_source
from tfrewrite.findings import Applicability

SELECT = ["TFR107"]

TRACED = """\
import tensorflow as tf


@tf.function(reduce_retracing=True)
def f(x):
{body}
"""

# (body, the returned expression after the fix)
NAMED_ROWS = [
    (
        """
        h = tf.nn.relu(x)
        rows = h.shape[0]
        return tf.concat([h, tf.zeros([rows, 2])], axis=1)
        """,
        "tf.concat([h, tf.zeros([tf.shape(h)[0], 2])], axis=1)",
    ),
    (
        """
        h = tf.nn.relu(x)
        rows, cols = h.shape
        return tf.reshape(h, (rows, cols, 1))
        """,
        "tf.reshape(h, (tf.shape(h)[0], cols, 1))",
    ),
    (
        """
        h = tf.nn.relu(x)
        rows, width = h.shape[0], 3
        return tf.cast(tf.range(rows * 2), tf.float32)
        """,
        "tf.cast(tf.range(tf.shape(h)[0] * 2), tf.float32)",
    ),
    (
        """
        h = tf.nn.relu(x)
        rows = h.shape[0]
        return tf.repeat(h, repeats=rows, axis=0)
        """,
        "tf.repeat(h, repeats=tf.shape(h)[0], axis=0)",
    ),
    (
        """
        h = tf.nn.relu(x)
        return tf.tile(h, [h.shape[0], 1])
        """,
        "tf.tile(h, [tf.shape(h)[0], 1])",
    ),
    (
        """
        h = tf.nn.relu(x)
        dims = h.get_shape().as_list()
        return tf.reshape(h, [dims[0], dims[1], 1])
        """,
        "tf.reshape(h, [tf.shape(h)[0], dims[1], 1])",
    ),
    (
        """
        h = tf.nn.relu(x)
        dims = h.shape.as_list()
        rows, cols = dims
        return tf.reshape(h, (rows, cols, 1))
        """,
        "tf.reshape(h, (tf.shape(h)[0], cols, 1))",
    ),
]


def _returned(source: str) -> str:
    return source.rstrip("\n").splitlines()[-1].strip().removeprefix("return ")


@pytest.mark.parametrize("body, after", NAMED_ROWS)
def test_a_batch_dimension_held_by_a_name_becomes_the_dynamic_one(body, after):
    source = with_body(TRACED, body)
    [finding] = check_source(source, select=SELECT)
    assert finding.fix is not None and finding.fix.applicability == Applicability.SAFE
    fixed = fix_source(source, select=SELECT)
    assert _returned(fixed) == after
    assert check_source(fixed, select=SELECT) == []


def test_the_message_names_what_the_name_holds():
    [finding] = check_source(with_body(TRACED, NAMED_ROWS[0][0]), select=SELECT)
    assert "`rows` (`h.shape[0]`)" in finding.message and "`tf.zeros`" in finding.message


def test_a_tensor_rebound_after_the_read_is_reported_without_a_fix():
    source = with_body(
        TRACED,
        """
        h = tf.nn.relu(x)
        rows = h.shape[0]
        h = tf.concat([h, h], axis=1)
        return tf.concat([h, tf.zeros([rows, 2])], axis=1)
        """,
    )
    [finding] = check_source(source, select=SELECT)
    assert finding.fix is None
    assert "`h` is not one value throughout the function" in finding.message


def test_dimensions_converted_one_by_one_are_reported_without_a_fix():
    # `map(int, ...)` raises at its own line when the batch is unknown: a
    # dynamic shape at the reshape alone would not help.
    source = with_body(
        TRACED,
        """
        h = tf.nn.relu(x)
        rows, cols = map(int, h.shape.as_list())
        return tf.reshape(h, [rows, cols // 2, 2])
        """,
    )
    [finding] = check_source(source, select=SELECT)
    assert "`rows` (`h.shape[0]`)" in finding.message and finding.fix is None
    assert "`rows` is bound by `int()` of the static dimension" in finding.message


def test_a_count_mixed_with_a_value_of_unknown_dtype_is_an_unsafe_fix():
    source = with_body(
        TRACED.replace("def f(x)", "def f(x, n)"),
        """
        h = tf.nn.relu(x)
        rows = h.shape[0]
        return tf.range(rows * n)
        """,
    )
    [finding] = check_source(source, select=SELECT)
    assert finding.fix.applicability == Applicability.UNSAFE


@pytest.mark.parametrize(
    "body",
    [
        # Other dimensions are known to the trace; a Python use is meant.
        "h = tf.nn.relu(x)\nunits = h.shape[-1]\nreturn tf.reshape(h, [-1, units])",
        "h = tf.nn.relu(x)\nrows = h.shape[0]\nreturn [h[i] for i in range(rows)]",
        # Bound twice: not one value.
        "h = tf.nn.relu(x)\nrows = h.shape[0]\nrows = 4\nreturn tf.zeros([rows, 2])",
    ],
)
def test_left_alone(body):
    assert check_source(with_body(TRACED, body), select=SELECT) == []


PER_ELEMENT = """\
import tensorflow as tf


def cut(image):
    height = image.shape[0]
    return image * tf.reshape(tf.ones([height]), (-1, 1))


def load(images):
    return tf.data.Dataset.from_tensor_slices(images).map(lambda image: cut(image))
"""


def test_a_dataset_element_function_has_no_batch_dimension():
    """A `Dataset.map` function sees one element: its dimension 0 is the
    element's own (an image's height), known from the dataset."""
    assert check_source(PER_ELEMENT, select=SELECT) == []


# A helper of a Keras layer called with a list display: a tensor, then a
# Python int. Unpacking the parameter binds a tensor to `h` only.
LIST_ARGUMENT = """\
import tensorflow as tf


class PadRows(tf.keras.layers.Layer):
    def call(self, x):
        return self.pad([tf.nn.relu(x), 2])

    def pad(self, inputs):
        h, width = inputs
        rows = h.shape[0]
        if width > 1:
            h = h * 2.0
        if tf.reduce_sum(h) > 0.0:
            h = h + 1.0
        return tf.concat([h, tf.zeros((rows, width))], axis=1)
"""


def test_elements_of_a_list_argument_are_what_the_call_sites_pass():
    findings = check_source(LIST_ARGUMENT, select=["TFR101", "TFR107"])
    conditions = [f.start.line for f in findings if f.code == "TFR101"]
    assert conditions == [13]  # `tf.reduce_sum(h) > 0.0`; `width` is a Python int
    [shape] = [f for f in findings if f.code == "TFR107"]
    assert shape.start.line == 15 and shape.fix is None  # `h` is rebound after the read


UNPACKED_ROWS = """\
import tensorflow as tf


class PadRows(tf.keras.layers.Layer):
    def call(self, x):
        return self.pad([tf.nn.relu(x), x])

    def pad(self, inputs):
        h, other = inputs
        rows = h.shape[0]
        return tf.concat([h + other, tf.zeros((rows, 2))], axis=1)
"""


def test_a_tensor_unpacked_from_a_list_argument_gets_the_safe_fix():
    [finding] = check_source(UNPACKED_ROWS, select=SELECT)
    assert finding.fix is not None
    fixed = fix_source(UNPACKED_ROWS, select=SELECT)
    assert "tf.zeros((tf.shape(h)[0], 2))" in fixed


SPLIT_BY_ROWS = """\
import tensorflow as tf


def shrink(t, scale=2.0):
    return tf.image.resize(t, [4, 4]) * scale


@tf.function(reduce_retracing=True)
def pieces(images):
    h = shrink(images, scale=3.0)
    dims = h.get_shape().as_list()
    return tf.split(h, dims[0], axis=0)
"""


def test_a_count_that_must_be_a_python_int_is_reported_without_a_fix():
    """`tf.split` takes its number of pieces as a Python int: the dynamic
    shape cannot stand in. `h` comes from a helper called with a keyword
    and a default left out, which returns a tensor for a tensor argument."""
    [finding] = check_source(SPLIT_BY_ROWS, select=SELECT)
    assert finding.start.line == 12
    assert "`dims[0]` (`h.shape[0]`)" in finding.message
    assert finding.fix is None and "no fix: it needs the number as a Python int" in finding.message


def test_a_parameter_rebound_after_the_read_is_what_the_read_sees():
    """The static read comes before `x` is rebound to something unknown:
    the parameter's argument is what it reads (reported, and left as it is,
    since `tf.shape(x)` here would read another value)."""
    source = with_body(
        TRACED,
        """
        rows = x.shape[0]
        out = tf.zeros([rows, 2])
        x = unknown(x)
        return out, x
        """,
    )
    [finding] = check_source(source, select=SELECT)
    assert finding.fix is None and "not rewritten: `x` is not one value" in finding.message


def test_a_shape_list_changed_in_place_holds_no_static_dimension():
    """`dims[0] = -1` before the list is read: its first item is `-1`, not
    the batch dimension, and nothing is rewritten."""
    source = with_body(
        TRACED,
        """
        h = tf.nn.relu(x)
        dims = h.get_shape().as_list()
        dims[0] = -1
        return tf.reshape(h, [dims[0], dims[1], 1])
        """,
    )
    assert check_source(source, select=SELECT) == []


GRID = """\
import tensorflow as tf


def grid(batch_size, height, width):
    cells = tf.reshape(tf.range(height * width, dtype=tf.float32), (1, height, width))
    return tf.tile(cells, (batch_size, 1, 1))


@tf.function(reduce_retracing=True)
def with_grid(images):
    rows, height, width = images.shape
    return images + grid(rows, height, width)
"""


def test_a_batch_dimension_handed_to_a_helper_that_tiles_by_it_is_reported():
    """`grid(rows, ...)` where `grid` gives `batch_size` to `tf.tile`: the
    static batch dimension fails there once the trace does not know it. The
    fix passes the dynamic one, unsafe: `grid` must take a tensor there."""
    [finding] = check_source(GRID, select=SELECT)
    assert finding.start.line == 12
    assert "`grid` gives it to a TensorFlow op as a shape or a count (its `batch_size`)" in (
        finding.message
    )
    assert finding.fix is not None and finding.fix.applicability == Applicability.UNSAFE
    fixed = fix_source(GRID, select=SELECT, unsafe_fixes=True)
    assert "return images + grid(tf.shape(images)[0], height, width)" in fixed


def test_a_helper_of_another_module_is_known_by_the_project(tmp_path):
    from tfrewrite.pipeline.engine import InputFile, RunOptions, run

    helper, _, caller = GRID.partition("\n\n@tf.function(reduce_retracing=True)\n")
    (tmp_path / "grids.py").write_text(helper)
    (tmp_path / "model.py").write_text(
        "import tensorflow as tf\n\nfrom grids import grid\n\n\n"
        "@tf.function(reduce_retracing=True)\n" + caller
    )
    files = [InputFile(str(tmp_path / name)) for name in ("grids.py", "model.py")]
    result = run(files, RunOptions(rule_codes=tuple(SELECT), root=str(tmp_path)), jobs=1)
    [finding] = result.findings
    assert finding.path.endswith("model.py") and "(its `batch_size`)" in finding.message


def test_a_shape_built_from_a_slice_of_the_static_shape_list_is_judged_whole():
    """`[-1] + x.shape.as_list()[2:]`: a shape built from the static shape
    list past the batch dimension, checked as any shape built from `x.shape`
    is, without failing on the list's `as_list()` call."""
    source = with_body(
        TRACED,
        """
        h = tf.nn.relu(x)
        return tf.reshape(h, [-1] + h.shape.as_list()[1:])
        """,
    )
    findings = check_source(source, select=SELECT)
    assert all(f.fix is None for f in findings)


def test_a_shape_unpacked_before_the_tensor_is_rebound_is_the_tensor_read_then():
    """`B, N, C = h.shape` of a tensor, then `h` rebound to what a sublayer
    returns (a value tfrewrite cannot type) before `tf.reshape(h, (B, N,
    C))`: the names hold the dimensions of the tensor read where they were
    bound, `None` for the batch under `fit`. Reported, not rewritten."""
    source = with_body(
        TRACED,
        """
        h = tf.nn.relu(x)
        B, N, C = h.shape
        h = tf.reshape(h, (-1, C))
        h = unknown(h)
        return tf.reshape(h, (B, N, C))
        """,
    )
    [finding] = check_source(source, select=SELECT)
    assert "`B` (`h.shape[0]`)" in finding.message
    assert finding.fix is None and "not rewritten: `h` is not one value" in finding.message


# `b` is the batch dimension on both branches; `cols` another one on each.
BRANCH_ROWS = """
h = tf.nn.relu(x)
if h.shape[1] == 3:
    b, cols = h.shape
else:
    b, cols = h.shape[0], h.shape[1]
return tf.zeros([b, 2]) + tf.reduce_sum(h) + cols
"""


def test_a_name_each_branch_binds_to_the_same_dimension_holds_it():
    """`b` is `h.shape[0]` on both branches: it holds the batch dimension
    wherever it is read, and the fix writes `tf.shape(h)[0]` there."""
    source = with_body(TRACED, BRANCH_ROWS)
    [finding] = check_source(source, select=SELECT)
    assert "`b` (`h.shape[0]`)" in finding.message
    fixed = fix_source(source, select=SELECT)
    assert "tf.zeros([tf.shape(h)[0], 2])" in fixed


@pytest.mark.parametrize(("index", "expected"), [("-1", []), ("1", []), ("0", ["TFR107"])])
def test_a_shape_built_only_from_inner_dimensions_is_known_to_the_trace(index, expected):
    """`num_dims = z.shape[-1]` given as a size: a feature dimension, which
    a trace knows; only the batch dimension is unknown to it."""
    source = with_body(
        TRACED,
        f"""
        z = tf.nn.relu(x)
        num_dims = z.shape[{index}]
        return tf.split(z, tf.ones(num_dims, dtype=tf.int32), axis=-1)
        """,
    )
    assert [f.code for f in check_source(source, select=SELECT)] == expected
