"""A physics-informed net's shapes (`tests/physics_informed.py`):

- gradients taken with respect to what the object holds (`self.params`)
  are a training tape's, unlike a derivative of the output with respect
  to an input (`tp.gradient(u, x)`): the helper handing them back trains;
- a method of a `keras.Model` other than `call`, differentiated in that
  tape, is a loss (not the model's forward pass): its own `@tf.function`
  inside the decorated step is a nested, redundant boundary (TFR301);
- `ep_loss += loss_btch / int(n / batch)` over slices whose last is short
  averages per batch term by term (TFR306), where `loss / batch_size`
  is a mean of its own."""

from __future__ import annotations

import textwrap

from tests.physics_informed import PINN

from tfrewrite.api import check_source, fix_source
from tfrewrite.facts.index import build_index

SOURCE = textwrap.dedent(PINN)


def test_gradients_of_held_variables_train_and_of_an_input_do_not() -> None:
    index = build_index(SOURCE, "pinn.py", "pinn")
    assert index.functions["PINN.loss_grad"].trains
    assert not index.functions["PINN.residual"].trains


def test_the_decorated_loss_method_is_reported_and_fixed() -> None:
    [finding] = check_source(SOURCE, select=["TFR301"])
    assert finding.start.line == 24
    assert "nested, redundant graph boundary" in finding.message
    fixed = fix_source(SOURCE, select=["TFR301"])
    assert "    def loss_glb(self, x, u):" in fixed
    assert fixed.count("@tf.function") == 1
    assert fix_source(fixed, select=["TFR301"]) == fixed


def test_per_batch_terms_divided_by_the_number_of_batches_are_reported() -> None:
    [finding] = check_source(SOURCE, select=["TFR306"])
    assert finding.start.line == 52
    assert "`ep_loss` sums one value per batch" in finding.message


def test_terms_divided_by_the_batch_size_are_means_of_their_own() -> None:
    source = SOURCE.replace("loss_btch / int(n / batch)", "loss_btch / batch")
    assert check_source(source, select=["TFR306"]) == []


def test_a_model_method_reading_nothing_of_the_model_computes_no_loss() -> None:
    # A schedule of its argument weighing a loss term holds no variable:
    # its own decorator is no loss's (the method of the model is no loss).
    source = SOURCE.replace(
        "            loss = self.loss_glb(x, u)\n",
        "            loss = self.ramp(x) * self.loss_glb(x, u)\n",
    ).replace(
        "    def loss_grad(self, x, u):\n",
        "    @tf.function\n    def ramp(self, step):\n"
        "        return 0.5 * (1.0 - tf.sign(step))\n\n"
        "    def loss_grad(self, x, u):\n",
    )
    found = check_source(source, select=["TFR301"])
    assert [f.message.split("`")[3] for f in found] == ["loss_glb"]
