"""A function a script hands a dataset class as `map_fn=` runs in the
dataset's map: its NumPy draw is made once, when the map is traced, so every
element gets the same noise, where calling it eagerly draws anew per
element. After `fix --unsafe-fixes` (TFR102, which now sees the map), the
map draws anew per element too."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf
from tests.test_handed_parameters import DATASET, SCRIPT

from tfrewrite.pipeline.engine import InputFile, RunOptions, run

pytestmark = pytest.mark.tensorflow


def _noise(train) -> tuple[np.ndarray, np.ndarray]:
    """(the noise the map adds to each element, the noise of eager calls):
    the map is the one `ClipSet.create` builds around what `main` hands it."""
    clips = tf.zeros([6, 3])

    class InMemory(train.ClipSet):
        def create(self, batch_size=4, map_fn=None):
            return tf.data.Dataset.from_tensor_slices(clips).map(map_fn, tf.data.AUTOTUNE)

    train.ClipSet = InMemory
    noisy, _ = train.main([])
    traced = np.stack([element.numpy()[0] for element in noisy])
    eager = np.stack([train.jitter(c, 0.1).numpy()[0] for c in clips])
    return traced, eager


def _load(root: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.syspath_prepend(str(root))
    for module in ("clips", "train"):
        sys.modules.pop(module, None)
    import train

    return train


def test_the_fix_makes_the_map_draw_per_element(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "clips.py").write_text(textwrap.dedent(DATASET))
    (tmp_path / "train.py").write_text(textwrap.dedent(SCRIPT))
    traced, eager = _noise(_load(tmp_path, monkeypatch))
    assert len(set(traced.tolist())) == 1  # frozen at trace time
    assert len(set(eager.tolist())) == len(eager)  # eagerly: anew per element

    files = [InputFile(str(tmp_path / "clips.py")), InputFile(str(tmp_path / "train.py"))]
    options = RunOptions(rule_codes=("TFR102",), root=str(tmp_path), fix=True, unsafe_fixes=True)
    for result in run(files, options, jobs=1).files:  # `fix` works in memory
        if result.fixed_source is not None:
            Path(result.path).write_text(result.fixed_source)
    assert "np.random.normal" not in (tmp_path / "train.py").read_text()
    traced, eager = _noise(_load(tmp_path, monkeypatch))
    assert len(set(traced.tolist())) == len(traced)
    assert len(set(eager.tolist())) == len(eager)
