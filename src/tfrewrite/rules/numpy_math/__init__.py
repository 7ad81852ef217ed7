"""NumPy math: NumPy functions (and the `max`/`min` builtins) applied to
tensors in traced code, which raise on symbolic tensors or freeze a value,
rewritten into their TensorFlow counterparts."""

from tfrewrite.rules.numpy_math import scopes
from tfrewrite.rules.registry import TRACED_CODE_ONLY, RuleSpec

RULES = (
    RuleSpec(
        code="TFR104",
        module="numpy_math",
        scope=scopes.numpy_math,
        relevance=TRACED_CODE_ONLY,
    ),
)
