"""Python state: traced code that depends on or changes Python state, which
tracing runs once: module flags frozen at the first trace, side effects
(appends, counters, iterators advanced, files written) that run once,
Python-scalar arguments that retrace, variables created on every call, and
Python values an op takes eagerly but not traced (a non-string `name`), and
`except` clauses for op errors, which a trace never sees raised.
Findings only: no rule here rewrites."""

from tfrewrite.rules.python_state import scopes
from tfrewrite.rules.registry import TRACED_CODE_ONLY, WITH_CALLERS, Relevance, RuleSpec

RULES = (
    RuleSpec(
        code="TFR201",
        module="module_state",
        scope=scopes.module_state,
        relevance=Relevance(reads_callers=True, state_writes=True),
    ),
    RuleSpec(
        code="TFR202",
        module="python_side_effects",
        scope=scopes.side_effects,
        relevance=Relevance(reads_callers=True, kept_attributes=True),
    ),
    RuleSpec(
        code="TFR203",
        module="retracing",
        scope=scopes.decorated,
        relevance=WITH_CALLERS,
    ),
    RuleSpec(
        code="TFR204",
        module="variable_creation",
        scope=scopes.variable_creation,
        relevance=TRACED_CODE_ONLY,
    ),
    RuleSpec(
        code="TFR206",
        module="op_name_arguments",
        scope=scopes.op_names,
        relevance=TRACED_CODE_ONLY,
    ),
    RuleSpec(
        code="TFR207",
        module="caught_op_errors",
        scope=scopes.caught_op_errors,
        relevance=TRACED_CODE_ONLY,
    ),
)
