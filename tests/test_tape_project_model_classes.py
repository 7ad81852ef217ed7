"""TFR304's evidence from the project's own Keras classes: an object built
from a class the project defines, in another module or this one, deriving
from Keras' `Layer` or `Model` (through project bases too), is a Keras
model whatever the name it is bound to; and whether `training=True` changes
what it computes is read from that class (its `call`, the layers its
methods build), wherever it lives."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tfrewrite.findings import Applicability, Finding
from tfrewrite.pipeline.engine import InputFile, RunOptions, run


def _d(text: str) -> str:
    return textwrap.dedent(text).lstrip()


NET = """
    import tensorflow as tf


    class TextNet(tf.keras.Model):
        def __init__(self, classes):
            super().__init__()
            self._drop = tf.keras.layers.Dropout(0.5)
            self._fc = tf.keras.layers.Dense(classes)

        def call(self, x):
            return self._fc(self._drop(x))
"""

# The net without its dropout: nothing it computes reads `training`.
DENSE_NET = (
    _d(NET)
    .replace("        self._drop = tf.keras.layers.Dropout(0.5)\n", "")
    .replace("self._fc(self._drop(x))", "self._fc(x)")
)

TRAIN = """
    import tensorflow as tf
    from model.net import TextNet


    def main(ds):
        sen_cnn = TextNet(classes=2)
        opt = tf.optimizers.Adam(1e-3)
        loss_fn = tf.losses.SparseCategoricalCrossentropy(from_logits=True)
        for x, y in ds:
            with tf.GradientTape() as tape:
                logits = sen_cnn(x)
                loss = loss_fn(y, logits)
            grads = tape.gradient(loss, sen_cnn.trainable_variables)
            opt.apply_gradients(zip(grads, sen_cnn.trainable_variables))
"""

FIXED_TRAIN = _d(TRAIN).replace("sen_cnn(x)", "sen_cnn(x, training=True)")


def _project(tmp_path: Path, files: dict[str, str]) -> list[InputFile]:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_d(text))
    return [InputFile(str(tmp_path / name)) for name in files]


def _check(tmp_path: Path, files: dict[str, str], *, prune: bool = True) -> list[Finding]:
    options = RunOptions(rule_codes=("TFR304",), root=str(tmp_path), prune_inert_code=prune)
    return run(_project(tmp_path, files), options, jobs=1).findings


def _fix(tmp_path: Path, files: dict[str, str]) -> dict[str, str | None]:
    options = RunOptions(rule_codes=("TFR304",), root=str(tmp_path), fix=True, unsafe_fixes=True)
    result = run(_project(tmp_path, files), options, jobs=1)
    return {Path(r.path).relative_to(tmp_path).as_posix(): r.fixed_source for r in result.files}


def _files(train: str = TRAIN, net: str = NET) -> dict[str, str]:
    return {"model/__init__.py": "", "model/net.py": net, "train.py": train}


# -- a Keras class of another module ----------------------------------------------------


def test_a_model_of_a_keras_class_from_another_module_is_reported_whatever_its_name(
    tmp_path: Path,
) -> None:
    """`sen_cnn` has no model's name and the step names `trainable_variables`
    (a `tf.Module` has them too): `TextNet` deriving from `tf.keras.Model`
    in `model/net.py` is the evidence, and its dropout never runs."""
    for prune in (True, False):
        [finding] = _check(tmp_path, _files(), prune=prune)
        assert finding.start.line == 11 and finding.code == "TFR304"
        assert finding.message.startswith(
            "`sen_cnn(...)` is called in a train step's tape without `training=True`"
        )
        assert finding.fix is not None and finding.fix.applicability is Applicability.UNSAFE


def test_the_fix_passes_training_and_leaves_the_class_alone(tmp_path: Path) -> None:
    fixed = _fix(tmp_path, _files())
    assert fixed["train.py"] == FIXED_TRAIN
    assert fixed["model/net.py"] is None


def test_a_keras_class_through_a_project_base_in_a_third_module(tmp_path: Path) -> None:
    """`TextNet(BaseNet)`, `BaseNet(tf.keras.Model)` in `model/base.py`."""
    base = """
        import tensorflow as tf


        class BaseNet(tf.keras.Model):
            pass
    """
    net = (
        _d(NET)
        .replace(
            "import tensorflow as tf\n", "import tensorflow as tf\nfrom model.base import BaseNet\n"
        )
        .replace("TextNet(tf.keras.Model)", "TextNet(BaseNet)")
    )
    files = {**_files(net=net), "model/base.py": base}
    assert _fix(tmp_path, files)["train.py"] == FIXED_TRAIN


def test_a_layer_subclass_the_step_trains_is_reported(tmp_path: Path) -> None:
    net = _d(NET).replace("tf.keras.Model", "tf.keras.layers.Layer")
    assert _fix(tmp_path, _files(net=net))["train.py"] == FIXED_TRAIN


def test_a_held_model_of_another_modules_class(tmp_path: Path) -> None:
    """`self.sen_cnn = TextNet(...)` in a trainer class of `train.py`."""
    fixed = _fix(tmp_path, _files(train=HELD))["train.py"]
    assert fixed == _d(HELD).replace("self.sen_cnn(x)", "self.sen_cnn(x, training=True)")


HELD = """
    import tensorflow as tf
    from model.net import TextNet


    class Trainer:
        def __init__(self):
            self.sen_cnn = TextNet(classes=2)
            self.opt = tf.optimizers.Adam(1e-3)

        def update(self, x, y):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(self.sen_cnn(x) - y))
            grads = tape.gradient(loss, self.sen_cnn.trainable_variables)
            self.opt.apply_gradients(zip(grads, self.sen_cnn.trainable_variables))
"""


def test_a_model_built_in_a_main_block_trained_by_a_module_level_loop(tmp_path: Path) -> None:
    train = """
        import tensorflow as tf
        from model.net import TextNet

        if __name__ == "__main__":
            sen_cnn = TextNet(classes=2)
            opt = tf.optimizers.Adam(1e-3)
            for x, y in tf.data.Dataset.range(4).map(lambda i: (tf.ones([1, 3]), i)):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(sen_cnn(x))
                grads = tape.gradient(loss, sen_cnn.trainable_variables)
                opt.apply_gradients(zip(grads, sen_cnn.trainable_variables))
    """
    fixed = _fix(tmp_path, _files(train=train))["train.py"]
    assert fixed == _d(train).replace("sen_cnn(x)", "sen_cnn(x, training=True)")


# -- what the class computes ------------------------------------------------------------


def test_a_class_of_another_module_without_training_layers_is_no_evidence(
    tmp_path: Path,
) -> None:
    """Only `Dense`: `training=True` would change nothing, so the class alone
    is no reason to report `sen_cnn(x)` (as for a helper's model call)."""
    assert _check(tmp_path, _files(net=DENSE_NET)) == []
    assert _check(tmp_path, _files(train=HELD, net=DENSE_NET)) == []


def test_a_model_named_so_of_such_a_class_is_not_reported(tmp_path: Path) -> None:
    """Named a model (or read as Keras, `trainable_weights`): the same
    policy as for a class of the file, `self.critic = Critic()` included:
    `training=True` would change nothing, so there is no finding."""
    named = _d(TRAIN).replace("sen_cnn", "model")
    held = _d(HELD).replace("trainable_variables", "trainable_weights")
    for train in (named, held):
        for prune in (True, False):
            assert _check(tmp_path, _files(train=train, net=DENSE_NET), prune=prune) == []
        assert _fix(tmp_path, _files(train=train, net=DENSE_NET))["train.py"] is None


def test_a_class_whose_call_reads_training_keeps_the_fix(tmp_path: Path) -> None:
    """Its `call` may branch on `training`, whatever layers it builds."""
    net = DENSE_NET.replace(
        "def call(self, x):", "def call(self, x, training=False):\n        x = x if training else x"
    )
    assert _fix(tmp_path, _files(net=net))["train.py"] == FIXED_TRAIN


def test_a_class_whose_call_takes_training_only_to_ignore_it(tmp_path: Path) -> None:
    """`training` taken and never read: what the layers compute decides."""
    net = DENSE_NET.replace("def call(self, x):", "def call(self, x, training=False):")
    assert _fix(tmp_path, _files(net=net))["train.py"] is None


def test_what_the_class_cannot_be_seen_to_build_keeps_the_fix(tmp_path: Path) -> None:
    """A layer from a project function, a Keras application, a backbone
    handed in, a package's layer: any of them may hold dropout or batch
    normalization."""
    builders = {
        "self._extra = make_block()": "def make_block():\n    return None\n\n\n",
        "self._extra = tf.keras.applications.MobileNetV2(weights=None)": "",
        "self._extra = tf.keras.layers.LSTM(4, dropout=0.1)": "",
        "self._extra = hub.KerasLayer('handle')": "import tensorflow_hub as hub\n",
    }
    for built, prelude in builders.items():
        net = (
            DENSE_NET.replace(
                "        self._fc = tf.keras.layers.Dense(classes)\n",
                f"        self._fc = tf.keras.layers.Dense(classes)\n        {built}\n",
            )
            .replace("class TextNet", prelude + "class TextNet")
            .replace("self._fc(x)", "self._fc(self._extra(x))")
        )
        assert _fix(tmp_path, _files(net=net))["train.py"] == FIXED_TRAIN, built
    handed = DENSE_NET.replace("def __init__(self, classes):", "def __init__(self, classes, head):")
    handed = handed.replace("self._fc(x)", "self._fc(self._head(x))").replace(
        "        self._fc = tf.keras.layers.Dense(classes)\n",
        "        self._fc = tf.keras.layers.Dense(classes)\n        self._head = head\n",
    )
    train = _d(TRAIN).replace("TextNet(classes=2)", "TextNet(classes=2, head=None)")
    assert _fix(tmp_path, _files(train=train, net=handed))["train.py"] == train.replace(
        "sen_cnn(x)", "sen_cnn(x, training=True)"
    )


# -- what is not a Keras model the step trains ------------------------------------------


def test_a_tf_module_of_another_module_is_not_a_keras_model(tmp_path: Path) -> None:
    """A `tf.Module` holds `trainable_variables`, and its `__call__` takes
    no `training`: adding one would raise."""
    net = """
        import tensorflow as tf


        class TextNet(tf.Module):
            def __init__(self, classes):
                super().__init__()
                self.w = tf.Variable(tf.zeros([3, classes]))

            def __call__(self, x):
                return x @ self.w
    """
    assert _check(tmp_path, _files(net=net)) == []


def test_a_sonnet_module_of_another_module_is_not_a_keras_model(tmp_path: Path) -> None:
    net = """
        import sonnet as snt


        class TextNet(snt.Module):
            def __init__(self, classes):
                super().__init__()
                self._fc = snt.Linear(classes)

            def __call__(self, x, is_training=False):
                return self._fc(x)
    """
    assert _check(tmp_path, _files(net=net)) == []
    tensorlayer = """
        import tensorlayer as tl
        from tensorlayer.models import Model


        class TextNet(Model):
            def __init__(self, classes):
                super().__init__()
                self._drop = tl.layers.Dropout(0.5)

            def forward(self, x):
                return self._drop(x)
    """
    train = (
        _d(TRAIN)
        .replace("sen_cnn.trainable_variables", "sen_cnn.trainable_weights")
        .replace("import tensorflow as tf\n", "import tensorflow as tf\nimport tensorlayer as tl\n")
    )
    assert _check(tmp_path, _files(train=train, net=tensorlayer)) == []


def test_a_plain_python_class_of_another_module_named_model_is_not_a_model(
    tmp_path: Path,
) -> None:
    """`model = Wrapper()`: a plain object with a `__call__`, whatever its name."""
    wrapper = """
        import tensorflow as tf


        class Wrapper:
            def __init__(self, classes):
                self.net = tf.keras.layers.Dense(classes)
                self.params = self.net.trainable_variables

            def __call__(self, x):
                return self.net(x)
    """
    train = (
        _d(TRAIN)
        .replace("from model.net import TextNet", "from model.net import Wrapper")
        .replace("sen_cnn = TextNet(classes=2)", "model = Wrapper(classes=2)")
        .replace("sen_cnn(x)", "model(x)")
        .replace("sen_cnn.trainable_variables", "model.params")
    )
    assert _check(tmp_path, _files(train=train, net=wrapper)) == []
    # The same call of a Keras model named so is one.
    keras_model = _d(NET).replace("TextNet", "Wrapper")
    assert len(_check(tmp_path, _files(train=train, net=keras_model))) == 1


def test_a_frozen_model_the_step_does_not_differentiate_stays_in_inference_mode(
    tmp_path: Path,
) -> None:
    """A teacher of the same class, called in the tape, is not trained."""
    train = (
        _d(TRAIN)
        .replace(
            "        sen_cnn = TextNet(classes=2)\n",
            "        sen_cnn = TextNet(classes=2)\n        teacher = TextNet(classes=2)\n",
        )
        .replace(
            "                loss = loss_fn(y, logits)\n",
            "                loss = loss_fn(y, logits) + tf.reduce_mean(teacher(x))\n",
        )
    )
    [finding] = _check(tmp_path, _files(train=train))
    assert finding.message.startswith("`sen_cnn(...)`")


def test_an_unresolved_class_is_no_evidence(tmp_path: Path) -> None:
    """`from model.sen_cnn import TextNet` with no such module in the
    project: nothing says the class is Keras'."""
    train = _d(TRAIN).replace("model.net", "model.sen_cnn")
    assert _check(tmp_path, _files(train=train)) == []


def test_each_script_of_a_collection_imports_its_own_networks(tmp_path: Path) -> None:
    """`dense/agent.py` and `dropout/agent.py` each import `from networks
    import Net`: the lookup finds both `networks.py`, and each script's is
    the one beside it."""
    agent = """
        import tensorflow as tf
        from networks import Net


        class Agent:
            def __init__(self):
                self.actor = Net(classes=2)

            def learn(self, x):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(self.actor(x))
                grads = tape.gradient(loss, self.actor.trainable_variables)
                self.actor.optimizer.apply_gradients(zip(grads, self.actor.trainable_variables))
    """
    files = {
        "dense/networks.py": DENSE_NET.replace("TextNet", "Net"),
        "dense/agent.py": agent,
        "dropout/networks.py": _d(NET).replace("TextNet", "Net"),
        "dropout/agent.py": agent,
    }
    [finding] = _check(tmp_path, files)
    assert Path(finding.path).parent.name == "dropout" and finding.fix is not None
