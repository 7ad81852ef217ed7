"""A function handed to a distribution strategy (`strategy.run`, or
`experimental_run_v2`, its name before TensorFlow 2.2) runs traced in the
decorated step that hands it over, and receives the `args` it is given as
they are: a Python flag stays a Python flag."""

from __future__ import annotations

import textwrap

from tfrewrite.api import check_source

STEP = """
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy()
model = tf.keras.Sequential([tf.keras.layers.Dense(1)])


@tf.function
def train_step(features, fine_tune):
    def replica_step(features, fine_tune):
        scale = 0.5 if fine_tune else 1.0
        return tf.reduce_sum(model(features)) * scale

    return strategy.RUN(replica_step, args=(features, fine_tune))


for epoch in range(3):
    train_step(tf.ones((2, 3)), FLAG)
"""


def _found(run: str, flag: str) -> list[tuple[str, int]]:
    source = textwrap.dedent(STEP).replace("RUN", run).replace("FLAG", flag)
    return [(f.code, f.start.line) for f in check_source(source, select=["TFR101"])]


def test_a_python_flag_handed_through_the_strategy_stays_python() -> None:
    for run in ("run", "experimental_run_v2"):
        assert _found(run, "True if epoch > 1 else False") == []


def test_a_tensor_flag_handed_through_the_strategy_is_a_tensor() -> None:
    for run in ("run", "experimental_run_v2"):
        assert _found(run, "tf.constant(epoch > 1)") == [("TFR101", 11)]
