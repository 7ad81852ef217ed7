"""TFR108 and a `for` over `tf.range` of a tensor in a layer's `call`:
Keras 3 runs `call` without AutoGraph wherever it is traced, in `fit` and
in the project's own `tf.function` step alike (measured in
`tests/tf/test_layer_loops_tf.py`), so the loop is reported in every
project that traces the layer, and in a layer library nothing runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.layer_loops import KERAS_FIT, LAYERS, OWN_STEP
from tests.projects import check_project, found_lines


@pytest.mark.parametrize("script", [OWN_STEP, KERAS_FIT, None], ids=["own-step", "fit", "none"])
def test_the_loop_is_reported_wherever_the_layer_is_traced(tmp_path: Path, script) -> None:
    files = {"layers.py": LAYERS} | ({"train.py": script} if script else {})
    found = check_project(tmp_path, files, ("TFR108",))
    assert found_lines(found) == [("layers.py", 11)]
    assert "in a `tf.function` that calls the layer" in found[0].message
