"""An agent whose traced method reads a Python float it holds, and a script
that lowers that float on the agent between episodes. Shared by the
source and TensorFlow tests."""

AGENT = """
import tensorflow as tf


class Agent:
    def __init__(self, noise=0.3):
        self.noise = noise

    @tf.function
    def choose_action(self, state):
        return state + self.noise
"""

SCRIPT = """
from agent import Agent


def main(states):
    agent = Agent()
    actions = []
    for episode, state in enumerate(states):
        agent.noise = 0.3 / (episode + 1)
        actions.append(agent.choose_action(state))
    return actions
"""
