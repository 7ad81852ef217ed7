"""Train steps nothing in the project runs, verified through the harnesses
verify writes with stand-ins: a trainer method whose random step and new
`tf.cond` are proven on a stand-in model, a wrong rewrite of it caught, a
step function with integer labels, and an agent whose environment verify
cannot make left to the user's harness. End to end, the command writes the
harness it ran where the user can take it."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
from tests.stand_in_steps import AGENT, FUNCTION, TRAINER
from typer.testing import CliRunner

from tfrewrite.verify.checks import Request, verify
from tfrewrite.verify.command import register
from tfrewrite.verify.harness import CHECK_WEIGHTS

pytestmark = pytest.mark.tensorflow

HINT = "write verify_harness.py for it"
DRAW = 'np.random.normal(0.0, self.noise_scale, size=x.shape).astype("float32")'
TRAINER_FIXED = TRAINER.replace(
    DRAW, "tf.random.normal(tf.shape(x), 0.0, self.noise_scale)"
).replace(
    "        if loss > 0.2:\n            loss = loss * 0.5\n",
    "        loss = tf.cond(loss > 0.2, lambda: loss * 0.5, lambda: loss)\n",
)


def _verify(original: str, rewrite: str | None, qualname: str) -> dict:
    return verify(Request(qualname, original, rewrite, stand_in_hint=HINT))


def test_a_trainer_method_is_proven_on_stand_ins() -> None:
    result = _verify(TRAINER, TRAINER_FIXED, "Trainer.train_step")
    assert result["verdict"] == "equivalent", result
    assert result["inputs"][0].startswith("a harness verify wrote: model = tf.keras.Sequential")
    assert any("proven on stand-ins" in w for w in result["warnings"])
    assert "def build():" in result["generated_harness"]
    assert all(b["true"] and b["false"] for b in result["branches"])


def test_a_wrong_rewrite_of_the_trainer_step_is_a_mismatch() -> None:
    broken = TRAINER_FIXED.replace("lambda: loss * 0.5", "lambda: loss * 0.4")
    assert _verify(TRAINER, broken, "Trainer.train_step")["verdict"] == "mismatch"


def test_a_step_function_with_integer_labels_is_proven() -> None:
    fixed = FUNCTION.replace('print("loss", loss)', 'tf.print("loss", loss)')
    result = _verify(FUNCTION, fixed, "train_step")
    assert result["verdict"] == "equivalent", result
    assert "int32" in result["inputs"][0] or "int64" in result["inputs"][0]
    weights = next(c for c in result["checks"] if c["name"] == CHECK_WEIGHTS)
    assert weights["runs"] > 0  # the model the step takes as `net` is compared too


def test_an_environment_leaves_the_step_to_the_users_harness() -> None:
    fixed = AGENT.replace(
        "        if loss > 1.0:\n            loss = loss / self.env.scale\n",
        "        loss = tf.cond(loss > 1.0, lambda: loss / self.env.scale, lambda: loss)\n",
    )
    result = _verify(AGENT, fixed, "Agent.update")
    assert result["verdict"] == "not proven"
    assert HINT in result["unproven"] and "`env`" in result["unproven"]


def test_the_command_proves_the_step_and_writes_its_harness(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "trainer.py").write_text(TRAINER)
    app = typer.Typer()
    register(app)

    @app.callback()
    def _main() -> None:
        """tfrewrite"""

    result = CliRunner().invoke(app, ["verify", str(project), "--unsafe-fixes"])
    assert result.exit_code == 0, result.output
    assert "EQUIVALENT" in result.output
    written = list(tmp_path.rglob("*_harness.py"))
    assert len(written) == 1 and "def build():" in written[0].read_text()
    assert f"the harness verify wrote is {written[0]}" in result.output.replace("\n  ", " ")


def test_a_method_of_a_class_holding_models_is_proven_on_stand_ins() -> None:
    from tests.stand_in_steps import CRITIC

    fixed = CRITIC.replace(
        "        if gap > 0.0:\n            gap = gap * 2.0\n",
        "        gap = tf.cond(gap > 0.0, lambda: gap * 2.0, lambda: gap)\n",
    )
    result = verify(Request("WassersteinGAN.critic_loss", CRITIC, fixed))
    assert result["verdict"] == "equivalent", result
    assert any("was built with stand-ins" in w for w in result["warnings"])
