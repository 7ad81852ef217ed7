"""A trainer whose driver sets a margin up once and then, per epoch, binds
the temperature its traced step reads (shared by the fast and TF tests)."""

TRAINER = """
import tensorflow as tf


class Trainer:
    @tf.function
    def train_step(self, x):
        return x * self.margin / self.temperature

    def train(self, x, epochs):
        self.margin = 2.0
        outputs = []
        for epoch in range(epochs):
            self.temperature = 1.0 + epoch
            outputs.append(float(self.train_step(x)))
        return outputs
{extra}
"""

RUN_FOLDS = """
    def run_folds(self, x, folds):
        for fold in range(folds):
            self.train(x, 2)
"""
