"""TFR204: a `tf.Variable`, metric or optimizer created in traced code."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import libcst as cst

from tfrewrite.facts.context import FunctionScope, RuleContext
from tfrewrite.facts.keras_weighted_layers import SEED_ONLY_LAYERS
from tfrewrite.facts.names import dotted_name
from tfrewrite.facts.training import value_sources
from tfrewrite.facts.vocabulary import (
    GET_VARIABLE,
    SETUP_METHODS,
    creates_variables,
    weighted_layer,
)
from tfrewrite.facts.walk import iter_nodes, iter_with_ancestors
from tfrewrite.findings import Applicability
from tfrewrite.rewrite.fixes import Violation
from tfrewrite.rules.base import Invalid, Rule, Valid
from tfrewrite.rules.python_state.run_once import under_unset_test


def _guarded(ancestors: Sequence[cst.CSTNode], ctx: RuleContext) -> bool:
    """Inside `if self.v is None:` / `if not self.built:` (created once, the
    documented singleton pattern: `run_once`) or `with tf.init_scope():`."""
    if under_unset_test(ancestors):
        return True
    for ancestor in ancestors:
        if isinstance(ancestor, cst.With):
            for item in ancestor.items:
                expr = item.item.func if isinstance(item.item, cst.Call) else item.item
                if (ctx.names.qualified_name(expr) or "").endswith("init_scope"):
                    return True
    return False


def _called_only_when_guarded(ctx: RuleContext, scope: FunctionScope) -> bool:
    """A helper that creates the variable, called in this file only under a
    run-once guard (`if self.memory is None: self.memory = make_memory(x)`):
    the variable is created once, as if written under the guard itself."""
    traced = scope.runs_traced
    if traced is None or traced.has_own_decorator:
        return False
    if not all(caller in ctx.index.functions for caller in traced.traced_callers):
        return False  # called from traced code of another module, as it is written there
    name = scope.node.name.value
    called = {name, f"self.{name}"} if "." in scope.qualname else {name}
    calls = [
        ancestors
        for node, ancestors in iter_with_ancestors(ctx.module)
        if isinstance(node, cst.Call) and dotted_name(node.func) in called
    ]
    return bool(calls) and all(_guarded(ancestors, ctx) for ancestors in calls)


class VariableCreatedInTracedCode(Rule):
    code = "TFR204"
    name = "variable-created-in-traced-code"
    summary = "A `tf.Variable`, metric or optimizer created in traced code raises on the next trace"
    fix_applicability = Applicability.NONE
    explanation = """
    ## What it does
    Finds traced code that creates a `tf.Variable`, a Keras metric object,
    a Keras optimizer or a Keras layer that owns variables on every call:
    `tf.Variable(0.0)` in a `@tf.function`, `tf.keras.metrics.Mean()` in a
    train step, a fresh optimizer per fold inside the step,
    `layers.Conv1D(...)(x)` in a layer's `call`.

    ## Why is this bad?
    Eagerly, each call gets a fresh object and the code works. A
    `tf.function` lifts variables out of the graph and allows them only on
    the first trace: creating them again raises `ValueError: tf.function
    only supports singleton tf.Variables created on the first call`
    (measured on TensorFlow 2.21). A metric or optimizer creates variables
    when it is built, so the same error appears, or its state silently
    restarts on every call.

    A Keras layer with weights (`Dense`, `Conv1D`, `LSTM`,
    `BatchNormalization`, ...) built where it is called creates them anew
    on every call: eagerly its output comes from fresh random weights each
    time and nothing trains them; traced, it raises the same error. Keras
    3's random layers (`Dropout`, `GaussianNoise`, the random augmentation
    layers) create a variable for their seed generator when they are
    constructed, and raise likewise. Which layers create variables is
    measured on Keras (`scripts/keras_weighted_layers.py`), not listed by
    hand; layers without variables (`Flatten`, `MaxPool1D`, `Activation`,
    `Concatenate`, ...) may be built in `call`.

    Creation guarded so that it runs once (`if self.v is None:`, `if not
    self.built:`, `with tf.init_scope():`), also in a helper that the
    file calls only under such a guard (`if self.memory is None:
    self.memory = make_memory(x)`), and creation in `__init__` or
    `build` are not reported. `tf.compat.v1.get_variable` is reported
    even when guarded: in a trace it goes through TensorFlow 1's variable
    store, where names are shared, so a second object creating a variable
    of the same name in one trace raises `AttributeError` (measured on
    TensorFlow 2.21), where eagerly each call gets its own. An undecorated
    train step that TFR302 will decorate is checked too: the error would
    appear once it is decorated. A training loop whose step reaches such
    code is not extracted into a `@tf.function` step (TFR303).

    ## How to fix it
    Create the object once, outside the traced function (in `__init__`,
    `build`, or where the model is built) and update it inside with
    `assign`, `update_state` or `apply_gradients`; build a layer in
    `__init__` (`self.conv = layers.Conv1D(...)`) and call it in `call`
    (`self.conv(x)`).

    ## Fix safety
    There is no automatic fix: where the object belongs depends on its
    lifetime.
    """
    examples = (
        Invalid(
            """
            import tensorflow as tf

            @tf.function
            def count(x):
                total = tf.Variable(0.0)
                total.assign_add(tf.reduce_sum(x))
                return total.read_value()
            """
        ),
        Invalid(
            """
            import tensorflow as tf

            @tf.function
            def evaluate(model, x, y):
                accuracy = tf.keras.metrics.SparseCategoricalAccuracy()
                accuracy.update_state(y, model(x))
                return accuracy.result()
            """
        ),
        Invalid(
            """
            import tensorflow as tf
            from tensorflow.keras import layers

            class Encoder(tf.keras.layers.Layer):
                def call(self, x):
                    h = layers.Conv1D(filters=8, kernel_size=3, activation="relu")(x)
                    return layers.Flatten()(h)
            """
        ),
        Valid(
            """
            import tensorflow as tf
            from tensorflow.keras import layers

            class Encoder(tf.keras.layers.Layer):
                def __init__(self):
                    super().__init__()
                    self.conv = layers.Conv1D(filters=8, kernel_size=3, activation="relu")

                def call(self, x):
                    h = self.conv(x)
                    return layers.Flatten()(layers.MaxPool1D(2)(h))
            """,
            note="weights built once in `__init__`; weightless layers may be built in `call`",
        ),
        Valid(
            """
            import tensorflow as tf

            class Counter(tf.Module):
                def __init__(self):
                    self.total = None

                @tf.function
                def __call__(self, x):
                    if self.total is None:
                        self.total = tf.Variable(0.0)
                    self.total.assign_add(tf.reduce_sum(x))
                    return self.total.read_value()
            """,
            note="created once: the documented singleton pattern",
        ),
        Valid(
            """
            import tensorflow as tf

            class Scale(tf.keras.layers.Layer):
                def build(self, input_shape):
                    self.scale = self.add_weight(shape=(), initializer="ones")

                def call(self, inputs):
                    return inputs * self.scale
            """,
            note="weights belong in `build`",
        ),
        Valid(
            """
            import tensorflow as tf

            accuracy = tf.keras.metrics.SparseCategoricalAccuracy()

            @tf.function
            def evaluate(model, x, y):
                accuracy.update_state(y, model(x))
                return accuracy.result()
            """,
            note="the metric is created once, outside",
        ),
    )

    def check(self, ctx: RuleContext) -> Iterator[Violation]:
        for function in ctx.traced_functions():
            yield from self._check(ctx, function)

    def _check(self, ctx: RuleContext, root: FunctionScope) -> Iterator[Violation]:
        guarded_helpers: dict[int, bool] = {}  # per scope: `_called_only_when_guarded`
        for node, ancestors in iter_with_ancestors(root.node.body):
            if not isinstance(node, cst.Call):
                continue
            qualified = ctx.names.qualified_name(node.func)
            if qualified == GET_VARIABLE:
                scope = ctx.innermost_scope(root, ancestors)
                if scope.node.name.value != "__init__":
                    yield Violation(node, _get_variable_message(scope.qualname))
                continue
            what = creates_variables(qualified)
            if what is None:
                continue
            scope = ctx.innermost_scope(root, ancestors)
            if scope.node.name.value in SETUP_METHODS or _guarded(ancestors, ctx):
                continue
            once = guarded_helpers.get(id(scope.node))
            if once is None:
                once = guarded_helpers[id(scope.node)] = _called_only_when_guarded(ctx, scope)
            if once:
                continue
            if any(isinstance(a, cst.Lambda) for a in ancestors):
                continue
            traced = scope.runs_traced or root.runs_traced
            when = (
                "once it is decorated (TFR302), " if traced is not None and traced.pending else ""
            )
            layer = weighted_layer(ctx.names.qualified_name(node.func))
            if layer is not None:
                if layer in _WRAPPERS and _wraps_weightless_cell(ctx, node):
                    continue  # `RNN(cell)` of a cell of this file that holds no variable
                yield Violation(node, _layer_message(layer, scope.qualname, when))
                continue
            yield Violation(
                node,
                f"{what} is created on every call of traced `{scope.qualname}`: {when}tracing "
                f"{_RAISES}; create it once outside (in `__init__`, `build`, or next to the "
                "model) and update it inside",
            )


# Keras layers whose variables are those of the layer or cell they are given
# first (`RNN(cell)`, `Bidirectional(layer)`): measured with weighted ones.
_WRAPPERS = frozenset({"RNN", "Bidirectional", "TimeDistributed"})
# What creates variables in a class of the project.
_WEIGHT_METHODS = frozenset({"add_weight", "add_variable"})


def _wraps_weightless_cell(ctx: RuleContext, wrapper: cst.Call) -> bool:
    """Whether `RNN(cell)` wraps an object of a class of this file that
    creates no variable: it derives from no weighted Keras layer and no class
    of the project, and its body creates no `add_weight`, `tf.Variable`,
    weighted Keras layer nor object of another class of the project or of
    unknown origin (a CRF decoding cell computing from the transition matrix
    it is given). An unknown class may hold weights: False."""
    args = [a.value for a in wrapper.args if a.keyword is None and not a.star]
    args += [a.value for a in wrapper.args if a.keyword and a.keyword.value in ("cell", "layer")]
    if not args:
        return False
    built = args[0]
    if isinstance(built, cst.Name):
        sources = [s for s in value_sources(ctx, built)[1:] if isinstance(s, cst.Call)]
        built = sources[0] if len(sources) == 1 else built
    if not isinstance(built, cst.Call) or not isinstance(built.func, cst.Name):
        return False
    cls = ctx.class_node(built.func.value)
    if cls is None:
        return False
    for base in cls.bases:
        # A cell of Keras with weights of its own (`GRUCell`) or another class
        # of the project may hold variables the class body does not show.
        qualified = ctx.names.qualified_name(base.value)
        if weighted_layer(qualified) is not None or qualified is None:
            return False
        if ctx.index.local(qualified) in ctx.index.classes:
            return False
    for node in iter_nodes(cls):
        if not isinstance(node, cst.Call):
            continue
        if isinstance(node.func, cst.Attribute) and node.func.attr.value in _WEIGHT_METHODS:
            return False
        qualified = ctx.names.qualified_name(node.func)
        if creates_variables(qualified) is not None or weighted_layer(qualified) is not None:
            return False
        if isinstance(node.func, cst.Name) and node.func.value[:1].isupper():
            # `Gate(...)`: a layer of the project, or a class of unknown origin.
            if qualified is None or ctx.index.local(qualified) in ctx.index.classes:
                return False
    return True


def _get_variable_message(qualname: str) -> str:
    return (
        f"`tf.compat.v1.get_variable` in traced `{qualname}` creates its variable in "
        "TensorFlow 1's variable store, shared by name: eagerly each call makes a new "
        "variable, but in a trace a second variable of the same name (another object of the "
        "class, or the next trace) raises, and an eager call after a trace reuses the name and "
        "raises too; create the variable with `tf.Variable` (or `add_weight`) once, in "
        "`__init__` or `build`"
    )


_RAISES = (
    'allows variables only on the first call and raises "tf.function only supports '
    'singleton tf.Variables created on the first call"'
)


def _layer_message(layer: str, qualname: str, when: str) -> str:
    """A layer built where it is called: what it creates and where it belongs."""
    if layer in SEED_ONLY_LAYERS:
        made = "a new variable for its random seed generator (Keras 3)"
    else:
        made = "new weights, and eagerly starts from fresh random ones each call"
    return (
        f"a Keras `{layer}` layer is built on every call of traced `{qualname}`: it creates "
        f"{made}; {when}tracing {_RAISES}; build the layer once in `__init__` or `build` and "
        "call it here"
    )


RULES = (VariableCreatedInTracedCode,)
