"""Static shapes: shapes read as Python values in traced code (`x.shape[0]`
passed to an op), unknown (`None`) once a dimension is dynamic, rewritten
into `tf.shape`."""

from tfrewrite.rules.registry import TRACED_CODE_ONLY, RuleSpec
from tfrewrite.rules.static_shapes import scopes

RULES = (
    RuleSpec(
        code="TFR107",
        module="static_shape",
        scope=scopes.static_shape,
        relevance=TRACED_CODE_ONLY,
    ),
)
