"""Tensor conditions: Python `if`/`elif`/conditional expressions, and the
`and`/`or`/`not` outside them, testing tensors in traced code, which work
only through AutoGraph's generated code, and their rewrite into `tf.cond`
and `tf.logical_*` (the `cond_*` modules are that rewrite); and a tensor
given as `training` to a Keras 3 layer, which tests it in Python."""

from tfrewrite.rules.registry import Relevance, RuleSpec
from tfrewrite.rules.tensor_conditions import scopes

RULES = (
    RuleSpec(
        code="TFR101",
        module="tensor_if",
        scope=scopes.tensor_if,
        relevance=Relevance(reads_callers=False, keras_ops=True),
    ),
    RuleSpec(
        code="TFR109",
        module="tensor_bool_op",
        scope=scopes.tensor_if,
        relevance=Relevance(reads_callers=False),
    ),
    RuleSpec(
        code="TFR110",
        module="tensor_training_flag",
        scope=scopes.tensor_if,
        relevance=Relevance(reads_callers=False),
    ),
)
