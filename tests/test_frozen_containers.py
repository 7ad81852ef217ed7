"""TFR201: Python state changed in place between calls, however it is
changed: an item assigned, a mutating method (`cfg.update(...)`), or a
classmethod rebinding its class's attribute (`cls.margin = ...`)."""

from __future__ import annotations

import textwrap

import pytest

from tfrewrite.api import check_source

UPDATED_DICT = """
import tensorflow as tf

config = {"scale": 1.0}


def set_scale(value):
    config.{change}


@tf.function
def scaled(x):
    return x * config["scale"]
"""


@pytest.mark.parametrize(
    ("change", "spelled"),
    [
        ("update(scale=value)", "`config.update(...)`"),
        ('setdefault("scale", value)', "`config.setdefault(...)`"),
    ],
)
def test_a_dict_changed_in_place_is_frozen_in_traced_code(change: str, spelled: str) -> None:
    source = UPDATED_DICT.replace("{change}", change)
    found = check_source(source, select=["TFR201"])
    assert [f.start.line for f in found] == [13]
    assert spelled in found[0].message


def test_a_dict_item_assignment_still_counts() -> None:
    source = UPDATED_DICT.replace("config.{change}", 'config["scale"] = value')
    (finding,) = check_source(source, select=["TFR201"])
    assert "`config[...] = ...`" in finding.message


def test_a_traced_function_appending_to_a_list_is_tfr202_not_a_frozen_read() -> None:
    source = textwrap.dedent(
        """
        import tensorflow as tf

        history = []


        @tf.function
        def step(x):
            history.append(x)
            return x * 2
        """
    )
    codes = [f.code for f in check_source(source, select=["TFR2"])]
    assert codes == ["TFR202"]


def test_a_classmethod_rebinding_its_class_attribute_is_frozen_state() -> None:
    source = textwrap.dedent(
        """
        import tensorflow as tf


        class Schedule:
            margin = 0.1

            @classmethod
            def advance(cls, epoch):
                cls.margin = epoch / 10


        @tf.function
        def hinge(y):
            return tf.nn.relu(Schedule.margin - y)
        """
    )
    (finding,) = check_source(source, select=["TFR201"])
    assert "`Schedule.margin`" in finding.message
    assert "rebound in `Schedule.advance`" in finding.message


def test_the_same_in_a_check_of_the_project(tmp_path) -> None:
    """The check of a folder leaves out code no rule needs before parsing: a
    function that changes a container in place is kept for TFR201."""
    from typer.testing import CliRunner

    from tfrewrite.cli import app

    path = tmp_path / "scaled.py"
    path.write_text(UPDATED_DICT.replace("{change}", "update(scale=value)"), encoding="utf-8")
    result = CliRunner().invoke(
        app, ["check", "--no-cache", "--select", "TFR201", "--output-format", "concise", str(path)]
    )
    assert result.exit_code == 1
    assert "scaled.py:13:16: TFR201 `config` is Python state" in result.output


def test_each_class_building_its_layers_in_its_own_setup_method() -> None:
    """Two models each call their own `make_layers` from `__init__`: neither
    calls the other's, so what it builds is set up once, not rebound."""
    source = textwrap.dedent(
        """
        import tensorflow as tf


        class Encoder(tf.keras.Model):
            def __init__(self, widths):
                super().__init__()
                self.make_layers(widths)

            def make_layers(self, widths):
                self.blocks = []
                self.blocks += [tf.keras.layers.Dense(w) for w in widths]

            def call(self, x):
                for block in self.blocks:
                    x = block(x)
                return x


        class Decoder(tf.keras.Model):
            def __init__(self, widths):
                super().__init__()
                self.make_layers(widths)

            def make_layers(self, widths):
                self.stages = [tf.keras.layers.Dense(w) for w in widths]

            def call(self, x):
                for stage in self.stages:
                    x = stage(x)
                return x
        """
    )
    assert check_source(source, select=["TFR201"]) == []
    # A subclass calling it on `self` after construction does rebuild it.
    rebuilt = source + textwrap.dedent(
        """

        class Wider(Encoder):
            def widen(self, widths):
                self.make_layers(widths)
        """
    )
    assert [f.start.line for f in check_source(rebuilt, select=["TFR201"])] == [15]


SCHEDULED_RATE = """
import math

import tensorflow as tf


class MovingAverage(tf.keras.callbacks.Callback):
    def __init__(self, start=0.99):
        super().__init__()
        self.rate = start
        self.step = 0

    def on_train_batch_end(self, batch, logs=None):
        self.update_weights()
        self.rate = self.next_rate()
        self.step += 1

    def next_rate(self):
        return 1.0 - 0.01 * (math.cos(math.pi * self.step / 100) + 1) / 2

    @tf.function
    def update_weights(self):
        for weight in self.model.weights:
            weight.assign(self.rate * weight)
"""


def test_an_attribute_rebound_to_an_own_methods_number_is_frozen_state() -> None:
    """`self.rate = self.next_rate()`, a method whose every `return` is
    Python arithmetic, rebinds a number per batch; the traced update reads
    the one of its first trace (TFR201)."""
    found = [(f.code, f.start.line) for f in check_source(SCHEDULED_RATE, select=["TFR201"])]
    assert found == [("TFR201", 24)]
    # A method returning a variable it holds rebinds no number: no finding.
    held = SCHEDULED_RATE.replace(
        "        return 1.0 - 0.01 * (math.cos(math.pi * self.step / 100) + 1) / 2",
        "        return self.rate_variable",
    )
    assert check_source(held, select=["TFR201"]) == []
