"""Verify proves rewrites of projects as they are shipped: a losses module
with plotting and vision imports the workers lack, a function whose local
shares its name with a later top-level statement that fails, and a method of
an abstract base class."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from tests.test_verify_reach import NEIGHBOURS, UNPACKING, WINDOW

from tfrewrite.api import fix_source
from tfrewrite.verify.checks import Options, Request, verify

pytestmark = pytest.mark.tensorflow

FAST = Options(samples=120, search=48, xla=False)


def _verify(before: str, after: str, qualname: str, path: str = "losses.py") -> dict:
    return verify(
        Request(
            qualname=qualname,
            original_source=textwrap.dedent(before),
            rewrite_source=textwrap.dedent(after),
            path=path,
            options=FAST,
        )
    )


def _warnings(result: dict) -> str:
    return "\n".join(result.get("warnings") or [])


LOSSES = """\
import cv2
import matplotlib.pyplot as plt
import tensorflow as tf
import tensorflow_datasets as tfds


class WeightedLoss(tf.keras.losses.Loss):
    def call(self, y_true, y_pred):
        return tf.reduce_mean(tf.square(y_true - y_pred)) * 2.0

    def show(self, image):
        plt.imshow(cv2.cvtColor(image, cv2.COLOR_BGR2RGB))


def weighted_loss(y_true, y_pred):
    return tf.reduce_mean(tf.square(y_true - y_pred)) * 2.0


def preview():
    for image, _ in tfds.load("mnist", split="train").take(1):
        plt.imshow(image)
"""


@pytest.mark.parametrize("qualname", ["WeightedLoss.call", "weighted_loss"])
def test_imports_the_loss_never_reaches_do_not_need_their_packages(qualname: str) -> None:
    rewrite = LOSSES.replace("tf.square(y_true - y_pred)", "tf.square(y_pred - y_true)")
    result = _verify(LOSSES, rewrite, qualname)
    assert result["verdict"] == "equivalent", result


def test_a_missing_package_the_loss_reaches_is_named_with_its_line() -> None:
    """Reached by name (`self.show`): needs package at load, with the import's
    line; reached where no name says so (`getattr`): needs package when the
    stand-in is touched, with the line that touched it."""
    for call, package, distribution in [
        ("self.show(y_pred)", "cv2` (imported by losses.py, line 1)", "opencv-python"),
        # `plt.imshow` is only looked up before its argument
        # `cv2.cvtColor(...)` is called: cv2 is the package used first.
        (
            'getattr(self, "show")(y_pred)',
            "cv2` (imported by losses.py, line 1; touched on losses.py, line 13)",
            "opencv-python",
        ),
    ]:
        source = LOSSES.replace(
            "        return tf.reduce_mean(tf.square(y_true - y_pred)) * 2.0\n\n    def show",
            f"        {call}\n"
            "        return tf.reduce_mean(tf.square(y_true - y_pred)) * 2.0\n\n    def show",
        )
        rewrite = source.replace("tf.square(y_true - y_pred)", "tf.square(y_pred - y_true)")
        result = _verify(source, rewrite, "WeightedLoss.call")
        assert result["verdict"] == "needs package", result
        assert f"needs package `{package}" in result["needs_package"]
        assert f"pip install {distribution}" in result["needs_package"]


# A class whose body names a package the workers lack only in annotations
# (evaluated when the class is made, never used by the loss).
ANNOTATED = """\
import pandas_stand_in_test as pd
import tensorflow as tf


class Estimator:
    frame: pd.DataFrame

    def __init__(self, scale=2.0):
        self.scale = scale

    def loss(self, x: tf.Tensor, z: tf.Tensor) -> tf.Tensor:
        return tf.reduce_mean(tf.square(x - z)) * self.scale

    def summary(self, params: tf.Tensor) -> pd.Series:
        return pd.Series(params.numpy())
"""


def test_a_package_named_only_in_annotations_is_not_needed() -> None:
    rewrite = ANNOTATED.replace("tf.square(x - z)", "tf.square(z - x)")
    result = _verify(ANNOTATED, rewrite, "Estimator.loss")
    assert result["verdict"] == "equivalent", result


# An image resized and padded to a (height, width) pair: an unbatched image
# and a pair of sizes, found by search.
RESIZE = """\
import tensorflow as tf


def resize_with_pad(image, desired_size, pad_value=255):
    size = tf.shape(image)
    ratio = size[0] / size[1]
    if ratio >= desired_size[0] / desired_size[1]:
        height, width = desired_size[0], int(desired_size[0] // ratio)
    else:
        height, width = int(desired_size[1] * ratio), desired_size[1]
    resized = tf.image.resize(image, (height, width))
    pad_h, pad_w = desired_size[0] - height, desired_size[1] - width
    return tf.pad(resized, [[0, pad_h], [0, pad_w], [0, 0]], constant_values=pad_value)
"""


def test_an_image_and_the_size_pair_it_is_padded_to_are_found_by_search() -> None:
    rewrite = RESIZE.replace(
        "tf.image.resize(image, (height, width))", "tf.image.resize(image, [height, width])"
    )
    result = _verify(RESIZE, rewrite, "resize_with_pad", "images.py")
    assert "inputs found by search (unbatched image, sizes by name)" in _warnings(result)
    checks = {c["name"]: c for c in result["checks"]}
    assert checks["rewrite eager"]["ok"] and checks["rewrite traced"]["ok"], result
    # Its tensor `if` needs AutoGraph, as the original's does: a rewrite whose
    # fixes are not known must do without, so this one is a mismatch there.
    assert result["verdict"] == "mismatch"


EVALUATE = """\
import tensorflow as tf


def evaluate(predictions, labels):
    test_loss = tf.reduce_mean(tf.abs(predictions - labels))
    if test_loss > 0.5:
        test_loss = test_loss * 0.5
    return test_loss


losses = []
test_loss = sum(losses) / len(losses)
print("test loss", test_loss)
"""


def test_a_local_named_like_a_failing_top_level_statement_is_not_run() -> None:
    rewrite = EVALUATE.replace(
        "    if test_loss > 0.5:\n        test_loss = test_loss * 0.5\n",
        "    test_loss = tf.cond(test_loss > 0.5, lambda: test_loss * 0.5, lambda: test_loss)\n",
    )
    result = _verify(EVALUATE, rewrite, "evaluate", "evaluate.py")
    assert result["verdict"] in ("equivalent", "consistent"), result


ABSTRACT = """\
import abc

import tensorflow as tf


class Base(abc.ABC):
    @abc.abstractmethod
    def transform(self, x):
        ...

    def loss(self, y_true, y_pred):
        error = self.transform(y_true - y_pred)
        if tf.reduce_mean(error) > 1.0:
            error = error / 2.0
        return tf.reduce_mean(error)


class Impl(Base):
    def transform(self, x):
        return tf.abs(x)
"""


def test_a_method_of_an_abstract_base_runs_on_its_concrete_subclass() -> None:
    rewrite = ABSTRACT.replace(
        "        if tf.reduce_mean(error) > 1.0:\n            error = error / 2.0\n",
        "        error = tf.cond(\n"
        "            tf.reduce_mean(error) > 1.0, lambda: error / 2.0, lambda: error)\n",
    )
    result = _verify(ABSTRACT, rewrite, "Base.loss")
    assert result["verdict"] in ("equivalent", "consistent"), result
    assert "`Base` is abstract" in _warnings(result) and "`Impl`" in _warnings(result)


def test_an_abstract_base_runs_on_a_subclass_in_another_file(tmp_path: Path) -> None:
    base = ABSTRACT.split("class Impl")[0]
    (tmp_path / "base.py").write_text(base)
    (tmp_path / "impl.py").write_text(
        "import tensorflow as tf\n\nfrom base import Base\n\n\nclass Impl(Base):\n"
        "    def transform(self, x):\n        return tf.abs(x)\n"
    )
    rewrite = base.replace(
        "        if tf.reduce_mean(error) > 1.0:\n            error = error / 2.0\n",
        "        error = tf.cond(\n"
        "            tf.reduce_mean(error) > 1.0, lambda: error / 2.0, lambda: error)\n",
    )
    result = _verify(base, rewrite, "Base.loss", str(tmp_path / "base.py"))
    assert result["verdict"] in ("equivalent", "consistent"), result
    assert "concrete subclass in impl.py" in _warnings(result)


FEATURES = """\
import tensorflow as tf


@tf.function
def score(features):
    x = features["x"]
    if tf.reduce_mean(x) > 0.5:
        x = x * 2.0
    return tf.reduce_sum(x * features["weight"])
"""


def test_a_dict_of_tensors_is_built_from_the_keys_the_function_reads() -> None:
    rewrite = FEATURES.replace(
        "    if tf.reduce_mean(x) > 0.5:\n        x = x * 2.0\n",
        "    x = tf.cond(tf.reduce_mean(x) > 0.5, lambda: x * 2.0, lambda: x)\n",
    )
    result = _verify(FEATURES, rewrite, "score", "model.py")
    assert result["verdict"] == "equivalent", result
    assert "features = {x: float32[8,4]" in _warnings(result)


def test_a_layer_helper_unpacking_its_inputs_list_is_proven() -> None:
    """`y, n_context, n_target = inputs`: verify passes a list of a tensor and
    two counts, searched until the tensor has the rank the helper slices."""
    rewrite = fix_source(UNPACKING, select=["TFR107"], unsafe_fixes=True)
    assert "tf.shape(y)[0]" in rewrite
    result = _verify(UNPACKING, rewrite, "Masker.mask", "masker.py")
    assert result["verdict"] == "equivalent", result
    assert "inputs = [float32[8,4,4] in [0,1], 4, 4]" in _warnings(result)


@pytest.mark.parametrize(
    ("source", "qualname", "found"),
    [
        # Counts that slice one axis together: searched small.
        (
            WINDOW,
            "Window.window",
            "(small counts, rank 3): inputs = [float32[8,4,4] in [0,1], 2, 2]",
        ),
        # Counts that slice one axis one after the other: an axis as long as both.
        (NEIGHBOURS, "Neighbours.gaps", "(long axes, rank 3): inputs = [float32[8,8,8] in [0,1]"),
    ],
)
def test_counts_slicing_one_axis_are_searched_to_fit_it(
    source: str, qualname: str, found: str
) -> None:
    rewrite = fix_source(source, select=["TFR107"], unsafe_fixes=True)
    assert "tf.shape(x)[0]" in rewrite
    result = _verify(source, rewrite, qualname, "counts.py")
    assert result["verdict"] == "equivalent", result
    assert found in _warnings(result)


SHAPE_PRINT = """\
import tensorflow as tf


@tf.function
def spread(x):
    print("shapes", x.shape)
    if tf.reduce_mean(x) > 0.5:
        x = x * 2.0
    return x
"""


def test_a_print_the_rewrite_left_as_written_diverges_as_the_original_does() -> None:
    """A static shape printed while tracing: no rule rewrites it, and the
    rewrite prints as the original does traced. Not the rewrite's fault: a
    warning; the same print left behind by a rewrite that converted prints
    is a mismatch."""
    rewrite = SHAPE_PRINT.replace(
        "    if tf.reduce_mean(x) > 0.5:\n        x = x * 2.0\n",
        "    x = tf.cond(tf.reduce_mean(x) > 0.5, lambda: x * 2.0, lambda: x)\n",
    )

    def verdict(fixes: tuple[str, ...]) -> dict:
        request = Request("spread", SHAPE_PRINT, rewrite, "spread.py", options=FAST, fixes=fixes)
        return verify(request)

    result = verdict(("TFR101 line 7",))
    assert result["verdict"] == "equivalent", result
    assert "the rewrite prints as the original does traced" in _warnings(result)
    assert verdict(("TFR101 line 7", "TFR103 line 6"))["verdict"] == "mismatch"
    assert verdict(())["verdict"] == "mismatch"  # fixes unknown: two files compared


SCALES = """\
import tensorflow as tf


@tf.function
def scales(d_outputs):
    loss = 0.0
    for k in range(len(d_outputs)):
        loss += tf.reduce_mean(d_outputs[k])
    return loss
"""


def test_a_need_for_autograph_the_original_had_is_a_warning_unless_a_fix_removed_one() -> None:
    """`len()` of a tensor argument runs only through AutoGraph, in the
    original as in a rewrite that moved its decorator away: the rewrite
    needs AutoGraph as the original did. A rewrite whose fixes claim to
    remove such a need (a tensor `if`), or whose fixes are unknown, must
    run without it."""
    rewrite = SCALES.replace("@tf.function\n", "")

    def verdict(fixes: tuple[str, ...]) -> dict:
        return verify(Request("scales", SCALES, rewrite, "scales.py", options=FAST, fixes=fixes))

    result = verdict(("TFR301 line 4",))
    assert result["verdict"] == "equivalent", result
    assert "without AutoGraph, the rewrite raises TypeError" in _warnings(result)
    assert verdict(("TFR301 line 4", "TFR101 line 7"))["verdict"] == "mismatch"
    assert verdict(())["verdict"] == "mismatch"
