"""A Keras model whose `train_step` picks its decorated losses from a table
it holds (`self.objectives["fit"](...)`), filled in `__init__` with what
factory methods return: shared by the source and TensorFlow tests."""

SOURCE = """\
import tensorflow as tf


class Regressor(tf.keras.Model):
    def __init__(self, net):
        super().__init__()
        self.net = net
        self.objectives = {"fit": self._make_fit_loss(), "smooth": self._make_smooth_loss()}

    def _make_fit_loss(self):
        scale = tf.constant(2.0)

        @tf.function
        def fit_loss(targets, outputs):
            return scale * tf.reduce_mean(tf.square(targets - outputs))

        return fit_loss

    def _make_smooth_loss(self):
        @tf.function
        def smooth_loss(outputs):
            return tf.reduce_mean(tf.abs(outputs[1:] - outputs[:-1]))

        return smooth_loss

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            outputs = self.net(x, training=True)
            loss = self.objectives["fit"](targets=y, outputs=outputs)
            loss += 0.1 * self.objectives["smooth"](outputs)
        grads = tape.gradient(loss, self.net.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.net.trainable_variables))
        return {"loss": loss}
"""
