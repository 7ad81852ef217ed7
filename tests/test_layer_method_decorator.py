"""TFR308: `@tf.function` on a method of a Keras layer that Keras 3 builds by
running `call` (the class and its project bases define no `build`), where
sublayers with weights are called: where the facts come from (bases in
other modules, sublayers appended to a list, held layer classes of the
file) and what keeps the finding away (a `build`, `tf_keras`, no weighted
sublayer, a serving signature, a method `call` does not reach)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tfrewrite.api import check_source, fix_source
from tfrewrite.pipeline.engine import InputFile, RunOptions, run


def _lines(source: str) -> list[int]:
    return [f.start.line for f in check_source(textwrap.dedent(source), select=["TFR308"])]


BLOCKS = """
import tensorflow as tf


class Block(tf.keras.layers.Layer):
    def __init__(self):
        super().__init__()
        self.conv = tf.keras.layers.Conv1D(4, 3)

    def call(self, x):
        return tf.nn.relu(self.conv(x))


class Stack(tf.keras.Model):
    def __init__(self, depth):
        super().__init__()
        self.blocks = []
        for _ in range(depth):
            self.blocks.append(Block())

    @tf.function
    def call(self, x):
        for block in self.blocks:
            x = block(x)
        return x
"""


def test_sublayers_appended_to_a_list_and_held_layer_classes_count() -> None:
    assert _lines(BLOCKS) == [21]


def test_a_base_of_another_module_without_build_counts(tmp_path: Path) -> None:
    (tmp_path / "base.py").write_text(
        "import tensorflow as tf\n\n\nclass Base(tf.keras.Model):\n    pass\n"
    )
    (tmp_path / "net.py").write_text(
        textwrap.dedent(
            """
            import tensorflow as tf
            from base import Base


            class Net(Base):
                def __init__(self):
                    super().__init__()
                    self.out = tf.keras.layers.Dense(1)

                @tf.function
                def call(self, x):
                    return self.out(x)
            """
        )
    )
    files = [InputFile(str(tmp_path / n)) for n in ("base.py", "net.py")]
    result = run(files, RunOptions(rule_codes=("TFR308",), root=str(tmp_path)), jobs=1)
    assert [(Path(f.path).name, f.start.line) for f in result.findings] == [("net.py", 11)]


def test_a_build_in_a_project_base_keeps_the_finding_away(tmp_path: Path) -> None:
    (tmp_path / "base.py").write_text(
        textwrap.dedent(
            """
            import tensorflow as tf


            class Base(tf.keras.Model):
                def build(self, input_shape):
                    for layer in self.layers:
                        layer.build(input_shape)
            """
        )
    )
    (tmp_path / "net.py").write_text(
        "import tensorflow as tf\nfrom base import Base\n\n\nclass Net(Base):\n"
        "    def __init__(self):\n        super().__init__()\n"
        "        self.out = tf.keras.layers.Dense(1)\n\n"
        "    @tf.function\n    def call(self, x):\n        return self.out(x)\n"
    )
    files = [InputFile(str(tmp_path / n)) for n in ("base.py", "net.py")]
    result = run(files, RunOptions(rule_codes=("TFR308",), root=str(tmp_path)), jobs=1)
    assert result.findings == []


def test_a_legacy_keras_class_is_left_alone() -> None:
    source = BLOCKS.replace(
        "import tensorflow as tf\n", "import tensorflow as tf\nimport tf_keras\n"
    )
    source = source.replace("tf.keras.", "tf_keras.")
    assert _lines(source) == []


def test_a_method_call_does_not_reach_is_left_alone() -> None:
    source = """
    import tensorflow as tf


    class Net(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.out = tf.keras.layers.Dense(1)

        def call(self, x):
            return self.out(x)

        @tf.function
        def train_step(self, data):
            x, y = data
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean((self.out(x) - y) ** 2)
            grads = tape.gradient(loss, self.trainable_variables)
            self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
            return {"loss": loss}
    """
    assert _lines(source) == []


def test_the_fix_removes_only_the_decorator_and_is_unsafe() -> None:
    source = textwrap.dedent(BLOCKS)
    assert fix_source(source, select=["TFR308"]) == source
    fixed = fix_source(source, select=["TFR308"], unsafe_fixes=True)
    assert fixed == source.replace("    @tf.function\n    def call", "    def call")
    assert fix_source(fixed, select=["TFR308"], unsafe_fixes=True) == fixed


SELF_BUILT = """
import tensorflow as tf


class Head(tf.keras.Model):
    def __init__(self, features):
        super().__init__()
        self.hidden = tf.keras.layers.Dense(8)
        self.out = tf.keras.layers.Dense(2)
        self.call(tf.ones([1, features]))  # builds the sublayers

    @tf.function
    def call(self, x):
        return self.out(tf.nn.relu(self.hidden(x)))
"""


def test_a_class_that_runs_its_own_call_in_init_is_left_alone() -> None:
    """Its sublayers are built by the first trace of the decorated `call`,
    not by Keras' symbolic build: their weights train."""
    assert _lines(SELF_BUILT) == []
    assert _lines(
        SELF_BUILT.replace(
            "        self.call(tf.ones([1, features]))  # builds the sublayers\n", ""
        )
    ) == [11]


def test_a_serving_signature_on_call_is_reported_without_a_fix() -> None:
    """Keras 3 still builds the sublayers inside the `tf.function`; the fix
    that removes the decorator would drop the signature an export serves."""
    signed = BLOCKS.replace(
        "    @tf.function\n", "    @tf.function(input_signature=[tf.TensorSpec([None, 8, 2])])\n"
    )
    [finding] = check_source(signed, select=["TFR308"])
    assert finding.fix is None
    assert "no fix: the decorator carries an `input_signature`" in finding.message


SHAPED = """
import tensorflow as tf


class Actor(tf.keras.Model):
    def __init__(self, obs_dim):
        super().__init__()
        self.mu = tf.keras.Sequential([{first}])

    @tf.function
    def call(self, x):
        return self.mu(x)
"""


@pytest.mark.parametrize(
    "first",
    [
        "tf.keras.layers.Dense(2, input_shape=(obs_dim,))",
        "tf.keras.Input(shape=(obs_dim,)), tf.keras.layers.Dense(2)",
    ],
)
def test_a_sequential_told_its_input_shape_is_built_where_it_is_made(first: str) -> None:
    assert _lines(SHAPED.replace("{first}", first)) == []
    assert _lines(SHAPED.replace("{first}", "tf.keras.layers.Dense(2)")) == [10]


ADDED = """
import tensorflow as tf


class Critic(tf.keras.Model):
    def __init__(self, depth):
        super().__init__()
        self.q = tf.keras.Sequential()
        for _ in range(depth):
            self.q.add({first})
        self.q.add(tf.keras.layers.Dense(1))

    @tf.function
    def call(self, states, actions):
        return self.q(tf.concat([states, actions], 1))
"""


def test_a_sequential_filled_layer_by_layer_builds_in_the_first_call() -> None:
    """`Sequential()` then `.add(Dense(...))` in `__init__`: its weights are
    made in the decorated `call`, unless the first layer added tells its
    input's shape (Keras builds it as it is filled)."""
    assert _lines(ADDED.replace("{first}", "tf.keras.layers.Dense(8)")) == [13]
    shaped = "tf.keras.layers.Dense(8, input_shape=(5,))"
    assert _lines(ADDED.replace("{first}", shaped)) == []


# Layers bound to local names, then kept as a list the decorated `call` loops over.
NAMED_LAYERS = """
import tensorflow as tf


class Extractor(tf.keras.layers.Layer):
    def __init__(self):
        super().__init__()
        conv = tf.keras.layers.Conv2D(4, 3, activation="relu")
        flat = tf.keras.layers.Flatten()
        dense = LAST
        self.model = [conv, flat, dense]

    @tf.function
    def call(self, x):
        for layer in self.model:
            x = layer(x)
        return x
"""


def test_layers_bound_to_names_and_listed_hold_weights() -> None:
    assert _lines(NAMED_LAYERS.replace("LAST", "tf.keras.layers.Dense(2)")) == [13]


def test_names_bound_to_layers_without_weights_hold_none() -> None:
    source = NAMED_LAYERS.replace("LAST", "tf.keras.layers.ReLU()").replace(
        'conv = tf.keras.layers.Conv2D(4, 3, activation="relu")', "conv = tf.keras.layers.ReLU()"
    )
    assert _lines(source) == []
