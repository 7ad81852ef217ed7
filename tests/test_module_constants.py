"""Module names bound to Python literals (facts/module_constants.py): the
one record TFR307's constant switches and TFR201's frozen literals read."""

from __future__ import annotations

import textwrap

import libcst as cst

from tfrewrite.api import check_source
from tfrewrite.facts.module_constants import literal_source, module_literals


def _literals(source: str):  # type: ignore[no-untyped-def]
    return module_literals(cst.parse_module(textwrap.dedent(source)))


def test_literal_source_is_the_literal_as_written() -> None:
    assert literal_source(cst.parse_expression("-1.0")) == "-1.0"
    assert literal_source(cst.parse_expression("True")) == "True"
    assert literal_source(cst.parse_expression("'a' 'b'")) == "'a' 'b'"
    assert literal_source(cst.parse_expression("x")) is None
    assert literal_source(cst.parse_expression("f(1)")) is None


def test_a_name_bound_once_to_a_literal_is_a_constant() -> None:
    found = _literals("DEBUG = True\nscale = compute()\n")
    assert found.constants() == {"DEBUG": "True"}
    assert found.literal_names() == {"DEBUG"}


def test_restating_the_same_literal_keeps_a_constant() -> None:
    found = _literals(
        """
        num_classes = 10
        if ready:
            num_classes = 10
        """
    )
    assert found.constants() == {"num_classes": "10"}


def test_another_binding_disqualifies_but_the_literal_still_counts() -> None:
    found = _literals(
        """
        scale = 1.0
        for epoch in range(3):
            scale = scale / 2
        steps = 1
        steps += 1
        a, b = 1, 2
        """
    )
    assert found.constants() == {}
    assert found.literal_names() == {"scale", "steps"}


def test_a_global_declaration_in_a_function_is_a_binding() -> None:
    found = _literals(
        """
        DEBUG = True

        def turn_off():
            global DEBUG
            DEBUG = False
        """
    )
    assert found.constants() == {}


def test_attribute_targets_and_function_bodies_bind_no_module_name() -> None:
    found = _literals(
        """
        rate = 0.1
        cfg.rate = 0.5

        def f():
            rate = 2
        """
    )
    assert found.constants() == {"rate": "0.1"}


# The rules that read the record: an annotated assignment binds its literal too.
def test_an_annotated_flag_bound_to_true_turns_eager_execution_on() -> None:
    source = (
        "import tensorflow as tf\n\nDEBUG: bool = True\ntf.config.run_functions_eagerly(DEBUG)\n"
    )
    found = check_source(source, path="train.py", select=["TFR307"])
    assert [(f.code, f.start.line) for f in found] == [("TFR307", 4)]


def test_a_literal_restated_after_an_annotated_binding_is_not_frozen_state() -> None:
    source = textwrap.dedent(
        """
        import tensorflow as tf

        num_classes: int = 10


        @tf.function
        def step(x):
            return tf.one_hot(x, num_classes)


        for x in range(3):
            step(x)

        num_classes = 10
        for x in range(3):
            step(x)
        """
    )
    assert check_source(source, select=["TFR201"]) == []
    changed = source.replace("num_classes = 10\nfor", "num_classes = 12\nfor")
    assert [f.start.line for f in check_source(changed, select=["TFR201"])] == [9]
