"""Verify reaches a rewrite whose function needs arguments only a caller can
build (a model, an optimizer, a dataset): the script's `main()`, its
`__main__` block, or a test after `setUp` runs up to the call, the arguments
are captured there (also from a loop that would never end), and the usual
comparison runs; a hand-broken rewrite is still reported through the caller.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from tests.tf.trainer_sources import DATASET, trainer_class
from tests.tf.verify_pairs import FAST, failed, placed_text, verify_with_callers

from tfrewrite.verify.checks import Options, Request, verify
from tfrewrite.verify.run import verify_targets
from tfrewrite.verify.settings import VerifySettings, parse_verify_settings
from tfrewrite.verify.targets import pair_targets
from tfrewrite.workspace.line_names import place_lines

pytestmark = pytest.mark.tensorflow

PRELUDE = (
    DATASET
    + """

def build():
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(1)])
    return model, tf.keras.optimizers.SGD(0.05)


def train_step(model, optimizer, x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss
"""
)

DECORATED = "@tf.function(reduce_retracing=True)\ndef train_step"
WRONG_LOSS = ("tf.square(model(x) - y))", "tf.square(model(x) - y)) * 1.01")

# --- main() calls train(epoch, model, optimizer) in a loop ------------------------

MAIN = (
    PRELUDE
    + """

def train(epoch, model, optimizer):
    loss = 0.0
    for step, (x, y) in enumerate(make_dataset()):
        loss = train_step(model, optimizer, x, y)
        if step % 10 == 0:
            print("epoch", epoch, "loss", float(loss))
    return loss


def main():
    model, optimizer = build()
    for epoch in range(20):
        train(epoch, model, optimizer)


if __name__ == "__main__":
    main()
"""
)


def test_main_builds_the_arguments_of_the_training_function() -> None:
    [result] = verify_with_callers(MAIN, MAIN.replace("def train_step", DECORATED))
    assert result["verdict"] == "equivalent", result
    assert "the arguments of `train` built by `main()`" in placed_text(result)


def test_a_broken_step_is_a_mismatch_through_main() -> None:
    broken = MAIN.replace("def train_step", DECORATED).replace(*WRONG_LOSS)
    [result] = verify_with_callers(MAIN, broken)
    assert result["verdict"] == "mismatch", result
    assert "train loop: values per step" in failed(result)


# --- the __main__ block calls train(ds); train reads globals the block binds -------

MAIN_BLOCK = (
    PRELUDE
    + """

def train(ds):
    for x, y in ds:
        loss = train_step(model, optimizer, x, y)
    return loss


if __name__ == "__main__":
    model, optimizer = build()
    train_ds = make_dataset()
    train(train_ds)
"""
)


def test_the_main_block_builds_the_arguments_and_the_globals() -> None:
    [result] = verify_with_callers(MAIN_BLOCK, MAIN_BLOCK.replace("def train_step", DECORATED))
    assert result["verdict"] == "equivalent", result
    assert '`if __name__ == "__main__":` block' in placed_text(result)
    broken = MAIN_BLOCK.replace("def train_step", DECORATED).replace(*WRONG_LOSS)
    [result] = verify_with_callers(MAIN_BLOCK, broken)
    assert result["verdict"] == "mismatch", result


def test_a_main_block_that_star_imports_builds_the_arguments() -> None:
    # `from MODULE import *` is allowed in the block (module level), not in
    # the function verify runs it as: the names are bound as the block would.
    starred = MAIN_BLOCK.replace(
        "    model, optimizer = build()\n",
        "    from math import *\n\n    model, optimizer = build()\n    epochs = floor(pi)\n",
    )
    assert "from math import *" in starred
    [result] = verify_with_callers(starred, starred.replace("def train_step", DECORATED))
    assert result["verdict"] == "equivalent", result


# --- a caller whose loop never ends: the first call stops it ----------------------

FOREVER = (
    PRELUDE
    + """

def train(model, optimizer, ds):
    for x, y in ds:
        loss = train_step(model, optimizer, x, y)
    return loss


def main():
    model, optimizer = build()
    ds = make_dataset()
    while True:
        train(model, optimizer, ds)
"""
)


def test_a_caller_looping_forever_stops_at_its_first_call() -> None:
    [result] = verify_with_callers(FOREVER, FOREVER.replace("def train_step", DECORATED))
    assert result["verdict"] == "equivalent", result


def test_a_caller_that_runs_too_long_before_the_call_is_not_proven() -> None:
    slow = FOREVER.replace("    while True:\n", "    while True:\n        ds.cardinality()\n")
    slow = slow.replace(
        "        train(model, optimizer, ds)\n", "    train(model, optimizer, ds)\n"
    )
    slow_rewrite = slow.replace("def train_step", DECORATED)
    options = Options(samples=120, search=48, xla=False, caller_seconds=1.0)
    [result] = verify_with_callers(slow, slow_rewrite, options)
    assert result["verdict"] == "not proven", result
    assert "building the arguments of `train` from `main()` (line" in placed_text(result)
    assert "took longer than 1 s" in placed_text(result)
    assert "verify_harness.py" in placed_text(result)


# --- a changed function of objects, verified as a function on captured arguments ---

PREDICT = """
import numpy as np
import tensorflow as tf


class Doubler:
    def scale(self):
        return 2.0


def predict(model, x):
    scores = model(x)
    if tf.reduce_mean(scores) > 0:
        scores = scores * model.factor
    else:
        scores = scores - 1.0
    return scores


def main():
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2)])
    model.factor = Doubler().scale()
    x = np.random.default_rng(0).normal(size=(8, 3)).astype("float32")
    print(predict(model, x))
"""
PREDICT_OK = PREDICT.replace(
    """    if tf.reduce_mean(scores) > 0:
        scores = scores * model.factor
    else:
        scores = scores - 1.0
""",
    """    scores = tf.cond(
        tf.reduce_mean(scores) > 0, lambda: scores * model.factor, lambda: scores - 1.0
    )
""",
)


def test_a_function_of_a_model_is_compared_on_the_arguments_main_builds() -> None:
    [result] = verify_with_callers(PREDICT, PREDICT_OK)
    assert result["verdict"] == "equivalent", result
    assert "the arguments `main()` (line 24) builds" in place_lines(result["inputs"][0])
    # Both branches of the new tf.cond were taken: the search varied `x`.
    assert result["branches"] and all(b["true"] and b["false"] for b in result["branches"])


def test_swapped_branches_are_a_mismatch_on_the_arguments_main_builds() -> None:
    broken = PREDICT_OK.replace(
        "lambda: scores * model.factor, lambda: scores - 1.0",
        "lambda: scores - 1.0, lambda: scores * model.factor",
    )
    [result] = verify_with_callers(PREDICT, broken)
    assert result["verdict"] == "mismatch", result


def test_an_argument_of_a_class_the_rewrite_changed_is_refused() -> None:
    original = (
        PREDICT.replace("model.factor = Doubler().scale()", "doubler = Doubler()")
        .replace("scores * model.factor", "scores * doubler.scale()")
        .replace("def predict(model, x)", "def predict(doubler, model, x)")
        .replace("print(predict(model, x))", "print(predict(doubler, model, x))")
    )
    rewrite = original.replace("        return 2.0", "        return tf.constant(2.0)")
    rewrite = rewrite.replace("scores = scores - 1.0", "scores = scores - tf.constant(1.0)")
    [target] = [
        t
        for t in pair_targets("case.py", "case", original, rewrite, VerifySettings())
        if t.qualname == "predict"
    ]
    result = verify(
        Request(
            qualname="predict",
            original_source=original,
            rewrite_source=rewrite,
            path="case.py",
            options=FAST,
            caller=target.caller,
        )
    )
    assert result["verdict"] == "not proven", result
    assert "the argument `doubler` that `main()` (line 24) passes to `predict` is a `Doubler`" in (
        placed_text(result)
    )
    assert "the rewrite would be run on the original class" in placed_text(result)


# --- a test of the project builds the arguments in setUp ---------------------------

TRAINER = (
    PRELUDE
    + """

class Net(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.dense = tf.keras.layers.Dense(1)

    def call(self, x):
        return self.dense(x)


def fit(model, optimizer, data):
    for x, y in data:
        loss = train_step(model, optimizer, x, y)
    return loss
"""
)
TRAINER_TEST = """
import unittest

import tensorflow as tf

from pkg import trainer


class TrainerTest(unittest.TestCase):
    def setUp(self):
        self.model = trainer.Net()
        self.optimizer = tf.keras.optimizers.SGD(0.05)
        self.data = trainer.make_dataset()

    def test_fit(self):
        self.assertIsNotNone(trainer.fit(self.model, self.optimizer, self.data))
"""


def _project(tmp_path: Path) -> Path:
    package = tmp_path / "repo" / "pkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "trainer.py").write_text(textwrap.dedent(TRAINER))
    (package / "trainer_test.py").write_text(textwrap.dedent(TRAINER_TEST))
    return package / "trainer.py"


def test_a_test_case_builds_the_arguments_in_set_up(tmp_path: Path) -> None:
    path = _project(tmp_path)
    settings = parse_verify_settings({"samples": 60, "xla": False})
    decorated = TRAINER.replace("def train_step", DECORATED)
    cases = {
        "correct": decorated,
        "broken": decorated.replace(*WRONG_LOSS),
        # The test builds `Net` from the module on disk, not from the rewrite.
        "changed class": decorated.replace("return self.dense(x)", "return self.dense(x) * 2.0"),
    }
    targets = {
        case: next(
            t
            for t in pair_targets(str(path), "pkg.trainer", TRAINER, rewrite, settings)
            if t.qualname.startswith("loop at line")
        )
        for case, rewrite in cases.items()
    }
    assert all(t.problem is None and t.caller for t in targets.values()), targets
    results = dict(
        zip(
            targets, verify_targets(list(targets.values()), settings, tmp_path, jobs=1), strict=True
        )
    )
    assert results["correct"]["verdict"] == "equivalent", results["correct"]
    assert "`TrainerTest.test_fit` in trainer_test.py" in placed_text(results["correct"])
    assert results["broken"]["verdict"] == "mismatch", results["broken"]
    refused = results["changed class"]
    assert refused["verdict"] == "not proven", refused
    assert "the argument `model` that `TrainerTest.test_fit` in trainer_test.py" in placed_text(
        refused
    )
    assert "built from the class `Net` as it was before the rewrite" in placed_text(refused)


def test_a_caller_that_never_calls_or_fails_first_is_not_proven() -> None:
    never = PREDICT.replace(
        "    print(predict(model, x))", "    if x is None:\n        predict(model, x)"
    )
    never_ok = PREDICT_OK.replace(
        "    print(predict(model, x))", "    if x is None:\n        predict(model, x)"
    )
    [result] = verify_with_callers(never, never_ok)
    assert result["verdict"] == "not proven", result
    assert "`main()` (line 25) returned without calling `predict`" in placed_text(result)
    failing = PREDICT.replace("    x = np.random", "    model.no_such_method()\n    x = np.random")
    failing_ok = PREDICT_OK.replace(
        "    x = np.random", "    model.no_such_method()\n    x = np.random"
    )
    [result] = verify_with_callers(failing, failing_ok)
    assert result["verdict"] == "not proven", result
    assert "building the arguments of `predict` from `main()`" in placed_text(result)
    assert "raised AttributeError" in placed_text(result)
    # How to give the arguments otherwise.
    assert "verify_harness.py" in placed_text(result)


TOP_LEVEL = (
    PRELUDE
    + """

def train(model, optimizer, ds):
    for x, y in ds:
        loss = train_step(model, optimizer, x, y)
    return loss


model, optimizer = build()
print("training")
history = [train(model, optimizer, make_dataset()) for _ in range(100)]
"""
)


def test_the_top_level_builds_the_arguments() -> None:
    [result] = verify_with_callers(TOP_LEVEL, TOP_LEVEL.replace("def train_step", DECORATED))
    assert result["verdict"] == "equivalent", result
    assert "the module's top level" in placed_text(result)
    broken = TOP_LEVEL.replace("def train_step", DECORATED).replace(*WRONG_LOSS)
    [result] = verify_with_callers(TOP_LEVEL, broken)
    assert result["verdict"] == "mismatch", result


# --- a loop in a method: main() builds the object and calls agent.train(ds, 2) ----

AGENT = (
    DATASET
    + trainer_class("Agent", "train", rate="lr", parameters=", lr")
    + """

def main():
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(1)])
    agent = Agent(model, 0.05)
    agent.train(make_dataset(), 100)


if __name__ == "__main__":
    main()
"""
)
AGENT_STEP = "    @tf.function(reduce_retracing=True)\n    def train_step(self, x, y):"


def test_a_loop_in_a_method_gets_self_and_arguments_from_main() -> None:
    """`Agent(model, lr)` cannot be built from defaults; `main()` builds it
    and calls `agent.train(...)`: the stub on the class captures `self` too."""
    rewrite = AGENT.replace("    def train_step(self, x, y):", AGENT_STEP)
    [result] = verify_with_callers(AGENT, rewrite)
    assert result["verdict"] == "equivalent", result
    assert "the arguments of `Agent.train` built by `main()`" in placed_text(result)
    weights = next(c for c in result["checks"] if c["name"] == "train loop: final weights")
    assert weights["runs"] == 1  # `self.model`, held by the object
    broken = rewrite.replace(
        "tf.square(self.model(x) - y))", "tf.square(self.model(x) - y)) * 1.01"
    )
    [result] = verify_with_callers(AGENT, broken)
    assert result["verdict"] == "mismatch", result
    assert "train loop: values per step" in failed(result)


# --- a changed method whose class needs arguments: main() builds the object -------

PER_AGENT = """
import numpy as np
import tensorflow as tf


class Agent(tf.keras.layers.Layer):
    def __init__(self, units, scale):
        super().__init__()
        self.dense = tf.keras.layers.Dense(units)
        self.scale = scale

    def build(self, input_shape):
        self.dense.build(input_shape)

    @tf.function
    def per_loss(self, x):
        error = tf.reduce_mean(tf.abs(self.dense(x))) * self.scale
        if error > 0.5:
            loss = error
        else:
            loss = tf.square(error)
        return loss


def main():
    agent = Agent(3, make_scale())
    agent.build((None, 4))
    agent.per_loss(tf.ones((2, 4)))


def make_scale():
    return 2.0
"""
PER_AGENT_COND = "        loss = tf.cond(error > 0.5, lambda: error, lambda: tf.square(error))\n"
PER_AGENT_IF = (
    "        if error > 0.5:\n            loss = error\n        else:\n"
    "            loss = tf.square(error)\n"
)


def test_a_method_whose_class_needs_arguments_gets_the_object_main_builds() -> None:
    """`Agent(units, scale)` has no defaults and no guessable arguments:
    `main()` builds one (under fixed seeds, on both sides alike) and the
    method is compared on it."""
    rewrite = PER_AGENT.replace(PER_AGENT_IF, PER_AGENT_COND)
    assert rewrite != PER_AGENT
    results = verify_with_callers(PER_AGENT, rewrite)
    [result] = [r for r in results if r["function"] == "Agent.per_loss"]
    assert result["verdict"] == "equivalent", result
    assert "`Agent` was built by `main()`" in placed_text(result)
    broken = rewrite.replace("lambda: error, lambda", "lambda: error * 1.01, lambda")
    results = verify_with_callers(PER_AGENT, broken)
    [result] = [r for r in results if r["function"] == "Agent.per_loss"]
    assert result["verdict"] == "mismatch", result


# --- a method the script reaches only through another method of its class ---------

THROUGH = (
    DATASET
    + """

class Agent:
    def __init__(self, model, scale):
        self.model = model
        self.scale = scale
        self.optimizer = tf.keras.optimizers.SGD(0.05)

    def update(self, x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(self.model(x) - y)) * self.scale
            if tf.shape(x)[0] < 16:  # the short last batch: both branches run
                loss = tf.sqrt(loss)
            else:
                loss = loss * 2.0
        grads = tape.gradient(loss, self.model.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))
        return loss

    def train(self, x, y):
        return float(self.update(x, y))


def main():
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(1)])
    agent = Agent(model, 0.5)
    for x, y in make_dataset():
        agent.train(x, y)


if __name__ == "__main__":
    main()
"""
)
THROUGH_IF = (
    "            if tf.shape(x)[0] < 16:  # the short last batch: both branches run\n"
    "                loss = tf.sqrt(loss)\n            else:\n"
    "                loss = loss * 2.0\n"
)
THROUGH_COND = (
    "            loss = tf.cond(tf.shape(x)[0] < 16, lambda: tf.sqrt(loss), lambda: loss * 2.0)\n"
)


def test_a_train_step_called_through_another_method_is_replayed_in_the_script_loop() -> None:
    """`main()` loops over `agent.train(x, y)`, and `train` calls the
    rewritten step `self.update`: the loop of `main()` proves it."""
    rewrite = THROUGH.replace(THROUGH_IF, THROUGH_COND)
    assert rewrite != THROUGH
    [result] = verify_with_callers(THROUGH, rewrite)
    line = THROUGH.splitlines().index("    for x, y in make_dataset():") + 1
    assert result["function"] == f"loop at line {line} in `main`", result["function"]
    assert result["verdict"] == "equivalent", result
    broken = rewrite.replace("lambda: loss * 2.0)", "lambda: loss * 2.1)")
    [result] = verify_with_callers(THROUGH, broken)
    assert result["verdict"] == "mismatch", result


ONCE = (
    DATASET
    + """

class Agent:
    def __init__(self, model, scale):
        self.model = model
        self.scale = scale

    def update(self, x, y):
        loss = tf.reduce_mean(tf.square(self.model(x) - y)) * self.scale
        if loss > 1.0:
            loss = tf.sqrt(loss)
        else:
            loss = loss * 2.0
        return loss

    def evaluate(self, x, y):
        return float(self.update(x, y))


def main():
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(1)])
    agent = Agent(model, 0.5)
    x, y = next(iter(make_dataset()))
    print(agent.evaluate(x, y))


if __name__ == "__main__":
    main()
"""
)
ONCE_IF = (
    "        if loss > 1.0:\n            loss = tf.sqrt(loss)\n        else:\n"
    "            loss = loss * 2.0\n"
)
ONCE_COND = "        loss = tf.cond(loss > 1.0, lambda: tf.sqrt(loss), lambda: loss * 2.0)\n"


def test_a_method_reached_through_another_gets_the_arguments_the_script_passes() -> None:
    """The inputs verify makes do not fit the model (3 features): `update`
    is compared on the `x, y` that `main()` passes down through
    `agent.evaluate`, on an object each side builds from its own class."""
    rewrite = ONCE.replace(ONCE_IF, ONCE_COND)
    assert rewrite != ONCE
    [result] = [r for r in verify_with_callers(ONCE, rewrite) if r["function"] == "Agent.update"]
    assert result["verdict"] == "equivalent", result
    assert "the arguments `main()` (line 34) builds" in placed_text(result)
    broken = rewrite.replace("loss * 2.0)", "loss * 2.5)")
    [result] = [r for r in verify_with_callers(ONCE, broken) if r["function"] == "Agent.update"]
    assert result["verdict"] == "mismatch", result


def test_a_loop_in_a_method_reached_through_another_object_is_replayed() -> None:
    """`Agent(units)` needs an argument; the main block builds one and calls
    `runner.run()`, which calls `self.agent.update()`: the replay of the loop
    in `update` gets that object."""
    from tests.test_verify_callers import THROUGH_ANOTHER_OBJECT as SOURCE

    rewrite = SOURCE.replace("self.model(x)", "self.model(x, training=True)")
    [result] = verify_with_callers(SOURCE, rewrite)
    assert result["verdict"] == "equivalent", result
    broken = SOURCE.replace("tf.square(self.model(x)))", "tf.square(self.model(x))) * 1.01")
    [result] = verify_with_callers(SOURCE, broken)
    assert result["verdict"] == "mismatch", result
