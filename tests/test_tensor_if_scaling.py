"""TFR101 on one long function costs time linear in its length: what the
rewrite of each conditional asks of the statements after it (later reads of
an output, names still live) and before it (names surely bound) is gathered
once per statement, not once per conditional, and the closures that rebind
outer names once per function. Counted, not timed: the walks per statement
stay constant as the function grows."""

from __future__ import annotations

import pytest

from tfrewrite.api import check_source
from tfrewrite.rules.tensor_conditions import cond_flow, cond_site


def _function(conditionals: int) -> str:
    body = ["    s = tf.reduce_mean(y_pred)"]
    for i in range(conditionals):
        body += [
            f"    if tf.reduce_mean(y_pred) > {i}:",
            "        s = s * 2.0",
            "    else:",
            f"        s = s + {i}.0",
        ]
    return (
        "import tensorflow as tf\n\n@tf.function\ndef f(y_true, y_pred):\n"
        + "\n".join(body)
        + "\n    return s\n"
    )


def _walks(monkeypatch: pytest.MonkeyPatch, conditionals: int) -> int:
    calls = 0

    def counting(original):  # type: ignore[no-untyped-def]
        def wrapper(*args, **kwargs):  # type: ignore[no-untyped-def]
            nonlocal calls
            calls += 1
            return original(*args, **kwargs)

        return wrapper

    with monkeypatch.context() as patch:
        for module, name in (
            (cond_site, "statement_uses"),
            (cond_flow, "read_before_assigned"),
            (cond_site, "rebinding_closures"),
        ):
            patch.setattr(module, name, counting(getattr(module, name)))
        findings = check_source(_function(conditionals), select=["TFR101"])
    assert len(findings) == conditionals and all(f.fix for f in findings)
    return calls


def test_statement_facts_are_gathered_once_per_statement(monkeypatch: pytest.MonkeyPatch) -> None:
    small, large = _walks(monkeypatch, 20), _walks(monkeypatch, 40)
    assert large <= 2.2 * small, (small, large)  # linear; per conditional it was quadratic
