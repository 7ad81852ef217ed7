"""Measured: the margin a driver binds once, before its first call of the
traced step, is what every trace sees (traced equals eager); the
temperature it binds per epoch is frozen at the first trace (what TFR201
reports)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf
from tests.setup_driver import TRAINER

from .equivalence import load_file_module

pytestmark = pytest.mark.tensorflow


def _outputs(source: str, tmp_path: Path, eager: bool) -> list[float]:
    module = load_file_module(source, tmp_path)
    tf.config.run_functions_eagerly(eager)
    try:
        return module.Trainer().train(tf.constant(1.5), 3)
    finally:
        tf.config.run_functions_eagerly(False)


def test_set_up_state_is_seen_and_per_epoch_state_is_frozen(tmp_path: Path) -> None:
    source = TRAINER.replace("{extra}", "")
    eager = _outputs(source, tmp_path, eager=True)
    traced = _outputs(source, tmp_path, eager=False)
    np.testing.assert_allclose(eager, [3.0, 1.5, 1.0])
    np.testing.assert_allclose(traced, [3.0, 3.0, 3.0])  # the first temperature, kept
    # With the temperature fixed, only the set-up margin is read: traced equals eager.
    steady = source.replace("self.temperature = 1.0 + epoch", "self.temperature = 1.0")
    np.testing.assert_allclose(
        _outputs(steady, tmp_path, eager=False), _outputs(steady, tmp_path, eager=True)
    )
