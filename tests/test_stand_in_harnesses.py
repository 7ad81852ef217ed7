"""The harnesses verify writes for a train step nothing in its project runs
(`verify/stand_ins.py`): a model is what the step calls or reads variables
of, an optimizer what it applies gradients with, sizes come from names, and
the batches are drawn from how the step uses them. A parameter that is none
of these (an environment) leaves the step to the user's harness."""

from __future__ import annotations

import ast

from tests.stand_in_steps import AGENT, FUNCTION, TRAINER

from tfrewrite.verify import stand_ins


def test_a_trainer_method_gets_a_model_an_optimizer_and_batches() -> None:
    found, why = stand_ins.for_step(TRAINER, "Trainer.train_step")
    assert why is None and found
    first = found[0]
    ast.parse(first.source)  # Python a user can keep
    assert "model = tf.keras.Sequential([tf.keras.layers.Dense(4)])" in first.source
    assert "optimizer = tf.keras.optimizers.SGD(0.01)" in first.source
    assert "noise_scale" not in first.source  # it has a default
    assert '"batches": batches' in first.source
    assert first.source.count("size=(8, 4)") == 4 and "size=(3, 4)" in first.source
    assert first.described.startswith("model = tf.keras.Sequential")


def test_a_step_function_gets_its_model_and_optimizer_by_use_and_integer_labels() -> None:
    found, why = stand_ins.for_step(FUNCTION, "train_step")
    assert why is None
    source = next(h.source for h in found if "rng.integers" in h.source)
    assert "net = tf.keras.Sequential(" in source and "opt = tf.keras.optimizers.SGD" in source
    assert '"net": net, "opt": opt, "batches": batches' in source


def test_a_width_of_one_is_tried_after_the_classes() -> None:
    found, _ = stand_ins.for_step(TRAINER, "Trainer.train_step")
    widths = [h.source.split("Dense(")[1].split(")")[0] for h in found]
    assert widths[0] == "4" and "1" in widths


def test_an_environment_is_no_stand_in() -> None:
    found, why = stand_ins.for_step(AGENT, "Agent.update")
    assert found == []
    assert why is not None and "`env`" in why and "Agent.__init__" in why


def test_sizes_and_rates_by_their_names() -> None:
    assert stand_ins.guessed_number("n_actions") == 4
    assert stand_ins.guessed_number("learning_rate") == 0.001
    assert stand_ins.guessed_number("gamma") == 0.9
    assert stand_ins.guessed_number("env") is None


def test_a_class_holding_models_is_built_on_stand_ins() -> None:
    from tests.stand_in_steps import CRITIC

    codes = stand_ins.class_stand_ins(CRITIC, "WassersteinGAN")
    assert codes is not None
    assert codes["critic"].startswith("tf.keras.Sequential([tf.keras.layers.Dense(4)])")
    assert codes["generator"] == "None"  # kept, never used where verify looks


def test_a_class_without_a_model_gets_no_stand_ins() -> None:
    assert stand_ins.class_stand_ins(AGENT, "Agent") is None
