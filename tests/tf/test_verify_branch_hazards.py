"""Verify on functions whose hazards live in one branch: a draw only some
inputs reach makes the function random (its freshness is checked where it
draws), and a rewrite that keeps a tensor `if` it could not rewrite is run
with AutoGraph only; where the original itself fails traced, the rewrite
failing the same way is the original's hazard, not a mismatch."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tests.test_verify_fix_owners import PARTLY_REWRITTEN

from tfrewrite.api import fix_source
from tfrewrite.config import load_settings
from tfrewrite.verify.checks import CHECK_NO_AUTOGRAPH, Options, Request, verify
from tfrewrite.verify.command import targets_for_paths
from tfrewrite.verify.randomness import CHECK_FRESH
from tfrewrite.verify.run import verify_targets
from tfrewrite.verify.settings import parse_verify_settings

FAST = Options(samples=120, search=48, xla=False)

# Draws only when more than two scores pass a high threshold, which the
# first synthesised input does not reach.
DRAWS_IN_ONE_BRANCH = """\
import tensorflow as tf


@tf.function
def pick(scores):
    chosen = tf.boolean_mask(scores, scores > 0.97)
    if tf.size(chosen) > 2:
        value = tf.reduce_sum(tf.random.shuffle(chosen)[:2])
    else:
        value = tf.reduce_sum(scores) * 0.0
    return value
"""


def test_a_draw_in_one_branch_makes_the_function_random() -> None:
    rewrite = fix_source(DRAWS_IN_ONE_BRANCH, select=["TFR101"])
    assert "tf.cond(" in rewrite
    result = verify(
        Request("pick", DRAWS_IN_ONE_BRANCH, rewrite, "pick.py", specs={}, options=FAST)
    )
    assert result["stochastic"], result
    assert result["verdict"] != "mismatch", result
    fresh = next(c for c in result["checks"] if c["name"] == CHECK_FRESH)
    assert fresh["ok"], fresh


def test_a_kept_tensor_if_is_run_with_autograph_and_shared_failures_are_the_originals(
    tmp_path: Path,
) -> None:
    path = tmp_path / "windows.py"
    path.write_text(textwrap.dedent(PARTLY_REWRITTEN))
    settings = load_settings(None)
    settings = type(settings)(**{**settings.__dict__, "root": tmp_path})
    verify_settings = parse_verify_settings(
        {
            "samples": 60,
            "xla": False,
            "inputs": {"windows:window_end": {"sequence": "float32[6,3] in [0,1]", "start": 3}},
        }
    )
    targets = [t for t in targets_for_paths([path], settings, verify_settings) if t.fixes]
    results = {r["function"]: r for r in verify_targets(targets, verify_settings, tmp_path, jobs=1)}
    # `start = 3` ends the window past the sequence: traced, both sides build
    # `sequence[7]` in the branch not taken, and raise as the original does.
    window = results["window_end"]
    assert window["verdict"] == "not proven", window
    assert any("as the original does" in w for w in window["warnings"])
    names = {c["name"] for c in window["checks"]}
    assert CHECK_NO_AUTOGRAPH not in names
    assert any("still needs AutoGraph (line 8" in w for w in window["warnings"])
    # `clipped` lost its only tensor `if`: it must run without AutoGraph.
    clipped = results["clipped"]
    assert clipped["verdict"] == "equivalent", clipped
    assert CHECK_NO_AUTOGRAPH in {c["name"] for c in clipped["checks"]}
