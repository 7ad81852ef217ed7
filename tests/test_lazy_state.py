"""Run-once set-up in traced code (`rules/python_state/run_once.py`): an
assignment that sets a name only while it is unset (`if x is None: x =
...`) runs on the first call eagerly and on the first trace traced, and is
no per-call side effect (TFR202); an assignment without that guard is."""

from __future__ import annotations

import libcst as cst
from tests.lazy_state import EVERY_CALL, LAZY_METRIC

from tfrewrite.api import check_source
from tfrewrite.rules.python_state.run_once import lazy_initialisations


def test_a_global_set_up_under_a_none_guard_is_no_side_effect() -> None:
    assert check_source(LAZY_METRIC, select=["TFR202", "TFR204"]) == []


def test_a_global_assigned_without_the_guard_is_reported() -> None:
    (finding,) = check_source(EVERY_CALL, select=["TFR202"])
    assert finding.message.startswith("assigning global `_accuracy` inside traced")


def test_only_the_guarded_name_counts_as_set_up() -> None:
    body = cst.parse_module(
        "if x is None:\n    x = make()\n    y = other()\n"
        "if not self.ready:\n    self.ready = True\n"
    )
    assigned = [
        node
        for node in body.body[0].body.body + body.body[1].body.body
        if isinstance(node, cst.SimpleStatementLine)
    ]
    lazily = lazy_initialisations(body)
    assert [id(s.body[0]) in lazily for s in assigned] == [True, False, True]
