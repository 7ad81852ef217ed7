"""Tensor conditions: Python `if`/`elif`/conditional expressions on tensors in
traced code, which work only through AutoGraph's generated code, and their
rewrite into `tf.cond` (the `cond_*` modules are that rewrite)."""

from tfrewrite.rules.registry import Relevance, RuleSpec
from tfrewrite.rules.tensor_conditions import scopes

RULES = (
    RuleSpec(
        code="TFR101",
        module="tensor_if",
        scope=scopes.tensor_if,
        relevance=Relevance(reads_callers=False, keras_ops=True),
    ),
)
