"""What a function returns when it returns project functions: one it names,
or one picked from a table of them (`return table[name]`), so that an
attribute bound to its result (`self.objective = pick_objective(name)`)
calls those functions: the losses a traced step differentiates through it
get TFR301, as if bound by name. A local that shadows a function's name
(`model = Model(...)` then `return model` in `def model(...)`) returns no
function."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tests.returned_objectives import FILES

from tfrewrite.api import check_source
from tfrewrite.facts.index import build_index
from tfrewrite.pipeline.engine import InputFile, RunOptions, run
from tfrewrite.rules import RULES_BY_CODE


def _findings(tmp_path: Path, files: dict[str, str]) -> list[tuple[str, int, str]]:
    for name, text in files.items():
        (tmp_path / name).write_text(textwrap.dedent(text))
    inputs = [InputFile(str(tmp_path / name)) for name in files]
    options = RunOptions(rule_codes=tuple(RULES_BY_CODE), root=str(tmp_path))
    result = run(inputs, options, jobs=1)
    return sorted((Path(f.path).name, f.start.line, f.code) for f in result.findings)


def test_a_loss_picked_from_a_returned_table_is_the_steps_loss(tmp_path: Path) -> None:
    found = _findings(tmp_path, FILES)
    assert ("objectives.py", 10, "TFR301") in found
    assert ("objectives.py", 15, "TFR301") in found


def test_returns_name_the_functions_a_table_or_a_name_hands_out() -> None:
    source = textwrap.dedent(
        """
        def first(x):
            return x

        def second(x):
            return -x

        def by_table(name):
            table = {"a": first, "b": second}
            return table.get(name)

        def by_name():
            return first

        def model(units):
            model = make(units)
            return model
        """
    )
    index = build_index(source, "m.py", "m")
    assert sorted(index.functions["by_table"].returns) == ["m.first", "m.second"]
    assert index.functions["by_name"].returns == ["m.first"]
    assert index.functions["model"].returns == []


def test_a_function_named_like_its_local_result_is_not_called_through_it() -> None:
    source = """
import tensorflow as tf


def model(units):
    inputs = tf.keras.Input((3,))
    model = tf.keras.Model(inputs, tf.keras.layers.Dense(units)(inputs))
    return model


class Agent:
    def __init__(self):
        self.policy = model(4)

    @tf.function
    def act(self, x):
        return self.policy(x)
"""
    assert [f.code for f in check_source(source)] == []
