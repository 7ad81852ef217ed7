"""The bindings of a function's local names (facts/bindings.py), which
TFR107 (a shape built once), TFR103 (a host value printed later) and TFR104
(a NumPy result averaged) follow to a name's value."""

from __future__ import annotations

import textwrap

import libcst as cst

from tfrewrite.facts.bindings import local_bindings, single_values


def _function(source: str) -> cst.FunctionDef:
    function = cst.parse_module(textwrap.dedent(source)).body[0]
    assert isinstance(function, cst.FunctionDef)
    return function


def _code(node: cst.BaseExpression) -> str:
    return cst.Module([]).code_for_node(node)


def test_a_name_bound_once_has_its_value() -> None:
    function = _function(
        """
        def f(x, n):
            size = list(x.shape[:-1]) + [n]
            value: float = x.numpy()
            return size, value
        """
    )
    found = {name: _code(value) for name, value in single_values(function).items()}
    assert found == {"size": "list(x.shape[:-1]) + [n]", "value": "x.numpy()"}


def test_any_other_binding_makes_the_value_unknown() -> None:
    function = _function(
        """
        def f(x, *, shape=None):
            size = x.shape
            other, size = g()
            total = x.numpy()
            total += 1
            with open(p) as handle:
                pass
            handle = 1
            shape = x.shape
            import size_module as loaded
            loaded = 2
        """
    )
    assert single_values(function) == {}
    assert local_bindings(function)["other"] == [None]


def test_nested_functions_are_scopes_of_their_own() -> None:
    function = _function(
        """
        def f(x):
            size = x.shape
            def inner():
                size = 1
            return inner
        """
    )
    assert set(single_values(function)) == {"size"}
