"""The trainer class the verify tests build in more than one project: a
`train_step` with a tape and an update, and a loop method calling it per
batch, under the names and constructor each test gives."""

from __future__ import annotations

_TRAINER = """

class {name}:
    def __init__(self, model{parameters}):
        self.model = model
        self.optimizer = tf.keras.optimizers.SGD({rate})

    def train_step(self, x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(self.model(x) - y))
        grads = tape.gradient(loss, self.model.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))
        return loss

    def {loop}(self, dataset, epochs):
        for epoch in range(epochs):
            for x, y in dataset:
                loss = self.train_step(x, y)
        return loss
"""


def trainer_class(name: str, loop: str, rate: str = "0.05", parameters: str = "") -> str:
    """The class `name` whose method `loop` trains, with SGD at `rate` (a
    number, or a parameter of `__init__` listed in `parameters`)."""
    return _TRAINER.format(name=name, loop=loop, rate=rate, parameters=parameters)
