"""Which functions are train steps when gradients pass through a helper:
a method that loops over the data itself, calling a decorated step that
returns its gradients and applying them per batch, is the training loop,
not a step to decorate; a helper returning gradients that its callers in
the file never apply (a Hessian-vector product) is no step either."""

from __future__ import annotations

import textwrap

from tfrewrite.api import check_source
from tfrewrite.facts.index import build_index

AGENT = """
import tensorflow as tf


class Agent:
    def __init__(self, policy, optimizer):
        self.policy = policy
        self.optimizer = optimizer

    def update(self, dataset):
        return self._update_policy(dataset)

    def _update_policy(self, dataset):
        total = 0.0
        for data in dataset:
            gradients, loss = self._update_policy_step(data)
            self.optimizer.apply_gradients(zip(gradients, self.policy.trainable_variables))
            total += float(loss)
        return total

    @tf.function
    def _update_policy_step(self, data):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(self.policy(data["x"]) - data["y"]))
        return tape.gradient(loss, self.policy.trainable_variables), loss

    def _hessian_vector_product(self, v, x):
        with tf.GradientTape(persistent=True) as tape:
            loss = tf.reduce_mean(self.policy(x))
            grads = tape.gradient(loss, self.policy.trainable_variables)
            flat = tf.concat([tf.reshape(g, [-1]) for g in grads], axis=0)
            product = tf.reduce_sum(flat * v)
            hvp = tape.gradient(product, self.policy.trainable_variables)
        return hvp

    def solve(self, x, b, iterations):
        p = b
        for _ in range(iterations):
            z = self._hessian_vector_product(p, x)
            p = p - 0.1 * tf.concat([tf.reshape(g, [-1]) for g in z], axis=0)
        return p


def train(agent, batches, epochs):
    for _ in range(epochs):
        agent.update(batches)
"""


def test_a_method_looping_over_the_data_around_a_step_is_no_step() -> None:
    index = build_index(textwrap.dedent(AGENT), "agent.py", "agent")
    assert not index.functions["Agent._update_policy"].trains
    assert not index.functions["Agent._hessian_vector_product"].trains
    assert check_source(textwrap.dedent(AGENT), select=["TFR302"]) == []
