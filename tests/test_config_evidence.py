"""What a call site passes: an attribute of an object whose name says
configuration (`self.config.expl_noise`, `args.lr`) is a Python value, so
a traced helper's condition on it stays Python (no `tf.cond`, which would
raise "pred must not be a Python bool" on it)."""

from __future__ import annotations

import textwrap

import pytest

from tfrewrite.api import check_source

SOURCE = """
import tensorflow as tf


def add_noise(action, amount):
    if amount == 0:
        return action
    return action + amount * tf.random.normal(tf.shape(action))


class Agent(tf.Module):
    def __init__(self, config):
        self.config = config

    @tf.function
    def act(self, x, explore):
        if explore:
            noise = {value}
        else:
            noise = self.config.eval_noise
        return add_noise(x, noise)
"""


@pytest.mark.parametrize("value", ["self.config.expl_noise", "self.hparams.noise"])
def test_a_configuration_attribute_is_a_python_value(value: str) -> None:
    source = textwrap.dedent(SOURCE).replace("{value}", value)
    assert check_source(source, select=["TFR101"]) == []


def test_an_attribute_of_another_object_is_still_unknown() -> None:
    source = (
        textwrap.dedent(SOURCE)
        .replace("{value}", "self.noise_source.scale")
        .replace("self.config.eval_noise", "self.noise_source.low")
    )
    [finding] = check_source(source, select=["TFR101"])
    assert finding.start.line == 6
    assert finding.fix is not None and finding.fix.applicability.value == "unsafe"
