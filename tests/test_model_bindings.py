"""What a name holds when it is bound element by element (`net, target =
Net(), Net()`): the same as `net = Net()`, so TFR304 knows the model's
`call` takes `training` third and keeps dropout on in its tape."""

from __future__ import annotations

import textwrap

from tfrewrite.api import check_source, fix_source

PAIR = """
import tensorflow as tf


class Net(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.hidden = tf.keras.layers.Dense(8)
        self.drop = tf.keras.layers.Dropout(0.3)

    def call(self, x, a, training=None):
        return self.drop(self.hidden(tf.concat([x, a], 1)), training=training)


def make_update(net, target, opt):
    @tf.function
    def update(x, a):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((net(x, a) - tf.stop_gradient(target(x, a))) ** 2)
        grads = tape.gradient(loss, net.trainable_variables)
        opt.apply_gradients(zip(grads, net.trainable_variables))

    return update


def main(batches):
    {binding}
    update = make_update(net, target, tf.keras.optimizers.Adam())
    for x in batches:
        update(x, x)
"""


def _source(binding: str) -> str:
    return textwrap.dedent(PAIR).replace("{binding}", binding)


def test_models_bound_element_by_element_are_known() -> None:
    for binding in ("net, target = Net(), Net()", "net = Net()\n    target = Net()"):
        source = _source(binding)
        (finding,) = check_source(source, select=["TFR304"])
        assert finding.message.startswith("`net(...)` is called in a train step's tape")
        fixed = fix_source(source, select=["TFR304"], unsafe_fixes=True)
        assert "(net(x, a, training=True) - tf.stop_gradient(target(x, a)))" in fixed


CONTEXT_ONLY = """
import tensorflow as tf


class Critic(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.hidden = tf.keras.layers.Dense(8)
        self.drop = tf.keras.layers.Dropout(0.5)

    def call(self, x):
        return self.drop(self.hidden(x))


critic = Critic()
opt = tf.keras.optimizers.SGD(0.01)


@tf.function
def update(x):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(critic(x) ** 2)
    grads = tape.gradient(loss, critic.trainable_variables)
    opt.apply_gradients(zip(grads, critic.trainable_variables))
    return loss
"""


def test_a_call_without_training_still_hands_it_to_its_dropout() -> None:
    """Keras passes `training` to the layers a `call` uses through its call
    context: a class holding `Dropout` gets the fix even though its `call`
    does not name `training`."""
    source = textwrap.dedent(CONTEXT_ONLY)
    (finding,) = check_source(source, select=["TFR304"])
    assert "runs in inference mode" in finding.message
    fixed = fix_source(source, select=["TFR304"], unsafe_fixes=True)
    assert "critic(x, training=True)" in fixed


def test_a_call_without_training_over_dense_layers_only_is_left_as_it_is() -> None:
    source = textwrap.dedent(CONTEXT_ONLY).replace(
        "tf.keras.layers.Dropout(0.5)", "tf.keras.layers.Dense(8)"
    )
    # Nothing in it depends on `training`: no finding.
    assert check_source(source, select=["TFR304"]) == []
