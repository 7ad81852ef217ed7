"""A project whose trainer holds a loss picked by name from a table a
helper of another module returns (`self.objective = pick_objective(name)`),
and calls it in its traced step's tape. Shared by the fast and the
TensorFlow tests of what such a pick reaches."""

OBJECTIVES = """
import tensorflow as tf


def pick_objective(name):
    table = {"hinge": hinge_objective, "square": square_objective}
    return table[name.lower()]


@tf.function
def hinge_objective(model, x, y):
    return tf.reduce_mean(tf.nn.relu(1.0 - y * model(x)))


@tf.function
def square_objective(model, x, y):
    return tf.reduce_mean(tf.square(model(x) - y))
"""

TRAINER = """
import tensorflow as tf

from objectives import pick_objective


class Trainer:
    def __init__(self, model, objective="square"):
        self.model = model
        self.optimizer = tf.keras.optimizers.SGD(0.1)
        self.objective = pick_objective(objective)

    @tf.function
    def step(self, x, y):
        with tf.GradientTape() as tape:
            loss = self.objective(self.model, x, y)
        grads = tape.gradient(loss, self.model.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))
        return loss
"""

FILES = {"objectives.py": OBJECTIVES, "trainer.py": TRAINER}
