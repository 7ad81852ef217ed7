"""Randomness: NumPy and Python `random` draws in traced code, sampled once
at trace time (the "noise" is a constant), rewritten into `tf.random` with
the shape, dtype and seeding they had."""

from tfrewrite.rules.randomness import scopes
from tfrewrite.rules.registry import TRACED_CODE_ONLY, RuleSpec

RULES = (
    RuleSpec(
        code="TFR102",
        module="numpy_random",
        scope=scopes.numpy_random,
        relevance=TRACED_CODE_ONLY,
    ),
    RuleSpec(
        code="TFR106",
        module="python_random",
        scope=scopes.python_random,
        relevance=TRACED_CODE_ONLY,
    ),
)
