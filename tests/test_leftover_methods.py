"""TFR304 on a model of `Dense` layers that also keeps methods from older
code (`_get_params` running `self.sess.run(...)`, `__setstate__` calling a
`self.restore_params` the class never defines): such methods neither build
nor call the object, so what they call through attributes the class never
sets runs no layer of it, and `training=True` still changes nothing. The
same call in `call` itself may run anything."""

from __future__ import annotations

from pathlib import Path

from tests.projects import check_project, found_lines
from tests.test_custom_gradient_layers import AGENT

NETWORK = """
    import tensorflow as tf


    class Policy(tf.keras.Model):
        def __init__(self, units):
            super().__init__()
            self.hidden = tf.keras.Sequential()
            self.hidden.add(tf.keras.layers.Dense(units, activation="relu"))
            self.head = tf.keras.layers.Dense(2)

        def call(self, state):
            return self.head({body})

        def _get_params(self):
            with self.graph.as_default():
                params = tf.compat.v1.trainable_variables()
            return dict(zip([p.name for p in params], self.sess.run(params)))

        def __setstate__(self, state):
            args, params = state
            self.__init__(**args)
            self.restore_params(params)
"""


def _check(tmp_path: Path, body: str) -> list[tuple[str, int]]:
    files = {"nets.py": NETWORK.format(body=body), "agent.py": AGENT}
    return found_lines(check_project(tmp_path, files, ("TFR304",)))


def test_leftover_methods_do_not_make_the_model_read_training(tmp_path: Path) -> None:
    assert _check(tmp_path, "self.hidden(state)") == []


def test_an_attribute_never_set_that_call_runs_may_be_anything(tmp_path: Path) -> None:
    assert _check(tmp_path, "self.encoder(self.hidden(state))") == [("agent.py", 14)]
