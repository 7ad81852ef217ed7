"""TFR203 through a plain function: a module loop hands each filter index
to a function that passes it on to a `tf.function` in a loop of its own
(`visualize(channel)` calling `ascent_step(image, channel)`). Each call of
the plain function traces a new graph: reported where the number is passed
on, naming the loop that changes it. A constant, or a tensor, is not."""

from __future__ import annotations

from pathlib import Path

from tests.projects import check_project

SCRIPT = """
import tensorflow as tf


@tf.function
def ascent_step(image, channel, rate):
    with tf.GradientTape() as tape:
        tape.watch(image)
        loss = tf.reduce_mean(tf.gather(image, channel, axis=-1))
    return image + rate * tape.gradient(loss, image)


def visualize(channel):
    image = tf.zeros((1, 4, 4, 3))
    for _ in range(5):
        image = ascent_step(image, channel, 0.1)
    return image


images = []
for channel in range(3):
    images.append(visualize(CHANNEL))
"""


def test_a_loop_number_passed_on_by_a_function_retraces(tmp_path: Path) -> None:
    source = SCRIPT.replace("CHANNEL", "channel")
    found = check_project(tmp_path, {"filters.py": source}, ("TFR203",))
    assert [(f.start.line, f.start.column) for f in found] == [(15, 17)]
    assert "the loop on line 20" in found[0].message
    assert "(through `visualize`)" in found[0].message


def test_a_constant_or_a_tensor_passed_on_does_not(tmp_path: Path) -> None:
    for channel in ("1", "tf.constant(channel)"):
        source = SCRIPT.replace("CHANNEL", channel)
        assert check_project(tmp_path, {"filters.py": source}, ("TFR203",)) == []
