"""Which Keras a module is written for, read from its source without
TensorFlow, and where verify runs it: Keras 2 code on `tf_keras` (a worker
with TF_USE_LEGACY_KERAS=1), Keras 3 code never there, and "needs package"
when `tf_keras` is missing."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tfrewrite.config import ConfigError
from tfrewrite.verify import legacy_keras
from tfrewrite.verify.keras_flavour import flavour_of
from tfrewrite.verify.settings import parse_verify_settings


def _flavour(source: str) -> tuple[int | None, list[str]]:
    found = flavour_of(textwrap.dedent(source))
    return found.keras, [e.spelling for e in found.evidence]


@pytest.mark.parametrize(
    ("source", "spelling"),
    [
        (
            "import tensorflow as tf\nopt = tf.keras.optimizers.legacy.Adam(0.1)\n",
            "tf.keras.optimizers.legacy",
        ),
        ("from tensorflow.keras.optimizers.legacy import Adam\n", "tf.keras.optimizers.legacy"),
        (
            "from tensorflow.keras.layers.experimental import preprocessing\n",
            "tf.keras.layers.experimental",
        ),
        (
            "from tensorflow.keras import layers\n"
            "r = layers.experimental.preprocessing.Rescaling(1)\n",
            "tf.keras.layers.experimental",
        ),
        (
            "from tensorflow.keras import backend as K\nK.set_learning_phase(1)\n",
            "tf.keras.backend.set_learning_phase",
        ),
        ("import tf_keras as keras\nm = keras.Sequential()\n", "tf_keras"),
        ("from keras.optimizers.legacy import SGD\n", "keras.optimizers.legacy"),
        ("import tensorflow as tf\nopt = tf.keras.optimizers.Adam(lr=0.1)\n", "Adam(lr=...)"),
        (
            "import tensorflow as tf\nn = tf.keras.layers.BatchNormalization(fused=True)\n",
            "BatchNormalization(fused=...)",
        ),
        (
            "import tensorflow as tf\nmodel = tf.keras.Sequential()\n"
            "model.compile('sgd', 'mse', experimental_run_tf_function=False)\n",
            ".compile(experimental_run_tf_function=...)",
        ),
        (
            "import tensorflow as tf\nmodel = tf.keras.Sequential()\n"
            "model.fit_generator(batches)\n",
            ".fit_generator",
        ),
        (
            "from tensorflow.keras.losses import Loss, Reduction\n\n"
            "class Nll(Loss):\n"
            "    def __init__(self):\n"
            "        super().__init__(reduction=Reduction.AUTO, name='nll')\n",
            "reduction=Reduction.AUTO",
        ),
    ],
)
def test_keras_two_spellings(source: str, spelling: str) -> None:
    keras, spellings = _flavour(source)
    assert keras == 2 and spelling in spellings, spellings


def test_a_method_counts_where_its_receiver_is_the_keras_object_that_lost_it() -> None:
    """`.lr` of an optimizer, `reset_states` of a metric: Keras 2; the same
    names on anything else (a namespace of flags, a recurrent layer, which
    keeps `reset_states` in Keras 3) are no evidence."""
    assert _flavour(
        """
        import tensorflow as tf

        class Decay(tf.keras.callbacks.Callback):
            def on_epoch_end(self, epoch, logs=None):
                rate = tf.keras.backend.get_value(self.model.optimizer.lr)
        """
    ) == (2, ["self.model.optimizer.lr"])
    assert _flavour(
        """
        import tensorflow as tf

        train_loss = tf.keras.metrics.Mean(name="train_loss")
        train_loss.reset_states()
        """
    ) == (2, ["train_loss.reset_states"])
    assert _flavour(
        """
        import tensorflow as tf

        def rate(args, layer=tf.keras.layers.LSTM(4, stateful=True)):
            lstm = tf.keras.layers.LSTM(4, stateful=True)
            lstm.reset_states()
            return args.lr
        """
    ) == (None, [])


def test_add_weight_says_which_keras_by_its_first_argument() -> None:
    layer = """
        import tensorflow as tf

        class Scale(tf.keras.layers.Layer):
            def build(self, shape):
                self.w = self.add_weight({})
        """
    assert _flavour(layer.format("'w', shape=(1,)")) == (2, ["self.add_weight('w', ...)"])
    assert _flavour(layer.format("(1,), 'zeros'")) == (3, ["self.add_weight(<shape>, ...)"])
    assert _flavour(layer.format("name='w', shape=(1,)")) == (None, [])


@pytest.mark.parametrize(
    "source",
    [
        "import keras\nx = keras.ops.add(1, 2)\n",
        "from keras import ops\n",
        "import tensorflow as tf\nx = tf.keras.ops.add(1, 2)\n",
        "import keras\nseed = keras.random.SeedGenerator(1)\n",
        "import keras\nclass Data(keras.utils.PyDataset):\n    pass\n",
    ],
)
def test_keras_three_spellings(source: str) -> None:
    assert _flavour(source)[0] == 3


def test_keras_three_evidence_wins_over_keras_two() -> None:
    """Keras 3 code never runs on Keras 2, even beside a Keras 2 spelling."""
    keras, spellings = _flavour(
        "import keras\nimport tensorflow as tf\n"
        "x = keras.ops.add(1, 2)\nopt = tf.keras.optimizers.legacy.SGD()\n"
    )
    assert keras == 3 and "tf.keras.optimizers.legacy" in spellings


@pytest.mark.parametrize(
    "source",
    [
        # Either Keras runs these (measured on Keras 3.15 and tf_keras 2.21).
        "import tensorflow as tf\nm = tf.keras.Sequential([tf.keras.layers.Dense(1)])\n",
        "import tensorflow as tf\nd = tf.compat.v1.keras.layers.Dense(2)\n",
        "from tensorflow.python.keras.engine import base_layer\n",
        "import tensorflow as tf\nv = tf.keras.backend.get_value(tf.Variable(1.0))\n",
        "import tensorflow as tf\nr = tf.keras.losses.Reduction.NONE\n",
        # Keras-only method names in a module that uses no Keras.
        "def train(model, batches):\n    model.fit_generator(batches)\n",
        "this is not python",
    ],
)
def test_code_either_keras_runs_is_neutral(source: str) -> None:
    assert _flavour(source)[0] is None


def test_the_reason_names_the_first_spelling_with_its_line() -> None:
    found = flavour_of("import tensorflow as tf\n\nopt = tf.keras.optimizers.legacy.Adam(0.1)\n")
    assert found.why() == (
        "the module uses tf.keras.optimizers.legacy (line 3: Keras 3's `optimizers.legacy` "
        "optimizers raise ImportError when built)"
    )


# -- where a request runs -------------------------------------------------------------

KERAS_TWO = "import tensorflow as tf\nopt = tf.keras.optimizers.legacy.Adam(0.1)\n"
KERAS_THREE = "import keras\nx = keras.ops.add(1, 2)\n"
NEUTRAL = "import tensorflow as tf\n"
TF_221 = {"tensorflow": "2.21.0", "keras": 3, "keras_three": True, "tf_keras": True}


def _payload(source: str, keras: object = None) -> dict:
    options = {} if keras is None else {"keras": keras}
    return {"qualname": "loss", "original_source": source, "options": options}


def test_keras_two_code_runs_on_tf_keras_and_says_so() -> None:
    placement = legacy_keras.place(_payload(KERAS_TWO), TF_221)
    assert placement.legacy is True and placement.result is None
    result = placement.annotate({"verdict": "equivalent", "warnings": ["w"]})
    assert result["warnings"][0] == "w"
    assert result["warnings"][1].startswith(
        "ran on Keras 2 (tf_keras): the module uses tf.keras.optimizers.legacy (line 2"
    )
    assert result["keras"]["version"] == 2


def test_keras_three_code_never_runs_under_the_flag(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(legacy_keras.FLAG, "1")  # exported by the user
    assert legacy_keras.place(_payload(KERAS_THREE), TF_221).legacy is False
    assert legacy_keras.place(_payload(NEUTRAL), TF_221).legacy is True  # as the user asked
    monkeypatch.delenv(legacy_keras.FLAG)
    placement = legacy_keras.place(_payload(NEUTRAL), TF_221)
    assert placement.legacy is False and placement.annotate({"x": 1}) == {"x": 1}


def test_keras_two_code_without_tf_keras_needs_the_package() -> None:
    placement = legacy_keras.place(_payload(KERAS_TWO), {**TF_221, "tf_keras": False})
    assert placement.result is not None
    assert placement.result["verdict"] == "needs package"
    text = placement.result["needs_package"]
    assert text.startswith("needs package `tf_keras`, Keras 2: the module uses ")
    assert "tf.keras.optimizers.legacy" in text and "pip install 'tf-keras==2.21.*'" in text


def test_keras_two_code_on_tensorflow_before_keras_three_runs_as_it_is() -> None:
    old = {"tensorflow": "2.15.1", "keras": 2, "keras_three": False, "tf_keras": False}
    placement = legacy_keras.place(_payload(KERAS_TWO), old)
    assert placement.result is None and placement.note is None


def test_the_project_setting_overrides_the_source() -> None:
    forced_two = legacy_keras.place(_payload(NEUTRAL, keras=2), TF_221)
    assert forced_two.legacy is True
    assert "`[tool.tfrewrite.verify] keras = 2`" in forced_two.annotate({})["warnings"][0]
    assert legacy_keras.place(_payload(KERAS_TWO, keras=3), TF_221).legacy is False


def test_the_keras_setting_is_read_and_checked() -> None:
    assert parse_verify_settings({}).keras == "auto"
    assert "keras" not in parse_verify_settings({}).worker_options()
    assert parse_verify_settings({"keras": 2}).worker_options()["keras"] == 2
    assert parse_verify_settings({"keras": "auto"}).keras == "auto"
    for bad in ("2", 4, True, "legacy"):
        with pytest.raises(ConfigError, match='keras` must be "auto", 2 or 3'):
            parse_verify_settings({"keras": bad})


def test_a_worker_environment_asks_for_one_keras() -> None:
    env = {legacy_keras.FLAG: "1", "PATH": "/bin"}
    legacy_keras.set_environment(env, False)
    assert env == {"PATH": "/bin"}
    legacy_keras.set_environment(env, True)
    assert legacy_keras.flag_set(env)
    legacy_keras.set_environment(env, None)
    assert legacy_keras.flag_set(env)


def test_a_project_module_it_imports_counts_and_is_named(tmp_path: Path) -> None:
    """`from model import build` of a train step whose `model.py` builds a
    Keras 2 layer: the step runs on Keras 2, and the reason names the file."""
    (tmp_path / "model.py").write_text(
        "import tensorflow as tf\n\n"
        "def build():\n    return tf.keras.layers.experimental.preprocessing.Rescaling(1.0)\n"
    )
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "scale.py").write_text("from tensorflow.keras.optimizers.legacy import SGD\n")
    step = "import tensorflow as tf\nfrom model import build\n"
    payload = {
        **_payload(step),
        "path": str(tmp_path / "train.py"),
        "sys_path": [str(tmp_path)],
    }
    placement = legacy_keras.place(payload, TF_221)
    assert placement.legacy is True
    assert placement.annotate({})["warnings"] == [
        "ran on Keras 2 (tf_keras): a module it imports uses tf.keras.layers.experimental "
        "(model.py, line 4: Keras 3 has no `layers.experimental` (its preprocessing layers "
        "moved to `layers`))"
    ]
    relative = {
        **_payload("from .scale import SGD\n"),
        "path": str(package / "loss.py"),
        "sys_path": [str(tmp_path)],
    }
    assert legacy_keras.place(relative, TF_221).legacy is True
    # Installed packages and modules the project lacks are not read.
    outside = {**payload, "original_source": "import numpy\nimport nowhere\n"}
    assert (
        legacy_keras.project_files(outside["original_source"], outside["path"], [str(tmp_path)])
        == []
    )
