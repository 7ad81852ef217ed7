"""The table of Keras' public names (`facts/keras_public_names.py`),
read again from the installed Keras: the committed table must be what
`scripts/keras_public_names.py` gives now, when TensorFlow and Keras are
the versions it was generated from; and every name it lists for a module
is one `from keras.<module> import *` binds."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import keras
import pytest
import tensorflow as tf

from tfrewrite.facts import keras_public_names

from .equivalence import load_path

pytestmark = pytest.mark.tensorflow

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "keras_public_names.py"


def table_script() -> ModuleType:
    return load_path(SCRIPT, "keras_public_names_script")


def test_the_committed_table_is_what_the_installed_keras_gives() -> None:
    recorded = (keras_public_names.TENSORFLOW_VERSION, keras_public_names.KERAS_VERSION)
    installed = (tf.__version__, keras.__version__)
    if installed != recorded:
        pytest.skip(f"the table was generated from {recorded}; {installed} is installed")
    script = table_script()
    assert script.render(*script.public_names()) == Path(script.TABLE).read_text(), (
        "regenerate: python scripts/keras_public_names.py"
    )


@pytest.mark.parametrize("module", sorted(keras_public_names.PUBLIC_NAMES))
def test_a_star_import_binds_every_listed_name(module: str) -> None:
    bound: dict[str, object] = {}
    exec(f"from keras.{module} import *", bound)  # noqa: S102 - the fact under test
    assert keras_public_names.PUBLIC_NAMES[module] <= set(bound)
