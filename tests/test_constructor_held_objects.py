"""What a class keeps of its constructor's arguments (`self.noise = noise`
in `__init__`) is what the call sites building it pass there: `Agent(...,
noise=OUNoise())` in a script that imports no TensorFlow makes the traced
`self.noise()` run `OUNoise.__call__`, whose NumPy draw then runs once per
trace (TFR102). Several classes passed at different sites are each
followed; a site passing something else leaves the attribute unknown."""

from __future__ import annotations

from pathlib import Path

from tests.projects import check_project, found_lines

AGENT = """
    import tensorflow as tf


    class Agent:
        def __init__(self, dim, noise):
            self.dim = dim
            self.noise = noise

        @tf.function
        def act(self, state):
            return state + self.noise()
"""

NOISE = """
    import numpy as np


    class GaussianNoise:
        def __init__(self, dim):
            self.dim = dim

        def __call__(self):
            return np.random.normal(size=self.dim)


    class UniformNoise:
        def __init__(self, dim):
            self.dim = dim

        def __call__(self):
            return np.random.uniform(size=self.dim)
"""

MAIN = """
    from agents.agent import Agent
    from agents.noise import GaussianNoise, UniformNoise


    def train(state):
        agent = Agent(2, noise={train_noise})
        return agent.act(state)


    def play(state):
        agent = Agent(2, noise=UniformNoise(2))
        return agent.act(state)
"""


def _random_findings(tmp_path: Path, train_noise: str) -> list[tuple[str, int]]:
    files = {
        "agents/__init__.py": "",
        "agents/agent.py": AGENT,
        "agents/noise.py": NOISE,
        "main.py": MAIN.format(train_noise=train_noise),
    }
    return found_lines(check_project(tmp_path, files, ("TFR102",)))


def test_the_classes_passed_to_the_constructor_run_in_the_trace(tmp_path: Path) -> None:
    assert _random_findings(tmp_path, "GaussianNoise(2)") == [("noise.py", 9), ("noise.py", 17)]


def test_a_site_passing_an_unknown_object_leaves_the_attribute_unknown(tmp_path: Path) -> None:
    assert _random_findings(tmp_path, "make_noise()") == []
