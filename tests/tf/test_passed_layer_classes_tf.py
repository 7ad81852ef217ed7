"""Measured for `tests/test_passed_layer_classes.py`: a head built from a
handed backbone class and appended convolutions computes the same with
`training=True` as without (no TFR304 finding); with the dropout backbone,
or an appended `Dropout`, it does not."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from tests.passed_layer_classes import project

from .equivalence import load_path

pytestmark = pytest.mark.tensorflow


@pytest.mark.parametrize(
    ("backbone", "out", "changes"),
    [
        ("Plain", 'Conv2D(n, 1, padding="same")', False),
        ("Noisy", 'Conv2D(n, 1, padding="same")', True),
        ("Plain", "Dropout(0.5)", True),
    ],
)
def test_training_changes_only_heads_with_dropout(
    tmp_path: Path, backbone: str, out: str, changes: bool
) -> None:
    import tensorflow as tf

    for name, source in project(backbone, out).items():
        (tmp_path / name).write_text(source)
    sys.path.insert(0, str(tmp_path))
    try:
        for name in ("backbones", "head"):
            sys.modules.pop(name, None)
        backbones = load_path(tmp_path / "backbones.py", "backbones")
        head_module = load_path(tmp_path / "head.py", "head")
    finally:
        sys.path.remove(str(tmp_path))
    head = head_module.Head(3, getattr(backbones, backbone))
    x = tf.constant(np.random.default_rng(0).normal(size=(2, 6, 6, 3)), tf.float32)
    inference = [t.numpy() for t in head(x)]
    training = [t.numpy() for t in head(x, training=True)]
    same = all(np.allclose(a, b) for a, b in zip(inference, training, strict=True))
    assert same is not changes
