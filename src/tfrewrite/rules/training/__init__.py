"""Training steps: where the `@tf.function` goes and what a train step needs
to train right: the decorator on the loss instead of the step, an
undecorated step or an inline training loop, `model(x)` without
`training=True` in a tape, the loss computed outside the tape, per-batch
metric averages, `run_functions_eagerly` left on, `@tf.function` on a Keras
layer's method that builds its sublayers."""

from tfrewrite.rules.registry import TRACED_CODE_ONLY, WITH_CALLERS, Relevance, RuleSpec
from tfrewrite.rules.training import scopes

# The tape and loop rules look up, by name anywhere in the file, what a model,
# a lambda or a dataset is.
_LOOP = Relevance(reads_callers=True, inputs_by_name=True)

RULES = (
    RuleSpec(
        code="TFR301",
        module="loss_decorator",
        scope=scopes.loss_decorator,
        relevance=WITH_CALLERS,
    ),
    RuleSpec(
        code="TFR302",
        module="train_step",
        scope=scopes.train_step,
        relevance=_LOOP,
    ),
    RuleSpec(
        code="TFR303",
        module="inline_loop",
        scope=scopes.gradient_tape,
        relevance=_LOOP,
    ),
    RuleSpec(
        code="TFR304",
        module="tape_checks",
        scope=scopes.model_calls_in_tapes,
        relevance=_LOOP,
    ),
    RuleSpec(
        code="TFR305",
        module="loss_outside_tape",
        scope=scopes.gradient_tape,
        relevance=_LOOP,
    ),
    RuleSpec(
        code="TFR306",
        module="metric_averaging",
        scope=scopes.averaging,
        relevance=Relevance(reads_callers=True, averages=True, inputs_by_name=True),
    ),
    RuleSpec(
        code="TFR307",
        module="eager_switch",
        scope=scopes.eager_switch,
        relevance=WITH_CALLERS,
    ),
    RuleSpec(
        code="TFR308",
        module="layer_method_decorator",
        scope=scopes.layer_method_decorator,
        relevance=TRACED_CODE_ONLY,  # with `__init__` of the classes of kept methods
    ),
)
