"""An agent module whose `tf.function` method branches on a step count,
and a script that calls it on the agent it builds, passing its Python
counter. Shared by the source and TensorFlow tests."""

AGENT = """
import tensorflow as tf

TRACES = []


class Agent:
    def __init__(self):
        self.w = tf.Variable(1.0)

    @tf.function
    def update(self, x, step_count):
        TRACES.append(step_count)
        if step_count % 2 == 0:
            self.w.assign_add(x)
        return self.w.read_value()
"""

SCRIPT = """
import tensorflow as tf

from agent import Agent

if __name__ == "__main__":
    agent = Agent()
    step_count = 0
    while step_count < 6:
        agent.update(tf.constant(1.0), step_count)
        step_count += 1
"""

LOCAL_SCRIPT = """
import tensorflow as tf

from agent import Agent


def main(steps):
    agent = Agent()
    for step_count in range(steps):
        agent.update(tf.constant(1.0), step_count)
    return agent
"""
