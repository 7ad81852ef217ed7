"""The table of Keras layers that ignore `training`, measured again on the
installed Keras (when it is the version the table was generated from), and
the measurement itself on layers whose answer is known: a global pooling
alias (`GlobalAvgPool2D`) ignores the flag, `Dropout` and
`BatchNormalization` read it."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import keras
import pytest
import tensorflow as tf

from tfrewrite.facts import keras_training_layers

from .equivalence import load_path

pytestmark = pytest.mark.tensorflow

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"


def _script(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(SCRIPTS))  # it imports its sibling's probes
    return load_path(SCRIPTS / "keras_training_layers.py", "keras_training_layers_script")


def test_the_measurement_tells_known_layers_apart(monkeypatch: pytest.MonkeyPatch) -> None:
    script = _script(monkeypatch)
    layers = keras.layers
    assert script.ignores_training(layers.GlobalAvgPool2D, tf, layers) is True
    assert script.ignores_training(layers.Dense, tf, layers) is True
    assert script.ignores_training(layers.BatchNormalization, tf, layers) is False
    assert script.ignores_training(layers.Dropout, tf, layers) is None  # it draws: undecided


def test_the_committed_table_is_what_the_installed_keras_gives(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    recorded = (keras_training_layers.TENSORFLOW_VERSION, keras_training_layers.KERAS_VERSION)
    installed = (tf.__version__, keras.__version__)
    if installed != recorded:
        pytest.skip(f"the table was generated from TensorFlow {recorded[0]} (Keras {recorded[1]})")
    script = _script(monkeypatch)
    names = script.training_insensitive_layers()
    assert names == keras_training_layers.TRAINING_INSENSITIVE_LAYERS, (
        "regenerate: python scripts/keras_training_layers.py"
    )
    rendered = script.render(*installed, names)
    assert rendered == Path(keras_training_layers.__file__).read_text()
