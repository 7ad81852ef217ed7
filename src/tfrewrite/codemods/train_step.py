"""Move `@tf.function` from losses to the train step and fix the loop (TFR3xx)."""

from tfrewrite.codemod import RuleCodemodCommand


class TrainStepCommand(RuleCodemodCommand):
    DESCRIPTION = "Move @tf.function from loss functions onto the training step."
    RULES = ("TFR3",)
    UNSAFE_FIXES = True
