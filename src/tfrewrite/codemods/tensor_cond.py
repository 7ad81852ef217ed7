"""Tensor-dependent Python `if` in traced code -> `tf.cond` (TFR101)."""

from tfrewrite.codemod import RuleCodemodCommand


class TensorCondCommand(RuleCodemodCommand):
    DESCRIPTION = "Rewrite tensor-dependent Python if statements and expressions into tf.cond."
    RULES = ("TFR101",)
