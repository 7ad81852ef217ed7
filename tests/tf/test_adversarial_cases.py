"""Hand-written cases that try to break the safe fixes (tests/data/adversarial):
for each, the original run eagerly must give what the fixed module gives
traced. A safe fix that changes a result or crashes is the worst bug
tfrewrite can ship; unsafe fixes are left to `verify`."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent.parent
CASES = sorted((ROOT / "tests" / "data" / "adversarial").glob("*.py"))


def _probe_module():
    spec = importlib.util.spec_from_file_location(
        "safe_fix_probe", ROOT / "benchmarks" / "safe_fix_probe.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("safe_fix_probe", module)
    spec.loader.exec_module(module)
    return module


probe = _probe_module()


@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_safe_fix_keeps_what_the_original_computes(case: Path) -> None:
    outcomes = probe.probe_case(case, unsafe=False)
    bad = [o for o in outcomes if o[0] in ("WRONG", "CRASH", "invalid")]
    assert not bad, bad


def test_the_probe_catches_a_wrong_rewrite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The oracle can fail: a "fix" that drops a branch is caught."""
    case = tmp_path / "drop_branch.py"
    case.write_text(
        "import tensorflow as tf\n\n\n"
        "@tf.function\n"
        "def f(x):\n"
        "    if tf.reduce_sum(x) > 0:\n"
        "        x = x * 2.0\n"
        "    return x\n\n\n"
        "PROBES = [('f', (tf.ones([2]),))]\n"
    )
    monkeypatch.setattr(
        probe, "fix_source", lambda source, **_: source.replace("x = x * 2.0", "pass")
    )
    [(outcome, _, detail)] = probe.probe_case(case, unsafe=False)
    assert outcome == "WRONG", detail


def test_the_probe_catches_a_stale_draw(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    case = tmp_path / "stale.py"
    case.write_text(
        "import numpy as np\nimport tensorflow as tf\n\n\n"
        "@tf.function\n"
        "def f(x):\n"
        "    return x + tf.random.uniform([2])\n\n\n"
        "PROBES = [('f', (tf.ones([2]),))]\nRANDOM = {'f'}\n"
    )
    monkeypatch.setattr(
        probe,
        "fix_source",
        lambda source, **_: source.replace(
            "tf.random.uniform([2])", "np.random.uniform(size=[2]).astype(np.float32)"
        ),
    )
    [(outcome, _, detail)] = probe.probe_case(case, unsafe=False)
    assert outcome == "WRONG", detail
