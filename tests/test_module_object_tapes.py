"""TFR304 in the `__call__` of an object a training script binds once at
module level (`chatbot = Seq2Seq(...)`), which its decorated step runs in
the tape (`loss = chatbot(x, y)`) while taking gradients through the
object (`chatbot.trainable_parts()`, returning its encoder's and decoder's
variables): the encoder, whose recurrent layer drops out, runs in
inference mode there. The decoder, a `Bidirectional` recurrent layer
without dropout beside `Dense` and `Embedding` layers, computes the same
either way and is not reported."""

from __future__ import annotations

from pathlib import Path

from tests.projects import check_project, found_lines

MODEL = """
    import tensorflow as tf


    class Encoder(tf.keras.Model):
        def __init__(self, units, dropout):
            super().__init__()
            self.embedding = tf.keras.layers.Embedding(100, 8)
            self.gru = tf.keras.layers.GRU(units, return_state=True, dropout=dropout)

        def call(self, x):
            return self.gru(self.embedding(x))


    class Decoder(tf.keras.Model):
        def __init__(self, units):
            super().__init__()
            self.embedding = tf.keras.layers.Embedding(100, 8)
            self.gru = tf.keras.layers.Bidirectional(tf.keras.layers.GRU(units))
            self.predictor = tf.keras.layers.Dense(100)

        def call(self, x, state):
            return self.predictor(self.gru(self.embedding(x)))


    class Seq2Seq(tf.Module):
        def __init__(self, units):
            super().__init__()
            self.encoder = Encoder(units, dropout=0.2)
            self.decoder = Decoder(units)

        def __call__(self, inputs, targets):
            _, state = self.encoder(inputs)
            predictions = self.decoder(targets, state)
            return tf.reduce_mean(tf.square(predictions))

        def trainable_parts(self):
            return self.encoder.trainable_variables + self.decoder.trainable_variables
"""

TRAIN = """
    import tensorflow as tf

    import model

    chatbot = model.Seq2Seq(16)
    optimizer = tf.keras.optimizers.Adam()


    @tf.function
    def train_batch(inputs, targets):
        with tf.GradientTape() as tape:
            loss = chatbot(inputs, targets)
        variables = chatbot.trainable_parts()
        optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
        return loss


    for _ in range(10):
        train_batch(tf.zeros((4, 5), tf.int32), tf.zeros((4, 5), tf.int32))
"""


def test_the_encoder_a_module_objects_call_runs_in_the_tape_is_reported(
    tmp_path: Path,
) -> None:
    findings = check_project(tmp_path, {"model.py": MODEL, "train.py": TRAIN}, ("TFR304",))
    assert found_lines(findings) == [("model.py", 32)]
    (finding,) = findings
    assert "runs in its tape as `chatbot(...)` while it trains `self.encoder`" in finding.message
    assert finding.fix is None


def test_gradients_taken_through_other_objects_train_nothing_it_holds(tmp_path: Path) -> None:
    other = TRAIN.replace("variables = chatbot.trainable_parts()", "variables = []")
    assert check_project(tmp_path, {"model.py": MODEL, "train.py": other}, ("TFR304",)) == []


def test_a_keras_models_call_gets_the_flag_from_the_call_in_the_tape(tmp_path: Path) -> None:
    """Calling a Keras model runs its `call` in a call context that hands
    `training` on to the layers it calls: the call in the tape is the one
    that needs the flag, not those in `call`."""
    keras_model = MODEL.replace("class Seq2Seq(tf.Module):", "class Seq2Seq(tf.keras.Model):")
    keras_model = keras_model.replace(
        "def __call__(self, inputs, targets):", "def call(self, inputs, targets):"
    )
    findings = check_project(tmp_path, {"model.py": keras_model, "train.py": TRAIN}, ("TFR304",))
    assert "model.py" not in [name for name, _ in found_lines(findings)]
