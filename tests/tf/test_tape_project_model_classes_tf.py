"""TFR304 on a model of a Keras class from another module (`TextNet` in
`model/net.py`, whose `call` takes no `training`): the original loop, run
eagerly, never drops a unit; the fixed one, `sen_cnn(x, training=True)`,
does, since Keras hands `training` to the `Dropout` the class holds. One
SGD step from the same weights shows it: the original moves every row of
the kernel alike, the fix leaves the dropped inputs' rows where they were
and moves the kept ones by the gradient of the loss with dropout."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf
from test_tape_project_model_classes import NET
from test_tape_project_model_classes import TRAIN as SOURCE_TRAIN

from tfrewrite.pipeline.engine import InputFile, RunOptions, run

from .equivalence import load_file_module

pytestmark = pytest.mark.tensorflow

LEARNING_RATE = 0.1
FEATURES = 8

# The loop of the source test, with plain SGD: one step is worked out by hand.
TRAIN = SOURCE_TRAIN.replace("tf.optimizers.Adam(1e-3)", f"tf.optimizers.SGD({LEARNING_RATE})")


def _softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max())
    return e / e.sum()


def _fixed_source(tmp_path: Path) -> str:
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "__init__.py").write_text("")
    (tmp_path / "model" / "net.py").write_text(textwrap.dedent(NET).lstrip())
    (tmp_path / "train.py").write_text(textwrap.dedent(TRAIN).lstrip())
    files = [
        InputFile(str(tmp_path / n)) for n in ("model/__init__.py", "model/net.py", "train.py")
    ]
    options = RunOptions(rule_codes=("TFR304",), root=str(tmp_path), fix=True, unsafe_fixes=True)
    [fixed] = [r.fixed_source for r in run(files, options, jobs=1).files if r.fixed_source]
    assert "sen_cnn(x, training=True)" in fixed
    return fixed


def _one_step(module, kernel: np.ndarray, bias: np.ndarray, x, y) -> np.ndarray:
    """Run the module's `main` on one batch from the given weights; the
    kernel's update."""
    built = []
    real = module.TextNet

    def build(**kwargs):
        net = real(**kwargs)
        net(x)
        net._fc.set_weights([kernel, bias])
        built.append(net)
        return net

    module.TextNet = build
    module.main([(x, y)])
    return built[0]._fc.kernel.numpy() - kernel


def test_the_fix_runs_the_dropout_of_a_class_from_another_module(tmp_path: Path) -> None:
    fixed_source = _fixed_source(tmp_path)
    sys.path.insert(0, str(tmp_path))
    try:
        original = load_file_module(TRAIN, tmp_path, "project_class_train")
        rewritten = load_file_module(fixed_source, tmp_path, "project_class_train_fixed")
        rng = np.random.default_rng(0)
        kernel = rng.normal(0.0, 0.5, (FEATURES, 2)).astype(np.float32)
        bias = np.zeros(2, np.float32)
        x = tf.ones([1, FEATURES])
        y = tf.constant([1])
        onehot = np.array([0.0, 1.0])
        tf.keras.utils.set_random_seed(3)

        moved = _one_step(original, kernel, bias, x, y)  # eagerly, as written
        g = _softmax(kernel.sum(axis=0) + bias) - onehot
        np.testing.assert_allclose(moved, np.tile(-LEARNING_RATE * g, (FEATURES, 1)), rtol=1e-5)

        moved = _one_step(rewritten, kernel, bias, x, y)  # with `training=True`
        kept = np.any(moved != 0.0, axis=1)
        assert 0 < kept.sum() < FEATURES  # some inputs dropped, some kept
        # Dropout(0.5) scales what it keeps by 2.
        g = _softmax(2.0 * kernel[kept].sum(axis=0) + bias) - onehot
        expected = np.where(kept[:, None], -LEARNING_RATE * 2.0 * g, 0.0)
        np.testing.assert_allclose(moved, expected, rtol=1e-5, atol=1e-7)
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("model.net", None)
        sys.modules.pop("model", None)
