"""TFR304 on a Keras model's `train_step` that runs its forward pass as
`self.call(x)`: Keras's `__call__` is bypassed, so no call context carries
`training` to the layers inside. Reported without a fix (the fix is the
model's own `self(x, training=True)`, which does more than `call`). Given
`training`, `call` passes it only where it says so: the layers it calls
without it are reported there."""

from __future__ import annotations

from tfrewrite.api import check_source, fix_source

MODEL = """
import keras
import tensorflow as tf


class Denoiser(keras.Model):
    def __init__(self):
        super().__init__()
        self.encoder = keras.Sequential([keras.layers.Dense(4), keras.layers.BatchNormalization()])
        self.decoder = keras.layers.Dense(3)

    def call(self, x, training=None):
        return self.decoder(self.encoder(x))

    def train_step(self, data):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square({forward} - data))
        grads = tape.gradient(loss, self.trainable_weights)
        self.optimizer.apply_gradients(zip(grads, self.trainable_weights))
        return {{"loss": loss}}
"""


def test_self_call_in_the_tape_is_reported_without_a_fix() -> None:
    (finding,) = check_source(MODEL.format(forward="self.call(data)"), select=["TFR304"])
    assert finding.fix is None
    assert "`self.call(...)` in the tape bypasses Keras's `__call__`" in finding.message


def test_the_model_called_with_training_is_not_reported() -> None:
    source = MODEL.format(forward="self(data, training=True)")
    assert check_source(source, select=["TFR304"]) == []


def test_self_call_given_training_reaches_only_the_layers_call_passes_it_to() -> None:
    """`self.call(data, training=True)`: `call` gets the flag, but without
    a call context the layers it calls without `training` do not (measured:
    a layer there sees `training=None`). The batch-normalizing encoder is
    reported with a fix passing `call`'s `training` on; the `Dense` decoder
    ignores it."""
    source = MODEL.format(forward="self.call(data, training=True)")
    (finding,) = check_source(source, select=["TFR304"])
    assert "`self.encoder(...)` gets no `training` in `call`" in finding.message
    fixed = fix_source(source, select=["TFR304"], unsafe_fixes=True)
    assert "return self.decoder(self.encoder(x, training=training))" in fixed


def test_self_call_given_training_by_position_is_given_training() -> None:
    """`self.call(data, True)` binds `call`'s `training` as the keyword
    does: no bypass finding; the layers `call` leaves without it are
    reported as before."""
    source = MODEL.format(forward="self.call(data, True)")
    (finding,) = check_source(source, select=["TFR304"])
    assert "`self.encoder(...)` gets no `training` in `call`" in finding.message


PASSED_ON = """
import keras
import tensorflow as tf


class Block(keras.layers.Layer):
    def __init__(self):
        super().__init__()
        self.dense = keras.layers.Dense(4)
        self.drop = keras.layers.Dropout(0.5)

    def call(self, x, training, mask):
        return self.drop(self.dense(x), training=training)


class Seq2Seq(keras.Model):
    def __init__(self):
        super().__init__()
        self.block = Block()
        self.head = keras.layers.Dense(3)

    def call(self, inp, tar, training, mask):
        return self.head(self.block(inp, training, mask) + tar)

    def train_step(self, data):
        inp, tar = data
        with tf.GradientTape() as tape:
            out = self.call(inp, tar, True, None)
            loss = tf.reduce_mean(tf.square(out - tar))
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {"loss": loss}
"""


def test_training_passed_on_by_position_through_every_layer_is_not_reported() -> None:
    """`call(self, inp, tar, training, mask)` given `True` third, and each
    layer with dropout given it in turn: nothing runs in inference mode."""
    assert check_source(PASSED_ON, select=["TFR304"]) == []


# A custom loop's step running the forward pass of the model it trains as
# `critic.call(x)`: the same bypass, for a model that is not `self`.
CRITIC_STEP = """
import keras
import tensorflow as tf


class Critic(keras.Model):
    def __init__(self):
        super().__init__()
        self.body = keras.Sequential([keras.layers.Dense(4), keras.layers.BatchNormalization()])
        self.head = keras.layers.Dense(1)

    def call(self, x, training=True):
        return self.head(self.body(x))


critic = Critic()
frozen = Critic()
optimizer = keras.optimizers.SGD(0.1)


@tf.function
def critic_step(real, fake):
    with tf.GradientTape() as tape:
        reference = frozen.call(real)
        loss = tf.reduce_mean({forward}(fake)) - tf.reduce_mean({forward}(real)) + 0.0 * reference
    grads = tape.gradient(loss, critic.trainable_variables)
    optimizer.apply_gradients(zip(grads, critic.trainable_variables))
    return loss
"""


def test_a_trained_model_run_as_call_in_the_tape_is_reported_without_a_fix() -> None:
    findings = check_source(CRITIC_STEP.format(forward="critic.call"), select=["TFR304"])
    assert [f.fix for f in findings] == [None, None]
    assert all(
        "`critic.call(...)` in the tape bypasses Keras's `__call__`" in f.message for f in findings
    )
    # `frozen` is called in the tape but not trained by it: inference is meant.


def test_a_trained_model_called_with_training_is_not_reported() -> None:
    source = (
        CRITIC_STEP.format(forward="critic.call")
        .replace("critic.call(fake)", "critic(fake, training=True)")
        .replace("critic.call(real)", "critic(real, training=True)")
    )
    assert "critic.call" not in source
    assert check_source(source, select=["TFR304"]) == []
