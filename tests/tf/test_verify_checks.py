"""The verification checks, run in this process (TensorFlow already imported):
correct rewrites verify; broken ones are caught by the named check."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.tf.verify_pairs import failed

from tfrewrite.api import fix_source_with_findings
from tfrewrite.verify import inputs
from tfrewrite.verify.checks import (
    CHECK_EAGER,
    CHECK_GLOBALS,
    CHECK_GRADIENTS,
    CHECK_NO_AUTOGRAPH,
    CHECK_ORIGINAL_GLOBALS,
    CHECK_PRINTS,
    CHECK_TRACED,
    Options,
    Request,
    verify,
)
from tfrewrite.verify.randomness import CHECK_DISTRIBUTION, CHECK_FRESH

DATA = Path(__file__).parent.parent / "data" / "verify"
FAST = Options(samples=120, search=48)


def _read(name: str) -> str:
    return (DATA / name).read_text()


def _verify(before: str, after: str | None, qualname: str, **specs: str) -> dict:
    request = Request(
        qualname=qualname,
        original_source=_read(before),
        rewrite_source=_read(after) if after else None,
        path=after or before,
        specs={k: inputs.parse_spec(v).to_json() for k, v in specs.items()},
        options=FAST,
    )
    return verify(request)


def _checks(result: dict) -> dict[str, dict]:
    return {c["name"]: c for c in result["checks"]}


@pytest.mark.parametrize(
    ("before", "after", "qualname"),
    [
        ("cond_before.py", "cond_after.py", "clipped_loss"),
        ("assign_before.py", "assign_after.py", "scaled_loss"),
        ("print_before.py", "print_after.py", "logged_loss"),
    ],
)
def test_correct_deterministic_rewrites_are_equivalent(
    before: str, after: str, qualname: str
) -> None:
    result = _verify(before, after, qualname)
    assert result["verdict"] == "equivalent", result
    checks = _checks(result)
    for name in (CHECK_EAGER, CHECK_TRACED, CHECK_NO_AUTOGRAPH, CHECK_GRADIENTS):
        assert checks[name]["ok"] and checks[name]["runs"] >= 3
    assert all(b["true"] and b["false"] for b in result["branches"])


def test_if_to_cond_rewrite_covers_both_branches() -> None:
    result = _verify("cond_before.py", "cond_after.py", "clipped_loss")
    assert result["branches"] == [{"line": 8, "true": True, "false": True}]
    # The random draws all take one branch; the search found an input for the other.
    assert len(result["inputs"]) > 3


def test_loss_class_with_configured_inputs() -> None:
    spec = "float32[4,8,8,1] in [0,1]"
    result = _verify(
        "dice/before/losses.py", "dice/after/losses.py", "DiceLoss.call", y_true=spec, y_pred=spec
    )
    assert result["verdict"] == "equivalent", result
    assert result["branches"] == [{"line": 18, "true": True, "false": True}]


@pytest.mark.parametrize(
    ("after", "failing"),
    [
        ("cond_swapped.py", {CHECK_EAGER, CHECK_TRACED, CHECK_NO_AUTOGRAPH, CHECK_GRADIENTS}),
        ("cond_constant.py", {CHECK_EAGER, CHECK_TRACED, CHECK_NO_AUTOGRAPH, CHECK_GRADIENTS}),
        ("cond_autograph.py", {CHECK_NO_AUTOGRAPH}),
    ],
)
def test_broken_cond_rewrites_are_mismatches(after: str, failing: set[str]) -> None:
    result = _verify("cond_before.py", after, "clipped_loss")
    assert result["verdict"] == "mismatch"
    assert failed(result) == failing


def test_rewrite_still_needing_autograph_is_named() -> None:
    result = _verify("cond_before.py", "cond_autograph.py", "clipped_loss")
    detail = _checks(result)[CHECK_NO_AUTOGRAPH]["detail"]
    assert "OperatorNotAllowedInGraphError" in detail and "still needs AutoGraph" in detail


def test_dropped_assignment_is_a_mismatch() -> None:
    result = _verify("assign_before.py", "assign_dropped.py", "scaled_loss")
    assert result["verdict"] == "mismatch"
    assert CHECK_TRACED in failed(result)
    assert "expected" in _checks(result)[CHECK_TRACED]["detail"]


def test_random_rewrite_is_fresh_and_has_the_same_distribution() -> None:
    result = _verify("noise_before.py", "noise_after.py", "noisy_loss")
    assert result["stochastic"] and result["verdict"] == "equivalent", result
    checks = _checks(result)
    assert (
        checks[CHECK_FRESH]["ok"]
        and checks[CHECK_DISTRIBUTION]["ok"]
        and checks[CHECK_DISTRIBUTION]["runs"] == 2 * FAST.samples
    )


def test_frozen_random_value_is_caught() -> None:
    result = _verify("noise_before.py", "noise_frozen.py", "noisy_loss")
    assert result["verdict"] == "mismatch"
    assert CHECK_FRESH in failed(result)
    assert "frozen random value" in _checks(result)[CHECK_FRESH]["detail"]


def test_wrong_noise_scale_fails_the_distribution_test() -> None:
    result = _verify("noise_before.py", "noise_scale.py", "noisy_loss")
    assert failed(result) == {CHECK_DISTRIBUTION}
    assert "p = " in _checks(result)[CHECK_DISTRIBUTION]["detail"]


def test_print_that_fires_once_is_caught() -> None:
    result = _verify("print_before.py", "print_once.py", "logged_loss")
    assert result["verdict"] == "mismatch"
    assert failed(result) == {CHECK_PRINTS}
    assert "print fires once" in _checks(result)[CHECK_PRINTS]["detail"]


def test_tf_print_rewrite_prints_the_same_values_every_call() -> None:
    result = _verify("print_before.py", "print_after.py", "logged_loss")
    assert result["prints"] and _checks(result)[CHECK_PRINTS]["ok"]
    # ...and tf.print cannot be compiled by XLA.
    assert any("XLA" in w and "StringFormat" in w for w in result["warnings"])


def test_uncovered_branch_is_not_proven() -> None:
    # With a configured range [0, 1], the mean absolute error never exceeds 1.
    before = _read("cond_before.py").replace("error > 0.3", "error > 1.5")
    after = _read("cond_after.py").replace("error > 0.3", "error > 1.5")
    spec = inputs.parse_spec("float32[8,4] in [0,1]").to_json()
    result = verify(
        Request("clipped_loss", before, after, specs={"y_true": spec, "y_pred": spec}, options=FAST)
    )
    assert result["verdict"] == "not proven"
    assert result["branches"] == [{"line": 8, "true": False, "false": True}]
    assert not failed(result)


def test_default_loss_inputs_may_leave_their_range_to_cover_a_branch() -> None:
    before = _read("cond_before.py").replace("error > 0.3", "error > 2.0")
    after = _read("cond_after.py").replace("error > 0.3", "error > 2.0")
    result = verify(Request("clipped_loss", before, after, options=FAST))
    assert result["verdict"] == "equivalent", result
    assert result["branches"] == [{"line": 8, "true": True, "false": True}]


def test_divergence_of_module_flag_in_the_original() -> None:
    result = _verify("flag_loss.py", None, "bad_loss")
    assert result["verdict"] == "diverges"
    [message] = result["divergences"]
    assert "`USE_ABSOLUTE_ERROR` froze at its trace-time value False" in message
    assert "USE_ABSOLUTE_ERROR = True" in message
    assert not _checks(result)[CHECK_ORIGINAL_GLOBALS]["ok"]


def test_rewrite_that_reads_the_flag_per_call_fixes_the_divergence() -> None:
    before = _read("flag_loss.py")
    after = before.replace(
        "    if USE_ABSOLUTE_ERROR:\n        return tf.reduce_mean(tf.abs(y_true - y_pred))\n"
        "    return tf.reduce_mean(tf.square(y_true - y_pred))",
        "    return tf.reduce_mean(tf.abs(y_true - y_pred)) if use_absolute_error() else "
        "tf.reduce_mean(tf.square(y_true - y_pred))",
    ).replace(
        "@tf.function\n",
        "def use_absolute_error():\n    return USE_ABSOLUTE_ERROR\n\n\n@tf.function\n",
    )
    frozen = verify(Request("bad_loss", before, after, options=FAST))
    # The rewrite still reads the Python flag at trace time: a warning, not a new mismatch.
    assert frozen["verdict"] == "equivalent"
    assert any("still freezes `USE_ABSOLUTE_ERROR`" in w for w in frozen["warnings"])


def test_rewrite_that_freezes_a_flag_the_original_reads_per_call() -> None:
    before = (
        "import tensorflow as tf\n\nSCALE = True\n\n\ndef loss(y_true, y_pred):\n"
        "    return tf.reduce_mean(y_true - y_pred) * tf.constant(2.0 if SCALE else 1.0)\n"
    )
    after = before.replace(
        "tf.constant(2.0 if SCALE else 1.0)", "tf.constant(2.0 if SCALE else 1.0) + 0.0"
    )
    result = verify(Request("loss", before, after, options=FAST))
    # Both freeze SCALE when traced: the original diverges, the rewrite is no worse.
    assert result["verdict"] == "equivalent" and result["divergences"]
    assert _checks(result)[CHECK_GLOBALS]["ok"]


def test_original_that_rejects_the_synthesised_inputs_is_not_proven() -> None:
    before = (
        "import tensorflow as tf\n\ndef loss(y_true, y_pred):\n    raise RuntimeError('bad data')\n"
    )
    result = verify(Request("loss", before, before + "\n", options=FAST))
    assert result["verdict"] == "not proven"
    assert any(
        "RuntimeError: bad data" in w and "[tool.tfrewrite.verify] inputs" in w
        for w in result["warnings"]
    )
    assert "line 4, in loss" in result["traceback"]


def test_rewrite_that_raises_is_a_mismatch_with_traceback() -> None:
    result = _verify("cond_before.py", "raise_after.py", "clipped_loss")
    assert result["verdict"] == "mismatch"
    eager = _checks(result)[CHECK_EAGER]
    assert "ValueError: unexpected loss" in eager["detail"]
    assert "line 9, in clipped_loss" in eager["traceback"]


def test_function_that_cannot_load_is_an_error() -> None:
    result = verify(
        Request(
            "loss",
            "SCALE = 1 / 0\n\ndef loss(a, b):\n    return a * SCALE\n",
            None,
        )
    )
    assert result["verdict"] == "error" and "ZeroDivisionError" in result["error"]


def test_function_whose_import_is_missing_needs_that_package() -> None:
    result = verify(
        Request(
            "loss",
            "import not_a_real_module_xyz\n\n"
            "def loss(a, b):\n    return not_a_real_module_xyz.f(a)\n",
            None,
        )
    )
    assert result["verdict"] == "needs package"
    assert "`not_a_real_module_xyz`" in result["needs_package"]


@pytest.mark.parametrize(
    ("fixture", "qualname", "code"),
    [
        ("cond_before.py", "clipped_loss", "TFR101"),
        ("assign_before.py", "scaled_loss", "TFR101"),
        ("noise_before.py", "noisy_loss", "TFR102"),
        ("print_before.py", "logged_loss", "TFR103"),
    ],
)
def test_real_fix_output_verifies(fixture: str, qualname: str, code: str) -> None:
    """The rules' own output for a traced function must verify."""
    source = _read(fixture).replace(f"\ndef {qualname}", f"\n@tf.function\ndef {qualname}")
    fixed, applied, _ = fix_source_with_findings(source, fixture)
    if code not in {f.code for f in applied}:
        pytest.skip(f"{code} does not rewrite this fixture")
    result = verify(Request(qualname, source, fixed, options=FAST))
    assert result["verdict"] == "equivalent", result


def test_user_code_that_exits_is_reported_not_fatal() -> None:
    before = "import sys\n\ndef loss(y_true, y_pred):\n    return y_true - y_pred\n"
    after = "import sys\n\ndef loss(y_true, y_pred):\n    sys.exit(3)\n"
    result = verify(Request("loss", before, after, options=FAST))
    assert result["verdict"] == "mismatch"
    assert "SystemExit: 3" in _checks(result)[CHECK_EAGER]["detail"]
