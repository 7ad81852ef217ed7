"""Host values: traced code that reaches for a Python value of a tensor or
talks to the host: `print` (fires once, at trace time), `.numpy()`/`.item()`
and host conversions, Python iteration over a tensor (raise on symbolic
tensors), Python `logging`."""

from tfrewrite.rules.host_values import scopes
from tfrewrite.rules.registry import TRACED_CODE_ONLY, RuleSpec

RULES = (
    RuleSpec(
        code="TFR103",
        module="python_print",
        scope=scopes.prints,
        relevance=TRACED_CODE_ONLY,
    ),
    RuleSpec(
        code="TFR105",
        module="numpy_call",
        scope=scopes.host_conversion,
        relevance=TRACED_CODE_ONLY,
    ),
    RuleSpec(
        code="TFR108",
        module="tensor_iteration",
        scope=scopes.tensor_iteration,
        relevance=TRACED_CODE_ONLY,
    ),
    RuleSpec(
        code="TFR205",
        module="python_logging",
        scope=scopes.python_logging,
        relevance=TRACED_CODE_ONLY,
    ),
)
