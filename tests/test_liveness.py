"""`analysis.liveness`: is a name read after a point before it is bound again?"""

from __future__ import annotations

import textwrap

import libcst as cst

from tfrewrite.facts.liveness import BOUND, READ, Level, first_use, free_names, read_later


def _body(code: str) -> list[cst.CSTNode]:
    return list(cst.parse_module(textwrap.dedent(code)).body)


def test_an_assignment_binds_a_read_reads_and_silence_is_neither() -> None:
    assert first_use(_body("x = 1\nprint(x)"), "x") is BOUND
    assert first_use(_body("print(x)\nx = 1"), "x") is READ
    assert first_use(_body("x = x + 1"), "x") is READ
    assert first_use(_body("x += 1"), "x") is READ
    assert first_use(_body("del x"), "x") is READ
    assert first_use(_body("y = 1"), "x") is None
    assert first_use(_body("d[x] = 1"), "x") is READ


def test_branches_bind_only_when_both_do() -> None:
    assert first_use(_body("if c:\n    x = 1\nelse:\n    x = 2"), "x") is BOUND
    assert first_use(_body("if c:\n    x = 1"), "x") is None
    assert first_use(_body("if c:\n    x = 1\nelif d:\n    x = 2"), "x") is None
    assert first_use(_body("if c:\n    x = 1\nelse:\n    print(x)"), "x") is READ
    assert first_use(_body("if x:\n    x = 1\nelse:\n    x = 2"), "x") is READ


def test_loops_may_run_zero_times() -> None:
    assert first_use(_body("for a in b:\n    x = 1"), "x") is None
    assert first_use(_body("for a in b:\n    print(x)"), "x") is READ
    assert first_use(_body("for x in b:\n    print(x)"), "x") is None
    assert first_use(_body("while x:\n    pass"), "x") is READ
    assert first_use(_body("with t() as x:\n    print(x)"), "x") is BOUND
    assert first_use(_body("with t():\n    x = 1"), "x") is BOUND


def test_functions_read_only_the_names_they_do_not_bind() -> None:
    [own] = _body("def f(a):\n    x = a\n    return x")
    [free] = _body("def f(a):\n    return x + a")
    [declared] = _body("def f():\n    global x\n    x = 1")
    [default] = _body("def f(a=x):\n    return a")
    assert "x" not in free_names(own) and "x" in free_names(free)
    assert "x" in free_names(declared) and "x" in free_names(default)
    assert first_use([own], "x") is None and first_use([free], "x") is READ


def test_read_later_follows_loops_outwards() -> None:
    after, again = _body("y = 1"), _body("print(x)")
    assert read_later("x", [Level(after, again)]) is True  # the next iteration reads it
    assert read_later("x", [Level(_body("x = 2"), again)]) is False  # bound again first
    assert read_later("x", [Level(after), Level(_body("print(x)"))]) is True  # after the loop
    assert read_later("x", [Level(after), Level(after)]) is False
    assert read_later("x", [Level(after)], _body("def g():\n    return x")) is True
    header = cst.parse_expression("x > 0")
    assert read_later("x", [Level(after, (), (header,))]) is True


def test_a_class_reads_what_its_body_and_methods_read() -> None:
    [methods] = _body("class Vae:\n    def call(self, x):\n        mu = x\n        return mu")
    [reading] = _body("class Vae:\n    def call(self, x):\n        return mu + x")
    [body] = _body("class Vae:\n    scale = mu")
    assert first_use([methods], "mu") is None
    assert first_use([reading], "mu") is READ and first_use([body], "mu") is READ
