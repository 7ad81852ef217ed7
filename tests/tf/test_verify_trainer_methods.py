"""A train step that is a method of a trainer whose `__init__` takes the
model and optimizer: under a harness, each run builds the trainer from the
harness entries named as `__init__`'s parameters and trains that model. A
step that draws fresh noise is compared by distribution over seeds; a
rewrite that draws other noise, or trains on another loss, is a mismatch."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.stand_in_steps import TRAINER

from tfrewrite.verify.checks import Request, verify
from tfrewrite.verify.harness import CHECK_LOSSES, CHECK_WEIGHTS

pytestmark = pytest.mark.tensorflow

HERE = Path(__file__).parent.parent / "data" / "verify" / "trainer_method"

ORIGINAL = TRAINER

DRAW = 'np.random.normal(0.0, self.noise_scale, size=x.shape).astype("float32")'
REWRITE = ORIGINAL.replace(DRAW, "tf.random.normal(tf.shape(x), 0.0, self.noise_scale)")


@pytest.fixture(autouse=True)
def _harness_importable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(HERE))


def _verify(original: str, rewrite: str) -> dict:
    request = Request("Trainer.train_step", original, rewrite, harness="trainer_harness:build")
    return verify(request)


def _checks(result: dict) -> dict[str, dict]:
    return {c["name"]: c for c in result["checks"]}


def test_the_trainer_is_built_from_the_harness_and_its_random_step_proven() -> None:
    result = _verify(ORIGINAL, REWRITE)
    assert result["verdict"] == "equivalent", result
    checks = _checks(result)
    assert checks[CHECK_LOSSES]["ok"] and checks[CHECK_WEIGHTS]["ok"]
    assert any("compared by distribution" in line for line in result["inputs"])


def test_a_deterministic_trainer_step_is_compared_value_for_value() -> None:
    original = ORIGINAL.replace(DRAW, "0.0")
    result = _verify(original, original.replace("    @tf.function\n", ""))
    assert result["verdict"] == "equivalent", result
    assert not any("distribution" in line for line in result["inputs"])


@pytest.mark.parametrize(
    "broken",
    [
        REWRITE.replace("0.0, self.noise_scale)", "0.0, 3.0 * self.noise_scale)"),
        REWRITE.replace("0.0, self.noise_scale)", "0.5, self.noise_scale)"),
        REWRITE.replace("tf.square(", "1.5 * tf.square("),
    ],
    ids=["wider-noise", "shifted-noise", "scaled-loss"],
)
def test_a_wrong_rewrite_of_a_random_trainer_step_is_a_mismatch(broken: str) -> None:
    assert _verify(ORIGINAL, broken)["verdict"] == "mismatch"
