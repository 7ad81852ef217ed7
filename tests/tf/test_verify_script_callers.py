"""Verify builds what a class's method needs from the project's own script:
`agents.py` defines `Critic(model, scale)` and `Trainer(model)`, and
`main.py`, which imports them, builds the model, the objects and the data.
Its code runs up to the construction (or the call), the object is captured
and given the class as each side's source has it, and the usual comparison
runs; a hand-broken rewrite is still reported through the script."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from tests.tf.trainer_sources import DATASET, trainer_class
from tests.tf.verify_pairs import placed_text

from tfrewrite.verify.run import verify_targets
from tfrewrite.verify.settings import parse_verify_settings
from tfrewrite.verify.targets import pair_targets

pytestmark = pytest.mark.tensorflow

AGENTS = """
import tensorflow as tf


class Critic:
    def __init__(self, model, scale):
        self.model = model
        self.scale = scale

    def value_loss(self, states, returns):
        error = tf.reduce_mean(tf.abs(self.model(states) - returns)) * self.scale
        if error > 0.5:
            loss = error
        else:
            loss = tf.square(error)
        return loss
"""
AGENTS += trainer_class("Trainer", "fit")

MAIN = (
    DATASET.replace(
        "import tensorflow as tf\n",
        "import tensorflow as tf\n\nfrom pkg.agents import Critic, Trainer\n",
    )
    + """

def main():
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(1)])
    critic = Critic(model, 2.0)
    print(float(critic.value_loss(tf.ones((2, 3)), tf.zeros((2, 1)))))
    Trainer(model).fit(make_dataset(), 100)


if __name__ == "__main__":
    main()
"""
)

IF = (
    "        if error > 0.5:\n            loss = error\n        else:\n"
    "            loss = tf.square(error)\n"
)
COND = "        loss = tf.cond(error > 0.5, lambda: error, lambda: tf.square(error))\n"
STEP = "    def train_step(self, x, y):"
DECORATED = "    @tf.function(reduce_retracing=True)\n    def train_step(self, x, y):"


def _project(tmp_path: Path) -> Path:
    package = tmp_path / "repo" / "pkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "agents.py").write_text(textwrap.dedent(AGENTS))
    (package / "main.py").write_text(textwrap.dedent(MAIN))
    return package / "agents.py"


def _results(tmp_path: Path, rewrites: dict[str, str], qualname: str) -> dict[str, dict]:
    path = _project(tmp_path)
    settings = parse_verify_settings({"samples": 60, "search": 48, "xla": False})
    targets = {}
    for case, rewrite in rewrites.items():
        assert rewrite != AGENTS
        found = pair_targets(str(path), "pkg.agents", AGENTS, rewrite, settings)
        targets[case] = next(t for t in found if t.qualname.startswith(qualname))
        assert targets[case].problem is None, targets[case].problem
    results = verify_targets(list(targets.values()), settings, tmp_path, jobs=1)
    return dict(zip(targets, results, strict=True))


def test_a_method_gets_its_object_from_the_script_that_builds_it(tmp_path: Path) -> None:
    """`Critic(model, scale)` takes a model: no defaults, nothing to guess.
    `main()` of main.py builds one; both sides get it, each with its own class."""
    rewrite = AGENTS.replace(IF, COND)
    results = _results(
        tmp_path,
        {
            "correct": rewrite,
            "broken": rewrite.replace("lambda: error, lambda", "lambda: error * 1.01, lambda"),
        },
        "Critic.value_loss",
    )
    assert results["correct"]["verdict"] == "equivalent", results["correct"]
    assert "`Critic` was built by `main()` (line 17 of main.py)" in placed_text(results["correct"])
    assert results["broken"]["verdict"] == "mismatch", results["broken"]


def test_an_object_whose_constructor_the_rewrite_changed_is_not_built_by_the_script(
    tmp_path: Path,
) -> None:
    """main.py would build the rewrite's `Critic` with the `__init__` on disk."""
    rewrite = AGENTS.replace(IF, COND).replace(
        "        self.scale = scale\n", "        self.scale = float(scale)\n"
    )
    [result] = _results(tmp_path, {"changed": rewrite}, "Critic.value_loss").values()
    assert result["verdict"] == "not proven", result
    assert "cannot construct `Critic()`" in placed_text(result)


def test_a_loop_in_a_method_is_replayed_on_what_the_script_passes(tmp_path: Path) -> None:
    """`Trainer.fit(dataset, epochs)`'s loop is replayed with the object and
    the dataset `main()` of main.py builds: the rewrite's decorated step runs
    on the rewrite's side, so a broken one is a mismatch."""
    rewrite = AGENTS.replace(STEP, DECORATED)
    broken = rewrite.replace(
        "tf.square(self.model(x) - y))", "tf.square(self.model(x) - y)) * 1.01"
    )
    results = _results(tmp_path, {"correct": rewrite, "broken": broken}, "loop at")
    assert results["correct"]["verdict"] == "equivalent", results["correct"]
    assert "built by `main()` (line 19 of main.py)" in placed_text(results["correct"])
    assert results["broken"]["verdict"] == "mismatch", results["broken"]


def test_a_script_failing_before_the_construction_says_why(tmp_path: Path) -> None:
    """The script's own failure is the reason given, with where it raised."""
    path = _project(tmp_path)
    script = path.parent / "main.py"
    script.write_text(
        script.read_text().replace(
            "    model = tf.keras.Sequential",
            '    open("labels.csv").read()\n    model = tf.keras.Sequential',
            1,
        )
    )
    settings = parse_verify_settings({"samples": 60, "search": 48, "xla": False})
    rewrite = AGENTS.replace(IF, COND)
    found = pair_targets(str(path), "pkg.agents", AGENTS, rewrite, settings)
    target = next(t for t in found if t.qualname == "Critic.value_loss")
    [result] = verify_targets([target], settings, tmp_path, jobs=1)
    assert result["verdict"] == "not proven", result
    text = placed_text(result)
    assert "`main()` (line 18 of main.py) raised FileNotFoundError" in text
    assert "before building `Critic`" in text
