"""TFR308: `@tf.function` on a method of a Keras 3 layer that builds its sublayers."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from tfrewrite.facts.class_dispatch import methods_reached
from tfrewrite.facts.context import RuleContext
from tfrewrite.facts.keras_names import keras_leaf
from tfrewrite.facts.names import dotted_name
from tfrewrite.facts.tf_function import has_input_signature, tf_function_decorator
from tfrewrite.facts.vocabulary import weighted_layer
from tfrewrite.facts.walk import iter_nodes
from tfrewrite.findings import Applicability
from tfrewrite.rewrite.fixes import CstFix, NodeEdit, Violation
from tfrewrite.rules.base import Invalid, Rule, Valid

# How deep project layer classes held by a layer are followed for weights.
_MAX_NESTING = 4


class TfFunctionOnLayerMethod(Rule):
    code = "TFR308"
    name = "tf-function-on-layer-method"
    summary = (
        "`@tf.function` on a method of a Keras layer without `build` makes its sublayers' "
        "weights untrainable under Keras 3"
    )
    fix_applicability = Applicability.UNSAFE
    # The decorator is the hazard, wherever the method runs; removing it
    # changes no code a train step reaches from traced to eager.
    needs_traced_code = False
    blocks_decoration = False
    may_untrace = True
    # The page's `## Example` is the first `Invalid` example below (and its
    # `after`, once there is a fix): the explanation holds no example.
    explanation = """
    ## What it does
    Finds `@tf.function` on a method of a Keras layer or model (its `call`,
    or a method `call` reaches, such as `forward_pass`) that calls sublayers
    with weights (`Dense`, `Conv2D`, `BatchNormalization`, a `Sequential`
    of them, also of a list `__init__` fills first, or a layer class of the
    project, in any module, deriving from one, holding one or adding its
    own weights), in a class that, like every project class it derives
    from, has no `build` method.

    ## Why is this bad?
    A Keras 3 layer without `build` is built by running its `call` on
    symbolic inputs the first time it is called. The sublayers then create
    their weights inside the `tf.function` the decorator makes, and those
    weights get no gradients: a tape returns `None` for every one of them,
    and `fit` or `optimizer.apply_gradients` raise `ValueError: No gradients
    provided for any variable` (measured on TensorFlow 2.21 with Keras 3.15:
    whether the first call is eager, in a tape, in a traced train step or in
    `fit`). The same class trains under Keras 2 (`tf_keras`), and without
    the decorator under Keras 3. A layer that builds its sublayers in
    `build()` trains under both. Keras traces `call` already in `fit`, and
    inside a `@tf.function` train step: the decorator adds nothing there.

    A `tf.function` with an `input_signature` (a serving signature) on
    `call` leaves the weights without gradients the same way (measured):
    it is reported without a fix, since removing the decorator would drop
    the signature; build the sublayers in `build()` instead. Classes of the
    legacy `tf_keras` package are left alone. A class
    whose `__init__` runs `call` itself (`self.call(tf.ones([1, n]))`) is
    built by that run, not by Keras: its sublayers' weights are created in
    the first trace of the decorated `call` and train (measured the same).

    ## Fix safety
    The fix removes the decorator. It is unsafe: a method called from eager
    code then runs eagerly, op by op (slower, and Python in it runs on every
    call), and what it fixes is training itself, which `verify` cannot
    compare against the original that does not train.
    """
    examples = (
        Invalid(
            """
            import tensorflow as tf

            class Classifier(tf.keras.Model):
                def __init__(self):
                    super().__init__()
                    self.hidden = tf.keras.layers.Dense(32, activation="relu")
                    self.out = tf.keras.layers.Dense(10)

                @tf.function
                def call(self, x):
                    return self.out(self.hidden(x))
            """,
            """
            import tensorflow as tf

            class Classifier(tf.keras.Model):
                def __init__(self):
                    super().__init__()
                    self.hidden = tf.keras.layers.Dense(32, activation="relu")
                    self.out = tf.keras.layers.Dense(10)

                def call(self, x):
                    return self.out(self.hidden(x))
            """,
            unsafe=True,
        ),
        Invalid(
            """
            import tensorflow as tf

            class Encoder(tf.keras.layers.Layer):
                def __init__(self):
                    super().__init__()
                    self.blocks = [tf.keras.layers.Conv2D(8, 3) for _ in range(2)]

                def call(self, x, training=None):
                    return self.forward_pass(x, training)

                @tf.function
                def forward_pass(self, x, training):
                    for block in self.blocks:
                        x = block(x)
                    return x
            """,
            None,
            note="a decorated method `call` reaches, sublayers in a list",
        ),
        Valid(
            """
            import tensorflow as tf

            class Classifier(tf.keras.Model):
                def __init__(self):
                    super().__init__()
                    self.out = tf.keras.layers.Dense(10)

                def build(self, input_shape):
                    self.out.build(input_shape)

                @tf.function
                def call(self, x):
                    return self.out(x)
            """,
            note="the sublayers are built in `build()`",
        ),
        Valid(
            """
            import tensorflow as tf

            class Scale(tf.keras.layers.Layer):
                @tf.function
                def call(self, x):
                    return tf.nn.relu(x) * 2.0
            """,
            note="no sublayer with weights",
        ),
        Valid(
            """
            import tensorflow as tf

            class Exported(tf.keras.Model):
                def __init__(self):
                    super().__init__()
                    self.out = tf.keras.layers.Dense(1)

                @tf.function(input_signature=[tf.TensorSpec([None, 3])])
                def serve(self, x):
                    return self.out(x)
            """,
            note="a serving signature",
        ),
        Valid(
            """
            import tensorflow as tf

            class Policy(tf.keras.Model):
                def __init__(self, inputs):
                    super().__init__()
                    self.out = tf.keras.layers.Dense(2)
                    self.call(tf.ones([1, inputs]))

                @tf.function
                def call(self, x):
                    return self.out(x)
            """,
            note="`__init__` builds the sublayers by running `call` itself",
        ),
    )

    def check(self, ctx: RuleContext) -> Iterator[Violation]:
        built_by_call = ctx.index.built_by_running_call
        if not built_by_call:
            return
        for function in ctx.functions:
            if function.class_name not in built_by_call:
                continue
            decorator = tf_function_decorator(ctx, function.node)
            if decorator is None:
                continue
            owner = ctx.class_of(function)
            if owner is None:
                continue
            class_name, class_def = owner
            method = function.node.name.value
            if method not in methods_reached(ctx.index, class_name, "call"):
                continue  # Keras builds the layer by running `call`, and what it calls
            reads = {
                attr
                for name in methods_reached(ctx.index, class_name, method)
                for attr in ctx.index.functions[f"{class_name}.{name}"].self_reads
            }
            reached = sorted(_weighted_attributes(ctx, class_def, 0) & reads)
            if not reached:
                continue
            yield _violation(decorator, class_name, method, reached)


def _violation(
    decorator: cst.Decorator, class_name: str, method: str, reached: list[str]
) -> Violation:
    """The finding; its fix removes the decorator, unless the decorator
    carries a serving signature (`input_signature`) removing it would lose."""
    sublayers = ", ".join(f"`self.{a}`" for a in reached)
    message = (
        f"`@tf.function` on `{class_name}.{method}`: the class has no `build`, so Keras 3 "
        f"builds it by running `call` on symbolic inputs, and {sublayers} "
        f"{'create their' if len(reached) > 1 else 'creates its'} "
        "weights inside this `tf.function`, where they get no gradients (`fit` and "
        '`apply_gradients` raise "No gradients provided for any variable"); Keras '
        "traces `call` already: remove the decorator, or build the sublayers in `build()`"
    )
    if has_input_signature(decorator):
        # Removing it would drop the signature an export serves.
        message += " (no fix: the decorator carries an `input_signature`)"
        return Violation(decorator, message)
    fix = CstFix(
        f"Remove the `@tf.function` on `{method}` (unsafe: called from eager code it runs eagerly)",
        (NodeEdit(decorator, cst.RemovalSentinel.REMOVE),),
        applicability=Applicability.UNSAFE,
    )
    return Violation(decorator, message, fix)


def _init_assignments(class_def: cst.ClassDef) -> Iterator[tuple[str, cst.BaseExpression]]:
    """What the class's `__init__` puts in its attributes: (attr, value) for
    `self.<attr> = value`, `self.<attr>.append(value)` and, for a
    `Sequential` it fills layer by layer, `self.<attr>.add(value)`."""
    for item in class_def.body.body:
        if isinstance(item, cst.FunctionDef) and item.name.value == "__init__":
            for node in iter_nodes(item.body, into_functions=False):
                if isinstance(node, cst.Assign):
                    for target in node.targets:
                        attr = _own_attribute(target.target)
                        if attr is not None:
                            yield attr, node.value
                elif (
                    isinstance(node, cst.Call)
                    and isinstance(node.func, cst.Attribute)
                    and node.func.attr.value in ("append", "add")
                    and len(node.args) == 1
                ):
                    attr = _own_attribute(node.func.value)
                    if attr is not None:
                        yield attr, node.args[0].value


def _own_attribute(expr: cst.BaseExpression) -> str | None:
    """`attr` for `self.attr`."""
    written = dotted_name(expr) or ""
    return written[5:] if written.startswith("self.") and written.count(".") == 1 else None


def _weighted_attributes(ctx: RuleContext, class_def: cst.ClassDef, depth: int) -> set[str]:
    """Attributes `__init__` binds to sublayers that own weights: a layer
    Keras measures as weighted, a `Sequential` or list of them (also one
    `__init__` fills under a name first), or an object of a layer class of
    the project holding such sublayers."""
    lists = _local_lists(class_def)
    assigned = list(_init_assignments(class_def))
    # A `Sequential` filled by `add` whose first layer tells its input's
    # shape is built, weights and all, as it is filled.
    sequential = {
        attr
        for attr, value in assigned
        if isinstance(value, cst.Call)
        and keras_leaf(ctx.names.qualified_name(value.func)) == "Sequential"
    }
    built = {
        attr
        for attr, value in assigned
        if attr in sequential
        and isinstance(value, cst.Call)
        and _built_on_construction(ctx, cst.List([cst.Element(value)]), lists)
    }
    # `self.cell = cell`: what every call site building the class passes
    # there (`LSTM_Layer(LSTM_Cell(units))`), in any module.
    passed = ctx.index.param_classes.get(f"{class_def.name.value}.__init__", {})
    return {
        attr
        for attr, value in assigned
        if attr not in built
        and (
            _builds_weights(ctx, value, depth, lists)
            or _passed_weighted(ctx, passed.get(_name_of(value), ()))
        )
    }


def _name_of(value: cst.BaseExpression) -> str:
    return value.value if isinstance(value, cst.Name) else ""


def _passed_weighted(ctx: RuleContext, classes: tuple[str, ...]) -> bool:
    """A parameter every call site fills with an object of a project layer
    class holding weights (`ModuleIndex.weighted_classes`)."""
    return bool(classes) and all(c in ctx.index.weighted_classes for c in classes)


def _local_lists(class_def: cst.ClassDef) -> dict[str, list[cst.BaseExpression]]:
    """What `__init__` puts in each local list: `net = [a]`, `net.append(b)`
    (`self.net = Sequential(net)` then holds `a` and `b`); and the layer a
    local name is bound to (`conv = Conv2D(...)`, then `self.model = [conv,
    flat]`)."""
    found: dict[str, list[cst.BaseExpression]] = {}
    for item in class_def.body.body:
        if not (isinstance(item, cst.FunctionDef) and item.name.value == "__init__"):
            continue
        for node in iter_nodes(item.body, into_functions=False):
            if isinstance(node, cst.Assign) and isinstance(
                node.value, (cst.List, cst.ListComp, cst.Call)
            ):
                for target in node.targets:
                    if isinstance(target.target, cst.Name):
                        found.setdefault(target.target.value, []).append(node.value)
            elif (
                isinstance(node, cst.Call)
                and isinstance(node.func, cst.Attribute)
                and isinstance(node.func.value, cst.Name)
                and node.func.attr.value == "append"
                and len(node.args) == 1
            ):
                found.setdefault(node.func.value.value, []).append(node.args[0].value)
    return found


def _builds_weights(
    ctx: RuleContext,
    value: cst.BaseExpression,
    depth: int,
    lists: dict[str, list[cst.BaseExpression]],
) -> bool:
    if isinstance(value, (cst.List, cst.Tuple)):
        return any(_builds_weights(ctx, e.value, depth, lists) for e in value.elements)
    if isinstance(value, (cst.ListComp, cst.GeneratorExp)):
        return _builds_weights(ctx, value.elt, depth, lists)
    if isinstance(value, cst.Name):
        return any(_builds_weights(ctx, e, depth, lists) for e in lists.get(value.value, ()))
    if not isinstance(value, cst.Call):
        return False
    qualified = ctx.names.qualified_name(value.func)
    if weighted_layer(qualified) is not None or qualified in ctx.index.weighted_classes:
        return True
    if keras_leaf(qualified) == "Sequential":
        if value.args and _built_on_construction(ctx, value.args[0].value, lists):
            return False  # built with its weights where it is made
        return any(_builds_weights(ctx, a.value, depth, lists) for a in value.args[:1])
    name = dotted_name(value.func) or ""
    held = ctx.class_node(name)
    if held is None or depth >= _MAX_NESTING:
        return False
    # A class of this file: the project fact, or the sublayers its
    # `__init__` keeps in lists (which pass 1 does not follow).
    return ctx.index.qualify(name) in ctx.index.weighted_classes or bool(
        _weighted_attributes(ctx, held, depth + 1)
    )


# Keyword arguments by which a layer tells a `Sequential` its input's shape.
_INPUT_SHAPE_KEYWORDS = frozenset({"input_shape", "input_dim", "batch_input_shape"})


def _built_on_construction(
    ctx: RuleContext, layers: cst.BaseExpression, lists: dict[str, list[cst.BaseExpression]]
) -> bool:
    """Whether a `Sequential` of `layers` knows its input's shape when it is
    made (`keras.Input(...)` first, or a first layer given `input_shape=`):
    Keras builds it, weights and all, right there (measured under Keras 3),
    not in the first trace of a call."""
    if isinstance(layers, cst.Name):
        held = lists.get(layers.value, [])
        first = held[0] if held else None
        if isinstance(first, (cst.List, cst.Tuple)):
            first = first.elements[0].value if first.elements else None
    elif isinstance(layers, (cst.List, cst.Tuple)):
        first = layers.elements[0].value if layers.elements else None
    else:
        return False
    if not isinstance(first, cst.Call):
        return False
    if keras_leaf(ctx.names.qualified_name(first.func)) in ("Input", "InputLayer"):
        return True
    return any(
        a.keyword is not None and a.keyword.value in _INPUT_SHAPE_KEYWORDS for a in first.args
    )


RULES = (TfFunctionOnLayerMethod,)
