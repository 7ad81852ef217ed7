"""Finding the code that builds a function's arguments (no TensorFlow): the
script's `main()`, its `__main__` block, its top level, another function
without parameters, or a test of the project after its `setUp`; and which
targets get one."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

from tfrewrite.verify import caller_capture, callers
from tfrewrite.verify.settings import VerifySettings
from tfrewrite.verify.targets import pair_targets
from tfrewrite.workspace.line_names import place_lines

TRAIN = """
import tensorflow as tf

def train_step(model, optimizer, x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss

def train(epoch, model, optimizer):
    for x, y in make_dataset():
        loss = train_step(model, optimizer, x, y)
    return loss
"""

MAIN = (
    TRAIN
    + """
def main():
    model, optimizer = build()
    for epoch in range(20):
        train(epoch, model, optimizer)

if __name__ == "__main__":
    main()
"""
)


def _caller(source: str, function: str = "train") -> callers.Caller | None:
    return callers.same_file_caller(textwrap.dedent(source), function)


def test_main_is_the_caller() -> None:
    found = _caller(MAIN)
    assert found is not None
    assert (found.kind, found.name, found.line) == ("function", "main", 19)
    assert place_lines(found.describe()) == "`main()` (line 19)"


def test_the_main_block_is_the_caller() -> None:
    found = _caller(TRAIN + '\nif __name__ == "__main__":\n    ds = load()\n    train(0, m, o)\n')
    assert found is not None and found.kind == "main" and found.line == 18
    assert "__main__" in found.describe()


def test_the_top_level_is_the_caller() -> None:
    found = _caller(TRAIN + "\nmodel = build()\nhistory = train(0, model, opt)\n")
    assert found is not None and (found.kind, found.line) == ("module", 17)


def test_a_function_without_parameters_is_a_caller_and_main_argv_too() -> None:
    found = _caller(TRAIN + "\ndef run(verbose=False):\n    train(0, m, o)\n")
    assert found is not None and (found.kind, found.name, found.argv) == ("function", "run", False)
    found = _caller(TRAIN + "\ndef main(argv):\n    train(0, m, o)\n")
    assert found is not None and (found.name, found.argv) == ("main", True)


def test_a_function_with_parameters_is_no_caller() -> None:
    assert _caller(TRAIN + "\ndef run(data):\n    train(0, m, data)\n") is None
    assert _caller(TRAIN) is None


def test_the_main_block_code_runs_up_to_the_call_with_its_names_global() -> None:
    source = TRAIN + (
        '\nif __name__ == "__main__":\n    model = build()\n    ds = load()\n'
        "    for epoch in range(5):\n        train(epoch, model, ds)\n    save(model)\n"
    )
    found = _caller(source)
    assert found is not None
    text, bound = caller_capture.caller_source(textwrap.dedent(source), found)
    function = ast.parse(text).body[-1]
    assert isinstance(function, ast.FunctionDef) and function.name == caller_capture.CALLER
    body = ast.unparse(function)
    assert "global ds, epoch, model" in body and "save(model)" not in body
    assert bound == ["ds", "epoch", "model"]


def _project(tmp_path: Path, test: str, package: bool = True) -> Path:
    folder = tmp_path / "repo" / "pkg"
    folder.mkdir(parents=True)
    if package:
        (folder / "__init__.py").write_text("")
    (folder / "trainer.py").write_text(textwrap.dedent(TRAIN))
    (folder / "trainer_test.py").write_text(textwrap.dedent(test))
    return folder / "trainer.py"


TEST = """
import unittest
{import_line}

class TrainerTest(unittest.TestCase):
    def setUp(self):
        self.model, self.optimizer = build()

    def test_helper(self):
        self.assertTrue(True)

    def test_train(self):
        {call}(0, self.model, self.optimizer)
"""


def test_a_test_case_that_imports_the_module_is_a_caller(tmp_path: Path) -> None:
    path = _project(
        tmp_path, TEST.format(import_line="from pkg import trainer", call="trainer.train")
    )
    found = callers.find_caller(str(path), path.read_text(), "train")
    assert found is not None
    assert (found.kind, found.name, found.line) == ("test", "TrainerTest.test_train", 13)
    assert found.path.endswith("trainer_test.py") and "class TrainerTest" in found.source
    assert found.describe() == (
        "`TrainerTest.test_train` in trainer_test.py (line 13, after `TrainerTest.setUp`)"
    )


def test_every_import_spelling_is_followed(tmp_path: Path) -> None:
    spellings = [
        ("import pkg.trainer as tr", "tr.train"),
        ("import pkg.trainer", "pkg.trainer.train"),
        ("from pkg.trainer import train as run", "run"),
        ("from . import trainer", "trainer.train"),
        ("from .trainer import train", "train"),
    ]
    for i, (line, call) in enumerate(spellings):
        path = _project(tmp_path / str(i), TEST.format(import_line=line, call=call))
        found = callers.test_caller(str(path), "train")
        assert found is not None, line
    # Namespace folders (no __init__.py) from the repository's top, and a plain import beside it.
    path = _project(
        tmp_path / "ns",
        TEST.format(import_line="from pkg import trainer", call="trainer.train"),
        package=False,
    )
    assert callers.test_caller(str(path), "train") is not None
    path = _project(
        tmp_path / "plain",
        TEST.format(import_line="import trainer", call="trainer.train"),
        package=False,
    )
    assert callers.test_caller(str(path), "train") is not None


def test_a_test_of_another_module_is_no_caller(tmp_path: Path) -> None:
    path = _project(
        tmp_path, TEST.format(import_line="from other import trainer", call="trainer.train")
    )
    assert callers.test_caller(str(path), "train") is None


def _targets(original: str, rewrite: str, path: str = "case.py") -> list:
    return pair_targets(path, "case", original, rewrite, VerifySettings())


def test_a_loop_in_a_function_with_parameters_gets_its_caller() -> None:
    rewrite = MAIN.replace("def train_step", "@tf.function\ndef train_step")
    [target] = _targets(textwrap.dedent(MAIN), textwrap.dedent(rewrite))
    assert target.problem is None
    assert target.caller is not None and target.caller["name"] == "main"
    assert "with the arguments `main()` (line 19) builds" in place_lines(target.reason)


def test_without_a_caller_the_harness_is_asked_for() -> None:
    rewrite = TRAIN.replace("def train_step", "@tf.function\ndef train_step")
    [target] = _targets(textwrap.dedent(TRAIN), textwrap.dedent(rewrite))
    assert target.caller is None
    assert target.problem is not None
    assert "no `main()`, `__main__` block, top-level code or test of the project calls" in (
        target.problem
    )
    assert 'def build(): return {"epoch": ..., "model": ..., "optimizer": ...}' in target.problem


HELPER = """
import tensorflow as tf

def predict(model, x):
    scores = model(x)
    if tf.reduce_mean(scores) > 0:
        scores = scores * 2.0
    return scores

def main():
    model = build()
    predict(model, data())
"""


def test_a_changed_function_of_objects_gets_its_caller() -> None:
    rewrite = HELPER.replace(
        "    if tf.reduce_mean(scores) > 0:\n        scores = scores * 2.0\n",
        "    scores = tf.cond(tf.reduce_mean(scores) > 0, lambda: scores * 2.0, lambda: scores)\n",
    )
    [target] = _targets(textwrap.dedent(HELPER), textwrap.dedent(rewrite))
    assert target.problem is None and target.caller is not None
    assert target.caller["function"] == "predict" and target.caller["name"] == "main"
    # What is said when the caller does not give the arguments after all.
    assert "verify_harness" in target.caller["hint"]


def test_changed_definitions_are_changed_functions_and_their_classes() -> None:
    before = (
        "class A:\n    def f(self):\n        return 1\n\n"
        "class B:\n    def g(self):\n        return 2\n"
    )
    after = before.replace("return 1", "return 3")
    assert caller_capture.changed_definitions(before, after) == {"A", "A.f"}
    assert caller_capture.changed_definitions(before, None) == set()


AGENT = """
class Agent:
    def __init__(self, env):
        self.env = env

    def train(self, episodes):
        for episode in range(episodes):
            self.step()
"""


def test_a_method_is_called_by_code_that_builds_its_object() -> None:
    """`agent = Agent(env); agent.train(10)`: the caller of `Agent.train`
    (its object is captured as `self`); a call on an object the code did not
    build there, or before building one, is none."""
    main = AGENT + "\ndef main():\n    agent = Agent(make_env())\n    agent.train(10)\n"
    found = callers.find_caller("agent.py", main, "Agent.train")
    assert found is not None and (found.kind, found.name, found.line) == ("function", "main", 12)
    block = AGENT + '\nif __name__ == "__main__":\n    a = Agent(1)\n    a.train(3)\n'
    found = callers.find_caller("agent.py", block, "Agent.train")
    assert found is not None and found.kind == "main"
    top = AGENT + "\nagent = Agent(1)\nagent.train(3)\n"
    found = callers.find_caller("agent.py", top, "Agent.train")
    assert found is not None and (found.kind, found.line) == ("module", 11)
    elsewhere = AGENT + "\ndef main():\n    trainer.train(10)\n"
    assert callers.find_caller("agent.py", elsewhere, "Agent.train") is None
    assert callers.find_caller("agent.py", main, "Agent.missing") is None


def test_a_caller_that_fails_names_the_line_of_the_script() -> None:
    """The script's own code fails before the call: the result says which
    line, so the user sees what to fix or what a harness must build."""
    source = textwrap.dedent(
        AGENT
        + "\n\ndef build():\n    return {}['model']\n"
        + "\n\ndef main():\n    agent = Agent(build())\n    agent.train(3)\n"
    )
    found = callers.find_caller("agent.py", source, "Agent.train")
    assert found is not None
    try:
        caller_capture.capture_arguments(found, source, "agent.py", None, "original", seconds=10)
    except caller_capture.CallerProblem as err:
        message = str(err)
    else:
        raise AssertionError("no CallerProblem")
    assert "raised KeyError: 'model' at agent.py, line 12" in message, message


def test_the_callers_of_a_method_call_it() -> None:
    """A method's callers are the functions that call it, not every method
    of its class; a Keras `call` is also called through its object."""
    from tfrewrite.verify.targets import _callers

    source = textwrap.dedent(
        """
        class Agent:
            def __init__(self, units):
                self.units = units

            def per_loss(self, x):
                return x

            def learn(self, x):
                return self.per_loss(x)

            def call(self, x):
                return x


        def loss(y, p):
            return Agent(3)(y)
        """
    )
    assert _callers(source, "Agent.per_loss") == ["Agent.learn"]
    assert _callers(source, "Agent.call") == ["loss"]


THROUGH = """
class Agent:
    def __init__(self, model):
        self.model = model

    def update(self, x, y):
        return self.model(x) - y

    def learn(this, x, y):
        return this.update(x, y)

    def train(self, x, y):
        return self.learn(x, y)

    def show(self):
        return self.model


def main():
    agent = Agent(build())
    agent.train(1, 2)
"""


def test_a_method_is_reached_through_the_methods_that_call_it_on_self() -> None:
    """`agent.train(x, y)` reaches `Agent.update` through `train` and
    `learn` (whatever the name of its first parameter); `show` does not."""
    tree = ast.parse(THROUGH)
    assert callers.through_methods(tree, "Agent", "update") == ["learn", "train"]
    assert callers.through_methods(tree, "Agent", "show") == []
    assert callers.through_methods(tree, "Missing", "update") == []
    found = callers.same_file_caller(THROUGH, "Agent.update")
    assert found is not None and (found.kind, found.name, found.line) == ("function", "main", 21)


def test_a_changed_method_gets_the_script_caller_as_a_fallback() -> None:
    """Compared on made inputs first; if they do not fit, on the arguments
    the script passes down (`main()` through `agent.train`)."""
    rewrite = THROUGH.replace("return self.model(x) - y", "return -(y - self.model(x))")
    targets = {t.qualname: t for t in _targets(THROUGH, rewrite)}
    caller = targets["Agent.update"].caller
    assert caller is not None and caller["fallback"] and caller["name"] == "main"


NESTED_STEP = """
import tensorflow as tf

def train_phase_two(hparams, data):
    model = tf.keras.models.load_model(hparams.model_dir + "/phase_one")
    optimizer = tf.keras.optimizers.Adam()

    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    for x, y in data:
        train_step(x, y)
"""


def test_a_harness_for_a_function_with_its_own_step_loop_replays_the_loop() -> None:
    """The harness gives `train_phase_two` its arguments: its loop is replayed
    with them, not the function run as a train step on harness batches."""
    from tfrewrite.verify.settings import parse_verify_settings

    rewrite = NESTED_STEP.replace("    def train_step", "    @tf.function\n    def train_step")
    settings = parse_verify_settings({"harness": {"case:train_phase_two": "phase_two:build"}})
    [target] = pair_targets(
        "case.py", "case", textwrap.dedent(NESTED_STEP), textwrap.dedent(rewrite), settings
    )
    assert target.loop is not None and target.loop["step"] == "train_step"
    assert target.harness == "phase_two:build" and target.problem is None
    assert target.qualname == "loop at line 15 in `train_phase_two`"


THROUGH_ANOTHER_OBJECT = """
import numpy as np
import tensorflow as tf


class Agent:
    def __init__(self, units):
        self.model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(units)])
        self.optimizer = tf.keras.optimizers.SGD(0.05)

    def update(self, epochs=3):
        x = tf.constant(np.linspace(-1.0, 1.0, 12, dtype="float32").reshape(4, 3))
        for _ in range(epochs):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(self.model(x)))
            grads = tape.gradient(loss, self.model.trainable_variables)
            self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))


class Runner:
    def __init__(self, agent):
        self.agent = agent

    def run(self):
        self.agent.update()


if __name__ == "__main__":
    agent = Agent(units=2)
    runner = Runner(agent)
    runner.run()
"""


def test_a_method_reached_through_another_object_is_called_by_the_main_block() -> None:
    """`runner.run()` calls `self.agent.update()`: the main block, which
    builds the `Agent`, runs until the method is reached."""
    found = callers.find_caller("case.py", THROUGH_ANOTHER_OBJECT, "Agent.update")
    assert found is not None and found.kind == "main"
    assert found.line == THROUGH_ANOTHER_OBJECT.splitlines().index("    runner.run()") + 1
    # The loop in `Agent.update` takes no argument, but `Agent(units)` needs one:
    # its replay gets the object the main block builds.
    rewrite = THROUGH_ANOTHER_OBJECT.replace("self.model(x)", "self.model(x, training=True)")
    targets = pair_targets("case.py", "case", THROUGH_ANOTHER_OBJECT, rewrite, VerifySettings())
    [loop] = [t for t in targets if t.loop is not None]
    assert loop.caller is not None and loop.caller["kind"] == "main"
