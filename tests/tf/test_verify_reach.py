"""Verify reaches rewrites in real project shapes: a file inside its package,
a package the workers lack, inputs that must be searched (integer labels,
images, argmax comparisons), data a script downloads at import time, and a
print check that traces afresh."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest
from tests.test_verify_fix_owners import LAYER_LOOP as CROSS_LAYER

from tfrewrite.verify import datasets, inputs, project_imports
from tfrewrite.verify.checks import CHECK_PRINTS, CHECK_TRACED, Options, Request, verify
from tfrewrite.verify.run import verify_targets
from tfrewrite.verify.settings import parse_verify_settings
from tfrewrite.verify.targets import pair_targets

pytestmark = pytest.mark.tensorflow

FAST = Options(samples=120, search=48, xla=False)


def _verify(before: str, after: str | None, qualname: str, path: str = "m.py") -> dict:
    return verify(
        Request(
            qualname=qualname,
            original_source=textwrap.dedent(before),
            rewrite_source=textwrap.dedent(after) if after is not None else None,
            path=path,
            options=FAST,
        )
    )


def _warnings(result: dict) -> str:
    return "\n".join(result.get("warnings") or [])


# -- a file inside its package ------------------------------------------------------------

LOSSES = """\
import tensorflow as tf

from pkg.util import clip_probabilities
from .scale import SCALE


@tf.function
def weighted_loss(y_true, y_pred):
    y_pred = clip_probabilities(y_pred)
    return tf.reduce_mean(tf.square(y_true - y_pred)) * SCALE
"""


def test_a_file_inside_its_package_imports_its_package(tmp_path: Path) -> None:
    package = tmp_path / "project" / "pkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("from pkg import losses\n")
    (package / "util.py").write_text(
        "import tensorflow as tf\n\ndef clip_probabilities(p):\n"
        "    return tf.clip_by_value(p, 1e-7, 1.0)\n"
    )
    (package / "scale.py").write_text("SCALE = 2.0\n")
    (package / "losses.py").write_text(LOSSES)
    path = package / "losses.py"
    assert project_imports.package_of(str(path)) == ("pkg", str(tmp_path / "project"))

    rewrite = LOSSES.replace("tf.square(y_true - y_pred)", "tf.square(y_pred - y_true)")
    targets = pair_targets(str(path), "losses", LOSSES, rewrite, parse_verify_settings({}))
    [result] = verify_targets(targets, parse_verify_settings({"samples": 60}), tmp_path, jobs=1)
    assert result["verdict"] == "equivalent", result


def test_a_missing_package_is_named_not_an_error() -> None:
    result = _verify(
        """
        import tensorflow as tf
        import tfrewrite_no_such_package as extra

        def loss(y_true, y_pred):
            return extra.mean(y_true - y_pred)
        """,
        """
        import tensorflow as tf
        import tfrewrite_no_such_package as extra

        def loss(y_true, y_pred):
            return extra.mean(y_pred - y_true)
        """,
        "loss",
    )
    assert result["verdict"] == "needs package"
    assert "needs package `tfrewrite_no_such_package`" in result["needs_package"]
    assert "pip install tfrewrite-no-such-package" in result["needs_package"]


def test_an_op_library_the_project_never_built_is_named_not_an_error() -> None:
    """`tf.load_op_library` of the project's custom ops, not compiled here:
    an environment to prepare, like a missing package."""
    source = """
        import tensorflow as tf

        grouping = tf.load_op_library("./tf_ops/tfrewrite_grouping_so.so")

        def group(points):
            return grouping.query_ball_point(points){}
        """
    result = _verify(source.format(""), source.format(" * 1.0"), "group")
    assert result["verdict"] == "needs package", result
    assert "tfrewrite_grouping_so.so" in result["needs_package"]
    assert "a TensorFlow op library the project compiles" in result["needs_package"]


def test_a_class_without_defaults_is_not_proven_with_the_factory_to_write() -> None:
    source = """
        import tensorflow as tf

        class Critic:
            def __init__(self, env):
                self.env = env

            def compute_loss(self, y_true, y_pred):
                return tf.reduce_mean(y_true - y_pred)
        """
    result = _verify(
        source, source.replace("y_true - y_pred", "-(y_pred - y_true)"), "Critic.compute_loss"
    )
    assert result["verdict"] == "not proven"
    assert "cannot construct `Critic()`" in _warnings(result) and "factory" in _warnings(result)


def test_a_layer_call_runs_on_the_weights_its_build_makes() -> None:
    """Verify calls `Cross.call` itself: the layer is built first from the
    input's shape (as `layer(x)` would), so the weights `build` makes exist."""
    rewrite = CROSS_LAYER.replace(
        "print(x)", "tf.print(x, output_stream=sys.stdout, summarize=-1)"
    ).replace("import tensorflow as tf", "import sys\n\n    import tensorflow as tf")
    result = _verify(CROSS_LAYER, rewrite, "Cross.call")
    assert result["verdict"] == "equivalent", result
    broken = rewrite.replace("x = x + inputs", "x = x - inputs")
    assert _verify(CROSS_LAYER, broken, "Cross.call")["verdict"] == "mismatch"


# -- input signatures found by search -----------------------------------------------------


def test_sparse_labels_are_found_by_search() -> None:
    before = """
        import sys
        import tensorflow as tf

        def compute_loss(logits, labels):
            print(labels)
            return tf.reduce_mean(
                tf.nn.sparse_softmax_cross_entropy_with_logits(logits=logits, labels=labels))
        """
    after = before.replace(
        "print(labels)", "tf.print(labels, summarize=-1, output_stream=sys.stdout)"
    )
    result = _verify(before, after, "compute_loss")
    assert result["verdict"] == "equivalent", result
    assert "inputs found by search" in _warnings(result)
    assert "labels = int32[8]" in _warnings(result)


def test_argmax_comparison_gets_int64_labels() -> None:
    before = """
        import tensorflow as tf

        def accuracy(logits, labels):
            predictions = tf.argmax(logits, axis=1)
            hits = tf.cast(tf.equal(predictions, labels), tf.float32)
            if tf.reduce_mean(hits) > 2.0:
                return tf.reduce_mean(hits) * 0.0
            return tf.reduce_mean(hits)
        """
    result = _verify(before, before.replace("* 0.0", "* 0.0 + 0.0"), "accuracy")
    assert "int64" in _warnings(result)
    assert not result.get("error") and result["checks"], result


def test_image_helpers_are_followed_to_image_inputs() -> None:
    before = """
        import tensorflow as tf

        def resize(image, size):
            return tf.image.resize(image, [size, size])

        def random_jitter(input_image, real_image):
            input_image = resize(input_image, 20)
            real_image = resize(real_image, 20)
            stacked = tf.stack([input_image, real_image], axis=0)
            cropped = tf.image.random_crop(stacked, size=[2, 16, 16, 3])
            return cropped[0], cropped[1]
        """
    result = _verify(before, before.replace("axis=0", "axis=0 "), "random_jitter")
    assert not result.get("error") and not result.get("needs_package"), result
    assert "unbatched image" in _warnings(result), _warnings(result)
    assert result["verdict"] == "equivalent", result


def test_nothing_fits_says_which_inputs_to_configure() -> None:
    before = """
        import tensorflow as tf

        def loss(y_true, y_pred):
            tf.debugging.assert_equal(tf.shape(y_true)[0], 3)
            return y_true - y_pred
        """
    result = _verify(before, before.replace("y_true - y_pred", "-(y_pred - y_true)"), "loss")
    assert result["verdict"] == "not proven"
    assert 'inputs."loss" = {y_true = "float32[8,4] in [0,1]"' in _warnings(result)


# -- data a script downloads at import time ----------------------------------------------


def test_keras_dataset_loaders_return_generated_arrays() -> None:
    import tensorflow as tf

    datasets.install()
    (x, y), (xt, yt) = tf.keras.datasets.mnist.load_data()
    assert x.shape == (60000, 28, 28) and x.dtype == np.uint8 and y.shape == (60000,)
    assert xt.shape == (10000, 28, 28) and int(y.max()) <= 9
    (x, y), _ = tf.keras.datasets.cifar10.load_data()
    assert x.shape == (50000, 32, 32, 3) and y.shape == (50000, 1)
    with pytest.raises(datasets.DownloadRefused, match="download it once to `"):
        tf.keras.utils.get_file("data.npz", "https://example.invalid/data.npz")


def test_a_file_in_keras_cache_is_read_not_refused(tmp_path: Path) -> None:
    """ImageNet weights the user downloaded once are used, as Keras would."""
    import tensorflow as tf

    datasets.install()
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "weights.h5").write_bytes(b"weights")
    found = tf.keras.utils.get_file(
        "weights.h5",
        "https://example.invalid/weights.h5",
        cache_subdir="models",
        cache_dir=str(tmp_path),
    )
    assert Path(found).read_bytes() == b"weights"
    with pytest.raises(datasets.DownloadRefused, match=str(tmp_path / "models" / "other.h5")):
        tf.keras.utils.get_file(
            "other.h5",
            "https://example.invalid/other.h5",
            cache_subdir="models",
            cache_dir=str(tmp_path),
        )


KERAS_TWO_LOADERS = """
import os
os.environ["TF_USE_LEGACY_KERAS"] = "1"
from tfrewrite.verify import datasets
datasets.install()
from tensorflow.keras import datasets as keras_datasets, utils
(x, y), _ = keras_datasets.fashion_mnist.load_data()
assert x.shape == (60000, 28, 28) and y.shape == (60000,), x.shape
try:
    utils.get_file("data.npz", "https://example.invalid/data.npz")
except datasets.DownloadRefused:
    print("refused")
"""


def test_keras_two_dataset_loaders_are_generated_too() -> None:
    """Under Keras 2 (`tf_keras` with TF_USE_LEGACY_KERAS=1, or TensorFlow
    before 2.16) `tf.keras.datasets.fashion_mnist` is a module of its own."""
    import importlib.util
    import subprocess
    import sys

    if importlib.util.find_spec("tf_keras") is None:
        pytest.skip("needs tf_keras")
    done = subprocess.run(
        [sys.executable, "-c", KERAS_TWO_LOADERS], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0 and "refused" in done.stdout, done.stderr[-2000:]


def test_a_loss_that_reads_data_loaded_at_import_verifies_without_download() -> None:
    before = """
        import sys
        import numpy as np
        import tensorflow as tf

        (x_train, y_train), _ = tf.keras.datasets.mnist.load_data()
        PIXEL_MEAN = float(x_train.mean()) / 255.0

        def centred_loss(y_true, y_pred):
            print(PIXEL_MEAN)
            return tf.reduce_mean(tf.square(y_true - y_pred + PIXEL_MEAN))
        """
    after = before.replace("print(PIXEL_MEAN)", "tf.print(PIXEL_MEAN, output_stream=sys.stdout)")
    result = _verify(before, after, "centred_loss")
    assert result["verdict"] == "equivalent", result


# -- pretrained applications whose weights are not downloaded ---------------------------


def test_imagenet_weights_not_cached_get_the_same_seeded_stand_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tensorflow as tf

    from tfrewrite.verify import pretrained

    monkeypatch.setenv("KERAS_HOME", str(tmp_path))  # an empty cache
    datasets.install()
    pretrained.install()
    pretrained.STOOD_IN.clear()
    from tensorflow.keras.applications import VGG19

    first = tf.keras.applications.vgg19.VGG19(
        input_shape=[32, 32, 3], weights="imagenet", include_top=False
    )
    tf.random.uniform([7])  # draws between the builds change nothing
    second = VGG19(input_shape=[32, 32, 3], weights="imagenet", include_top=False)
    images = tf.random.stateless_uniform([2, 32, 32, 3], seed=[1, 2], maxval=255.0)
    features = first(images)
    assert np.array_equal(features.numpy(), second(images).numpy())
    assert 1e-3 < float(tf.math.reduce_std(features)) < 1e4  # neither vanished nor exploded
    assert pretrained.STOOD_IN == ["VGG19", "VGG19"]
    assert "`VGG19`" in (pretrained.describe() or "")
    pretrained.STOOD_IN.clear()
    VGG19(input_shape=[32, 32, 3], weights=None, include_top=False)
    assert pretrained.STOOD_IN == []  # only ImageNet weights are stood in


def test_a_perceptual_loss_verifies_on_stand_in_weights(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KERAS_HOME", str(tmp_path))
    before = """
        import tensorflow as tf

        features = tf.keras.applications.VGG19(
            input_shape=(32, 32, 3), weights="imagenet", include_top=False)
        features.trainable = False

        def perceptual_loss(y_true, y_pred):
            if tf.reduce_mean(y_true) > 0.5:
                return tf.reduce_mean(tf.abs(features(y_true) - features(y_pred)))
            return tf.reduce_mean(tf.square(features(y_true) - features(y_pred)))
        """
    after = """
        import tensorflow as tf

        features = tf.keras.applications.VGG19(
            input_shape=(32, 32, 3), weights="imagenet", include_top=False)
        features.trainable = False

        def perceptual_loss(y_true, y_pred):
            return tf.cond(
                tf.reduce_mean(y_true) > 0.5,
                lambda: tf.reduce_mean(tf.abs(features(y_true) - features(y_pred))),
                lambda: tf.reduce_mean(tf.square(features(y_true) - features(y_pred))),
            )
        """
    image = inputs.parse_spec("float32[2,32,32,3] in [0,1]").to_json()
    result = verify(
        Request(
            qualname="perceptual_loss",
            original_source=textwrap.dedent(before),
            rewrite_source=textwrap.dedent(after),
            path="m.py",
            options=FAST,
            specs={name: image for name in ("y_true", "y_pred")},
        )
    )
    assert result["verdict"] == "equivalent", result
    assert "seeded stand-in weights" in _warnings(result)


# -- prints -------------------------------------------------------------------------------


def test_print_check_traces_a_helper_afresh() -> None:
    """The rewrite calls a module-level tf.function that prints at trace time
    and on every call; the checks before the print check traced it already."""
    before = """
        import sys
        import tensorflow as tf

        @tf.function
        def report(x):
            tf.print("max", tf.reduce_max(x))
            return x

        def loss(y_true, y_pred):
            print(tf.reduce_sum(y_true))
            return tf.reduce_mean(report(y_pred) - y_true)
        """
    after = before.replace(
        "print(tf.reduce_sum(y_true))", "tf.print(tf.reduce_sum(y_true), output_stream=sys.stdout)"
    )
    result = _verify(before, after, "loss")
    checks = {c["name"]: c for c in result["checks"]}
    assert checks[CHECK_TRACED]["ok"] and checks[CHECK_PRINTS]["ok"], result
    assert result["verdict"] == "equivalent"
