"""Sources shared by the fast and TensorFlow tests of tensors given as
`training` to Keras 3 layers (TFR110)."""

# A model keeping its mode in a variable, handed to a layer of its own that
# holds a dropout: the model's `call` runs traced in every step.
MODE_VARIABLE = """
import tensorflow as tf
from tensorflow import keras


class Encoder(keras.layers.Layer):
    def __init__(self):
        super().__init__()
        self.dense = keras.layers.Dense(4)
        self.dropout = keras.layers.Dropout(0.5)

    def call(self, x, training=None):
        return self.dropout(self.dense(x), training=training)


class Autoencoder(keras.Model):
    def __init__(self):
        super().__init__()
        self.training_mode = tf.Variable(False, trainable=False)
        self.encoder = Encoder()
        self.decoder = keras.layers.Dense(3)

    def call(self, x):
        return self.decoder(self.encoder(x, training=self.training_mode))


model = Autoencoder()


@tf.function
def reconstruct(x):
    return model(x)
"""

# A batch normalization that freezes with its layer, in Keras 2's idiom.
FREEZING_NORMALIZATION = """
import tensorflow as tf


class FrozenAwareNormalization(tf.keras.layers.BatchNormalization):
    def call(self, x, training=False):
        if training is None:
            training = tf.constant(False)
        training = tf.logical_and(training, self.trainable)
        return super().call(x, training)


norm = FrozenAwareNormalization()


@tf.function
def normalized(x):
    return norm(x, training=True)
"""
