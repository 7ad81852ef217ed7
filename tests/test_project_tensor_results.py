"""What a project function of another module returns, told to its callers:
a function every `return` of which gives what a TensorFlow (or Keras
`ops`, or Keras loss) op computes returns a tensor, and so does a method
of an object the class holds. A print of such a result in traced code is a
print of a tensor (TFR103); a function that may return a Python value is
not taken for one."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tfrewrite.facts.index import build_index
from tfrewrite.pipeline.engine import InputFile, RunOptions, run

LOSSES = """
import tensorflow as tf
from keras import ops
from keras.losses import mean_squared_error


def critic_gap(real_score, fake_score):
    return ops.mean(fake_score) - ops.mean(real_score)


def smoothed(x):
    total = tf.reduce_sum(x)
    return total / 2.0


def maybe_scaled(x, scale=None):
    if scale is None:
        return 1.0
    return tf.reduce_sum(x) * scale


class Perceptual:
    def __init__(self, net):
        self.net = net

    def distance(self, a, b):
        return mean_squared_error(self.net(a), self.net(b))
"""

TRAIN = """
import tensorflow as tf
from losses import Perceptual, critic_gap, maybe_scaled, smoothed


class Trainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer
        self.perceptual = Perceptual(model)

    @tf.function
    def step(self, x, y):
        with tf.GradientTape() as tape:
            pred = self.model(x, training=True)
            gap = critic_gap(y, pred)
            content = self.perceptual.distance(y, pred)
            print("gap", gap)
            print("content", content)
            print("smoothed", smoothed(pred))
            print("scaled", maybe_scaled(pred))
        grads = tape.gradient(content, self.model.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))
"""


def _write(root: Path) -> list[InputFile]:
    (root / "losses.py").write_text(textwrap.dedent(LOSSES))
    (root / "train.py").write_text(textwrap.dedent(TRAIN))
    return [InputFile(str(root / "losses.py")), InputFile(str(root / "train.py"))]


@pytest.mark.parametrize(
    ("function", "returns_tensor"),
    [
        ("critic_gap", True),
        ("smoothed", True),
        ("maybe_scaled", False),
        ("Perceptual.distance", True),
        ("Perceptual.__init__", False),
    ],
)
def test_pass_one_reads_what_every_return_gives(function: str, returns_tensor: bool) -> None:
    index = build_index(textwrap.dedent(LOSSES), "losses.py", "losses")
    assert index.functions[function].returns_tensor is returns_tensor


def test_prints_of_another_modules_tensor_results_are_reported(tmp_path: Path) -> None:
    result = run(_write(tmp_path), RunOptions(rule_codes=("TFR103",), root=str(tmp_path)), jobs=1)
    printed = [f.start.line for f in result.findings if f.path.endswith("train.py")]
    assert printed == [18, 19, 20]  # not `maybe_scaled`, which may return 1.0


def test_a_parameter_returned_on_one_path_is_no_tensor_result() -> None:
    source = """
    import tensorflow as tf


    def maybe_resize(x, size=None):
        if size is not None:
            x = tf.image.resize(x, size)
        return x
    """
    index = build_index(textwrap.dedent(source), "ops.py", "ops")
    assert not index.functions["maybe_resize"].returns_tensor


RESCALED = """
import tensorflow as tf


def rescaled(y_true, y_pred, replicas):
    dice = tf.reduce_mean(y_true * y_pred)
    dice = dice * (1 / replicas)
    return dice


def accumulated(terms):
    total = tf.zeros([])
    total += tf.add_n(terms)
    return total


def annotated(x):
    out: tf.Tensor = tf.nn.relu(x)
    return out


def last_of_a_loop(x, items):
    out = tf.identity(x)
    for out in items:
        pass
    return out


def started_from_a_number(terms):
    total = 0.0
    total = total + terms
    return total
"""


@pytest.mark.parametrize(
    ("function", "returns_tensor"),
    [
        ("rescaled", True),
        ("accumulated", True),
        ("annotated", True),
        ("last_of_a_loop", False),
        ("started_from_a_number", False),
    ],
)
def test_a_name_every_binding_makes_a_tensor_is_a_tensor_result(
    function: str, returns_tensor: bool
) -> None:
    """A name rebound from itself (`dice = dice * scale`, `total += term`)
    stays what its first binding made it; a loop target may be anything."""
    index = build_index(textwrap.dedent(RESCALED), "metrics.py", "metrics")
    assert index.functions[function].returns_tensor is returns_tensor


POOLING = """
import tensorflow as tf


class Pooling(tf.keras.layers.Layer):
    def call(self, x):
        return tf.reduce_mean(x, axis=1)


class Pair(tf.keras.layers.Layer):
    def call(self, x):
        return x, x
"""

HEAD = """
import tensorflow as tf
from pooling import Pair, Pooling


class Head(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.pool = Pooling()
        self.pair = Pair()

    def call(self, x, split=False):
        pooled = self.pool(x)
        first, second = self.pair(x)
        if split:
            return tf.reshape(pooled, [pooled.shape[0] // 2, -1])
        return tf.reshape(first, [first.shape[0], -1])
"""


def test_a_held_layer_of_another_module_called_gives_what_its_call_returns(
    tmp_path: Path,
) -> None:
    """`self.pool(x)` where `self.pool = Pooling()` of another module runs
    `Pooling.call`, which returns a tensor: its static batch dimension as a
    size is TFR107's hazard. A layer returning a pair gives no one tensor:
    its first item is only likely one, as `tf.reshape` takes it (an unsafe
    fix that says so)."""
    (tmp_path / "pooling.py").write_text(textwrap.dedent(POOLING))
    (tmp_path / "head.py").write_text(textwrap.dedent(HEAD))
    files = [InputFile(str(tmp_path / "pooling.py")), InputFile(str(tmp_path / "head.py"))]
    result = run(files, RunOptions(rule_codes=("TFR107",), root=str(tmp_path)), jobs=1)
    found = [(f.path.rsplit("/", 1)[-1], f.start.line) for f in result.findings]
    assert found == [("head.py", 16), ("head.py", 17)]
    pooled, first = result.findings
    assert pooled.fix is not None and "assumes" not in pooled.fix.message
    assert first.fix is not None and "assumes `first` is a tensor" in first.fix.message


REACHING = """
import tensorflow as tf


def stacked(samples):
    draws = list()
    for sample in samples:
        draws.append(sample)
    draws = tf.stack(draws)
    return draws


def rebound_after(samples):
    draws = tf.stack(samples)
    for sample in samples:
        draws = sample
    return draws
"""


@pytest.mark.parametrize(
    ("function", "returns_tensor"), [("stacked", True), ("rebound_after", False)]
)
def test_the_binding_that_reaches_a_top_level_return_decides(
    function: str, returns_tensor: bool
) -> None:
    """`draws = tf.stack(draws)` just before `return draws` gives a tensor,
    whatever `draws` was first; a loop rebinding it after does not."""
    index = build_index(textwrap.dedent(REACHING), "mc.py", "mc")
    assert index.functions[function].returns_tensor is returns_tensor
