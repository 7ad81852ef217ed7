"""A train step that takes the episode's states as a Python list, and the
script that grows that list step by step and calls the step once per
episode. Shared by the source and TensorFlow tests."""

STEPS = """
import tensorflow as tf

TRACES = []


def train_step(states, returns, model, optimizer):
    TRACES.append(len(states))
    with tf.GradientTape() as tape:
        loss = 0.0
        for i in range(len(states)):
            value = model(tf.reshape(tf.convert_to_tensor(states[i]), [1, -1]))
            loss += tf.square(returns[i] - value)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss
"""

SCRIPT = """
import numpy as np
import tensorflow as tf

from steps import train_step


def main(episodes, model, optimizer):
    for episode in range(episodes):
        states, returns = [], []
        for t in range(3 + episode):
            states.append(np.full(2, t, np.float32))
            returns.append(float(t))
        train_step(states, returns, model, optimizer)
"""
