"""Check mode parses only the functions the selected rules can need
(`pipeline/relevant_code.py`): inert functions are blanked out with every
line and column of the rest kept, each reason to keep a function keeps it,
and the findings are those of the whole file."""

from __future__ import annotations

import dataclasses
import textwrap

import libcst as cst
import pytest

from tfrewrite.facts.index import build_index
from tfrewrite.facts.project import compute_facts
from tfrewrite.pipeline import relevant_code, rule_pass
from tfrewrite.pipeline.engine import InputFile, RunOptions
from tfrewrite.pipeline.relevant_code import prune, relevance
from tfrewrite.pipeline.rule_pass import FileJob, process_file
from tfrewrite.rules import RULE_CODES

ALL = tuple(RULE_CODES)


def _facts(source: str, path: str = "m.py"):
    index = build_index(source, path, "m")
    return index, compute_facts([index]).for_path(path)


def _reasons(source: str, codes: tuple[str, ...] = ALL) -> dict[str, str | None]:
    source = textwrap.dedent(source)
    index, traced = _facts(source)
    return relevance(source, index, traced, codes)


def _pruned(source: str, codes: tuple[str, ...] = ALL) -> str | None:
    index, traced = _facts(source)
    pruned = prune(source, index, traced, codes)
    return None if pruned is None else pruned.code


PLAIN = """\
import tensorflow as tf
import numpy as np


@tf.function
def step(x):
    return x * 2


def helper_one(a):
    # a comment inside
    return a + 1


class Tests:
    \"\"\"A docstring stays.\"\"\"

    @pytest.mark.parametrize(
        "x",
        [1, 2],
    )
    def test_one(self, x):
        assert x


    def test_two(self):
        assert np.ones(3).sum() == 3
"""


def test_inert_functions_are_blanked_and_every_other_line_kept() -> None:
    code = _pruned(PLAIN)
    assert code is not None
    before, after = PLAIN.splitlines(), code.splitlines()
    assert len(before) == len(after)
    for old, new in zip(before, after, strict=True):
        assert new in (old, "", "    pass")  # a kept line is unchanged, a pruned one empty
    assert after.count("    pass") == 1  # every method of `Tests` is gone
    assert "def step(x):" in code and "return x * 2" in code
    assert "helper_one" not in code and "a comment inside" not in code
    assert "@pytest.mark.parametrize" not in code and '"x",' not in code
    assert "test_two" not in code
    assert '"""A docstring stays."""' in code
    cst.parse_module(code)


def test_a_class_left_without_statements_gets_pass() -> None:
    source = "import tensorflow as tf\n\nclass A:\n    def f(self):\n        return 1\n\n"
    source += "@tf.function\ndef g(x):\n    return x\n"
    code = _pruned(source)
    assert code is not None
    assert code.splitlines()[3] == "    pass"
    assert code.count("\n") == source.count("\n")
    cst.parse_module(code)


def test_crlf_line_breaks_stay() -> None:
    source = "import tensorflow as tf\r\n\r\ndef f():\r\n    return 1\r\n\r\n"
    source += "@tf.function\r\ndef g(x):\r\n    return x\r\n"
    code = _pruned(source)
    assert code is not None and code.count("\r\n") == source.count("\r\n")
    assert "def f" not in code


def test_nothing_to_leave_out_and_unknown_rules_keep_the_whole_file() -> None:
    source = "import tensorflow as tf\n\n@tf.function\ndef g(x):\n    return x\n"
    assert _pruned(source) is None
    assert _pruned(PLAIN, (*ALL, "TFR999")) is None


HEADER = """
import numpy as np
import tensorflow as tf
from keras import ops
CONFIG = {"lr": 0.1}
"""

# (what the function does, the function; another that calls a traced `step`
# where it says so), the reason it is kept, the rules selected.
REASONS = [
    (
        "@tf.function\ndef target(x):\n    return x\n",
        "runs traced",
        ALL,
    ),
    (
        "def target(x):\n    with tf.GradientTape() as tape:\n        y = x * x\n    return y\n",
        "opens a GradientTape",
        ALL,
    ),
    (
        "def target(ds):\n    return tf.data.Dataset.range(3).map(lambda x: x + 1)\n",
        "hands code to a tracer",
        ALL,
    ),
    (
        "def target():\n    global CONFIG\n    CONFIG = {}\n",
        "declares global or nonlocal names",
        ALL,
    ),
    (
        "def target():\n    tf.config.run_functions_eagerly(True)\n",
        "switches tf.function off",
        ALL,
    ),
    (
        "def target(v):\n    CONFIG['lr'] = v\n",
        "writes module or class state",
        ("TFR201",),
    ),
    (
        "def target(batches):\n    accs = []\n    for b in batches:\n"
        "        accs.append(b)\n    return np.mean(accs)\n",
        "averages beside a loop",
        ("TFR306",),
    ),
    (
        "def target():\n    model = tf.keras.Sequential([])\n    return model\n",
        "assigns a model, a lambda or a batched dataset",
        ("TFR303",),
    ),
    (
        "def target(x):\n    return ops.add(x, 1)\n",
        "names keras.ops",
        ("TFR101",),
    ),
    (
        "def target():\n    np.random.seed(0)\n",
        "calls a seed function",
        ALL,
    ),
]


@pytest.mark.parametrize(("function", "reason", "codes"), REASONS)
def test_each_reason_keeps_its_function(function: str, reason: str, codes: tuple[str, ...]) -> None:
    source = HEADER + "\n" + function + "\n\ndef other(x):\n    return x + 1\n"
    source += "\n\n@tf.function\ndef anchor(x):\n    return x\n"
    found = _reasons(source, codes)
    assert found["target"] == reason
    assert found["other"] is None


def test_callers_of_traced_code_and_its_callees_are_kept() -> None:
    found = _reasons(
        """
        import tensorflow as tf

        @tf.function
        def step(x):
            double = scale  # named, not called: not traced itself
            return double(x)

        def scale(x):
            return x * 2

        def loop(xs):
            for x in xs:
                step(x)

        def unrelated():
            return 3
        """
    )
    assert found["step"] == "runs traced"
    assert found["loop"] == "calls `step`"
    assert found["scale"] == "named by `step`"
    assert found["unrelated"] is None


CALLER_OF_TRACED = """
    import tensorflow as tf

    @tf.function
    def step(x):
        if x > 0:
            return x
        return -x

    def loop(xs):
        for x in xs:
            step(x)
    """


@pytest.mark.parametrize("code", ["TFR101", "TFR102", "TFR104", "TFR107", "TFR204"])
def test_rules_that_never_read_callers_leave_callers_out(code: str) -> None:
    """A rule on traced code alone learns what callers pass from pass-1
    facts: with only such rules selected, a caller is blanked."""
    found = _reasons(CALLER_OF_TRACED, (code,))
    assert found["step"] == "runs traced"
    assert found["loop"] is None


@pytest.mark.parametrize("code", ["TFR203", "TFR302", "TFR201"])
def test_rules_that_read_callers_keep_them(code: str) -> None:
    found = _reasons(CALLER_OF_TRACED, ("TFR101", code))
    assert found["loop"] == "calls `step`"


def test_in_a_class_with_a_kept_method_what_sets_up_self_is_kept() -> None:
    found = _reasons(
        """
        import tensorflow as tf

        class Noisy(tf.keras.layers.Layer):
            def __init__(self):
                super().__init__()
                self.reset()

            def reset(self):
                self.eps = 0.0

            def configure(self, a, b):
                self.a, self.b = a, b

            def restore(self, first, rest):
                first, *self.rest = rest

            def describe(self):
                return "layer"

            @tf.function
            def call(self, x):
                return x * self.eps

        def poke(layer):
            layer.reset()
        """
    )
    assert found["Noisy.call"] == "runs traced"
    assert found["Noisy.__init__"].startswith("sets up `self`")
    assert found["Noisy.reset"] is not None
    assert found["Noisy.configure"].startswith("sets up `self`")  # a tuple target
    assert found["Noisy.restore"].startswith("sets up `self`")  # a starred one
    assert found["Noisy.describe"] is None
    assert found["poke"] == "names a method `Noisy.__init__` calls"


def test_every_method_of_a_class_kept_code_names_stays() -> None:
    found = _reasons(
        """
        import tensorflow as tf

        class Net:
            def call(self, x):
                return x

            def describe(self):
                return "net"

        @tf.function
        def step(x):
            return Net().call(x)
        """
    )
    assert found["Net.describe"] == "its class is named by `step`"


def test_code_at_module_level_keeps_what_it_names() -> None:
    found = _reasons(
        """
        import tensorflow as tf

        def make_dataset():
            return [1, 2]

        def unused():
            return 0

        @tf.function
        def step(x):
            return x

        for batch in make_dataset():
            step(batch)
        """
    )
    assert found["make_dataset"] == "named by `module-level code`"
    assert found["unused"] is None


# -- the engine: findings of a pruned check are the whole file's --------------------

BIG = """\
import random

import numpy as np
import tensorflow as tf

SCALE = 1.0


class Suite:
    def setUp(self):
        self.values = [1, 2, 3]

{tests}

    def test_hazard(self):
        @tf.function
        def noisy(x):
            if tf.reduce_sum(x) > 0:
                x = x + np.random.normal()
            print("tracing", x)
            return x * SCALE + random.random()

        return noisy(tf.constant([1.0]))


def rescale(value):
    global SCALE
    SCALE = value
"""


def _big() -> str:
    tests = "\n".join(
        f"    def test_{i}(self):\n        x = np.arange({i})\n"
        f"        assert x.sum() == {i * (i - 1) // 2}\n"
        for i in range(200)
    )
    return BIG.format(tests=tests)


def _check(source: str, prune_code: bool, path: str = "suite_test.py"):
    index, traced = _facts(source, path)
    options = RunOptions(rule_codes=ALL, root=".", prune_inert_code=prune_code)
    return process_file(FileJob(InputFile(path, source), index, traced, options))


def _keys(result):
    return [
        (f.start, f.end, f.code, f.message, f.fix and (f.fix.applicability, f.fix.message))
        for f in result.findings
    ]


def test_a_hazard_deep_in_a_big_file_is_found_as_in_the_whole_file(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    source = _big()
    parsed: list[int] = []
    parse = rule_pass._parse

    def counting(code: str) -> cst.Module:
        parsed.append(len(code.strip()))
        return parse(code)

    monkeypatch.setattr(rule_pass, "_parse", counting)
    whole = _check(source, prune_code=False)
    pruned = _check(source, prune_code=True)
    assert whole.error is None and pruned.error is None
    assert {f.code for f in whole.findings} >= {"TFR101", "TFR102", "TFR106", "TFR201"}
    assert _keys(pruned) == _keys(whole)
    assert pruned.source == source  # reports show the file as it is
    assert parsed[-1] < parsed[0] / 5  # the 200 tests were left out


def test_simulated_fix_rounds_see_the_facts_of_what_was_left_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A loss's `@tf.function` (TFR301) makes `check` run the fix rounds,
    which index the pruned code again: the functions left out keep their
    facts there."""
    source = textwrap.dedent(
        """
        import tensorflow as tf
        import numpy as np
        from helpers import tools

        def unrelated(a):
            import helpers.extra as extra
            return extra.combine(a, tools.twice(a))

        @tf.function
        def my_loss(y_true, y_pred):
            if tf.reduce_mean(y_pred) > 0:
                y_pred = y_pred * 2
            return tf.reduce_mean(tf.square(y_true - y_pred))

        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        model.compile(optimizer="adam", loss=my_loss)
        """
    )
    merged: list[tuple[str, ...]] = []
    merge = relevant_code.merge_carried

    def spying(index, carried, pruned) -> None:  # noqa: ANN001
        merged.append(tuple(pruned))
        merge(index, carried, pruned)

    monkeypatch.setattr(relevant_code, "merge_carried", spying)
    whole = _check(source, prune_code=False, path="train.py")
    pruned = _check(source, prune_code=True, path="train.py")
    assert "TFR301" in {f.code for f in whole.findings}
    assert _keys(pruned) == _keys(whole)
    assert merged and merged[0] == ("unrelated",)


def test_carried_facts_hold_the_pruned_functions_only() -> None:
    source = textwrap.dedent(
        """
        import tensorflow as tf
        from helpers import tools

        class Keep:
            def unrelated(self, a):
                import helpers.extra as extra
                table = {}
                table[a] = tools.twice(a)
                return extra.combine(table)

        @tf.function
        def step(x):
            return x

        CACHE = {}
        """
    )
    index, traced = _facts(source)
    pruned = prune(source, index, traced, ALL)
    assert pruned is not None and pruned.pruned == ("Keep.unrelated",)
    carried = pruned.carried_index()
    assert set(carried.functions) >= {"Keep.unrelated"}
    assert carried.imports["extra"] == "helpers.extra"
    assert "helpers.tools.twice" in carried.called_names
    assert "table" in carried.item_writes
    assert carried.module_names == set()  # no module-level statement is carried


def test_a_def_alone_in_a_block_falls_back_to_the_whole_file() -> None:
    source = textwrap.dedent(
        """
        import tensorflow as tf

        if True:
            def lonely():
                return 1

        @tf.function
        def step(x):
            if tf.reduce_sum(x) > 0:
                x = x + 1
            return x
        """
    )
    whole = _check(source, prune_code=False)
    pruned = _check(source, prune_code=True)
    assert pruned.error is None
    assert _keys(pruned) == _keys(whole) != []


def test_fix_and_edits_parse_the_whole_file(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    monkeypatch.setattr(
        rule_pass, "_parse", lambda code: calls.append(code) or cst.parse_module(code)
    )
    source = _big()
    index, traced = _facts(source, "s.py")
    for changes in ({"fix": True}, {"want_edits": True}):
        options = dataclasses.replace(RunOptions(rule_codes=ALL, root="."), **changes)
        process_file(FileJob(InputFile("s.py", source), index, traced, options))
        assert calls[0] == source
        calls.clear()


def test_names_in_any_alphabet_are_words() -> None:
    found = _reasons(
        """
        import tensorflow as tf

        @tf.function
        def größe(x):
            return x

        def messe(xs):
            return [größe(x) for x in xs]
        """
    )
    assert found["messe"] == "calls `größe`"


def test_a_definition_is_no_use_of_its_name() -> None:
    """A kept test method does not keep the methods of the same name in
    other classes; nor is a function kept for defining a name a fix would
    take (the fix asks pass 1 which names the whole file spells)."""
    found = _reasons(
        """
        import tensorflow as tf

        class First:
            def test_shape(self):
                @tf.function
                def fn(x):
                    return x
                return fn(1)

        class Second:
            def test_shape(self):
                return 2

        class Trainer:
            def train_step(self, data):
                return data
        """,
        ("TFR101", "TFR303"),
    )
    assert found["First.test_shape"] == "runs traced"
    assert found["Second.test_shape"] is None
    assert found["Trainer.train_step"] is None


def test_a_seed_keyword_is_no_seeding() -> None:
    found = _reasons(
        """
        import tensorflow as tf
        from numpy.random import seed as reseed

        def draws():
            return tf.random.normal((2,), seed=3)

        def seeds():
            reseed(0)

        @tf.function
        def step(x):
            return x
        """
    )
    assert found["draws"] is None
    assert found["seeds"] == "calls a seed function"


def test_fix_rounds_check_the_whole_file_when_what_was_left_out_cannot_stand_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A function left out from inside a block cannot be indexed on its own
    for a simulated fix round: the check starts again on the whole file."""
    source = textwrap.dedent(
        """
        import tensorflow as tf

        if True:
            WIDTH = 1

            def lonely():
                return WIDTH

        @tf.function
        def my_loss(y_true, y_pred):
            return tf.reduce_mean(tf.square(y_true - y_pred))

        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        model.compile(optimizer="adam", loss=my_loss)
        """
    )
    parsed: list[str] = []
    parse = rule_pass._parse
    monkeypatch.setattr(rule_pass, "_parse", lambda code: parsed.append(code) or parse(code))
    whole = _check(source, prune_code=False, path="train.py")
    parsed.clear()
    pruned = _check(source, prune_code=True, path="train.py")
    assert "TFR301" in {f.code for f in whole.findings}
    assert _keys(pruned) == _keys(whole)
    assert "def lonely" not in parsed[0] and parsed[-1] == source


def test_names_imported_under_another_name_count() -> None:
    found = _reasons(
        """
        import tensorflow as tf
        from tensorflow import GradientTape as Tape
        from numpy import mean as avg

        def grads(x):
            with Tape() as t:
                y = x * x
            return t.gradient(y, x)

        def evaluate(batches):
            return avg([b for b in batches])

        @tf.function
        def step(x):
            return x
        """,
        ("TFR304", "TFR306"),
    )
    assert found["grads"] == "opens a GradientTape"
    assert found["evaluate"] == "averages beside a loop"


def test_form_feeds_stay_and_other_separators_keep_the_file_whole() -> None:
    source = "import tensorflow as tf\n\ndef f():\n    return 1  \f\n\n"
    source += "@tf.function\ndef g(x):\n    return x\n"
    code = _pruned(source)
    assert (
        code is not None
        and code.splitlines()
        and len(code.splitlines()) == len(source.splitlines())
    )
    assert _pruned(source.replace("return 1", "return '\u2028'")) is None


def test_assignments_the_loop_rules_follow_by_name_are_kept() -> None:
    """`value_sources` follows a name to its assignments anywhere in the
    file: `ds = make_dataset()` in another function tells what the loop
    iterates."""
    source = """
        import tensorflow as tf

        def make_dataset():
            return load()

        def setup():
            ds = make_dataset()
            other = ds

        def unrelated():
            ds2 = make_dataset()

        @tf.function
        def step(x):
            return x

        def train():
            for x in ds:
                step(x)
        """
    found = _reasons(source, ("TFR306",))
    assert found["setup"] == "assigns `ds`, which kept code reads"
    assert found["unrelated"] is None
    assert _reasons(source, ("TFR101",))["setup"] is None


def test_a_fix_names_a_new_step_as_on_the_whole_file_with_the_name_left_out() -> None:
    """A function spelling `train_step` is inert (nothing of it runs traced)
    and left out, yet the step a fix extracts from the inline tape loop is
    still named `train_step_2`: the names a file spells are pass 1's."""
    source = textwrap.dedent(
        """
        import tensorflow as tf

        def describe(trainer):
            return trainer.train_step.__name__

        def train(model, optimizer, dataset):
            for x, y in dataset:
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
        """
    )
    index, traced = _facts(source, "train.py")
    assert relevance(source, index, traced, ("TFR303",))["describe"] is None
    whole = _check(source, prune_code=False, path="train.py")
    pruned = _check(source, prune_code=True, path="train.py")
    assert _keys(pruned) == _keys(whole)
    steps = [f for f in pruned.findings if f.code == "TFR303"]
    assert steps and steps[0].fix is not None and "train_step_2" in steps[0].fix.message
