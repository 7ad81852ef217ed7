"""`np.random` / `random` sampling in traced code -> `tf.random` (TFR102, TFR106)."""

from tfrewrite.codemod import RuleCodemodCommand


class TensorRandomCommand(RuleCodemodCommand):
    DESCRIPTION = "Rewrite NumPy and Python random sampling in traced code into tf.random."
    RULES = ("TFR102", "TFR106")
