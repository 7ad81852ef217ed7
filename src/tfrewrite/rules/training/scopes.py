"""Pre-parse checks of the training-step rules, on pass-1 facts alone (no
LibCST): see `facts.rule_scopes`."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tfrewrite.facts.index import ModuleIndex
    from tfrewrite.facts.rule_scopes import TracedFacts


def loss_decorator(index: ModuleIndex, traced: TracedFacts) -> bool:
    """TFR301: something wrapped in or decorated with `tf.function`."""
    return any(s.reason.startswith("wrapped in tf.function") for s in index.traced_sites) or any(
        d.endswith(".function") for info in index.functions.values() for d in info.decorators
    )


def train_step(index: ModuleIndex, traced: TracedFacts) -> bool:
    """TFR302: a function that opens a tape and applies gradients."""
    return any(f.trains for f in index.functions.values())


def gradient_tape(index: ModuleIndex, traced: TracedFacts) -> bool:
    """TFR303/TFR304/TFR305: a `GradientTape` opened anywhere."""
    return index.opens_gradient_tape


def model_calls_in_tapes(index: ModuleIndex, traced: TracedFacts) -> bool:
    """TFR304: a `GradientTape` opened here, or a method here that a train
    step's tape runs through an object its class holds (`TracedFunction.tapes`)."""
    return index.opens_gradient_tape or any(facts.tapes for facts in traced.values())


def averaging(index: ModuleIndex, traced: TracedFacts) -> bool:
    """TFR306: a name or a comprehension averaged (`np.mean(accs)`, or by a
    project function that averages its parameter), a
    `sum(...)` divided, a name divided that the file adds to with `+=`
    (`total / n_batches`), or a mean kept up to date pass by pass (`avg =
    (avg * i + v) / (i + 1)`): what every finding starts from."""
    from tfrewrite.facts.vocabulary import MEAN_FUNCTIONS

    averages = not index.averaged_callees.isdisjoint(MEAN_FUNCTIONS)
    helpers = index.callee_averaged_params
    averages = averages or (bool(helpers) and not index.called_names.isdisjoint(helpers))
    return (
        averages
        or index.divides_sum
        or index.divides_running_sum
        or index.updates_running_mean
        or _metric_class(index)
    )


def _metric_class(index: ModuleIndex) -> bool:
    """A `keras.metrics.Metric` subclass (`metric_counters`)."""
    from tfrewrite.facts.keras_names import keras_leaf

    return any(
        keras_leaf(base) == "Metric" for info in index.classes.values() for base in info.bases
    )


def eager_switch(index: ModuleIndex, traced: TracedFacts) -> bool:
    """TFR307: `run_functions_eagerly`, or `compile(run_eagerly=...)`, outside tests."""
    from tfrewrite.facts.vocabulary import is_test_path

    return index.switches_tracing_off and not is_test_path(index.path)


def layer_method_decorator(index: ModuleIndex, traced: TracedFacts) -> bool:
    """TFR308: a method decorated with `tf.function` in a Keras layer class
    that Keras 3 builds by running `call` (`ModuleIndex.built_by_running_call`)."""
    return any(
        qualname.rpartition(".")[0] in index.built_by_running_call
        and any(d.endswith(".function") for d in info.decorators)
        for qualname, info in index.functions.items()
    )
