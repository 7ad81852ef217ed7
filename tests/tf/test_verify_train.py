"""Train steps with a harness: k steps eagerly against k steps traced, from
the same initial weights."""

from __future__ import annotations

from pathlib import Path

import pytest

from tfrewrite.verify.checks import Request, verify
from tfrewrite.verify.harness import CHECK_LOSSES, CHECK_WEIGHTS

TRAIN = Path(__file__).parent.parent / "data" / "verify" / "train"


@pytest.fixture(autouse=True)
def _harness_importable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(TRAIN))


def _verify(after: str | None) -> dict:
    before = (TRAIN / "before" / "steps.py").read_text()
    rewrite = (TRAIN / after / "steps.py").read_text() if after else None
    return verify(Request("train_step", before, rewrite, harness="harness:build"))


def _checks(result: dict) -> dict[str, dict]:
    return {c["name"]: c for c in result["checks"]}


def test_decorated_train_step_matches_the_eager_one() -> None:
    result = _verify("after")
    assert result["verdict"] == "equivalent", result
    assert _checks(result)[CHECK_LOSSES]["ok"] and _checks(result)[CHECK_WEIGHTS]["ok"]


def test_train_step_that_skips_a_layer_is_caught() -> None:
    result = _verify("broken")
    assert result["verdict"] == "mismatch"
    checks = _checks(result)
    assert "`loss` after step 2" in checks[CHECK_LOSSES]["detail"]
    assert not checks[CHECK_WEIGHTS]["ok"]


def test_original_train_step_alone_is_consistent_traced() -> None:
    result = _verify(None)
    assert result["mode"] == "original" and result["verdict"] == "consistent", result


def test_bad_harness_is_an_error() -> None:
    before = (TRAIN / "before" / "steps.py").read_text()
    result = verify(Request("train_step", before, None, harness="harness:missing"))
    assert result["verdict"] == "error" and "harness:missing" in result["error"]
