"""`print` of tensors in traced code -> `tf.print` (TFR103)."""

from tfrewrite.codemod import RuleCodemodCommand


class TensorPrintCommand(RuleCodemodCommand):
    DESCRIPTION = "Rewrite print() of tensors in traced code into tf.print()."
    RULES = ("TFR103",)
