"""TFR201: mutable module-level Python state read in traced code."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from tfrewrite.analysis.index import ModuleIndex
from tfrewrite.analysis.state import (
    AttributeWrites,
    attribute_writes,
    is_setup_method,
    module_containers,
    rebound_in_loops,
    subscript_writes,
)
from tfrewrite.analysis.tensors import local_names
from tfrewrite.analysis.walk import iter_with_ancestors
from tfrewrite.context import FunctionScope, RuleContext
from tfrewrite.findings import Applicability
from tfrewrite.rules.base import Invalid, Rule, Valid, Violation


def _is_python_literal(node: cst.BaseExpression) -> bool:
    if isinstance(node, (cst.Integer, cst.Float, cst.SimpleString, cst.ConcatenatedString)):
        return True
    if isinstance(node, cst.Name):
        return node.value in ("True", "False", "None")
    if isinstance(node, cst.UnaryOperation):
        return _is_python_literal(node.expression)
    return False


def _module_literals(module: cst.Module) -> set[str]:
    """Names bound at module level to a Python literal (a flag, a number, a
    string): the values tracing freezes."""
    names: set[str] = set()
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.Assign) and _is_python_literal(small.value):
                targets = [t.target for t in small.targets]
                names.update(t.value for t in targets if isinstance(t, cst.Name))
            elif isinstance(small, cst.AnnAssign) and small.value is not None:
                if isinstance(small.target, cst.Name) and _is_python_literal(small.value):
                    names.add(small.target.value)
    return names


def _is_read(node: cst.Name, parent: cst.CSTNode | None) -> bool:
    """A `Name` that reads a variable (not an attribute, keyword, or binding)."""
    if parent is None:
        return True
    if isinstance(parent, cst.Attribute) and parent.attr is node:
        return False
    if isinstance(parent, cst.Arg) and parent.keyword is node:
        return False
    return not isinstance(
        parent,
        (
            cst.AssignTarget,
            cst.Param,
            cst.FunctionDef,
            cst.ClassDef,
            cst.ImportAlias,
            cst.AsName,
            cst.NameItem,
        ),
    )


class ModuleStateInTracedCode(Rule):
    code = "TFR201"
    name = "module-state-in-traced-code"
    summary = "Mutable module-level Python value read in traced code is frozen at trace time"
    fix_applicability = Applicability.NONE
    explanation = """
    ## What it does
    Finds traced functions that read a module-level Python value (a flag, a
    number, a string) that the module rebinds somewhere else (a `global`
    assignment in a function, or a second module-level assignment).

    ## Why is this bad under tracing?
    `@tf.function` reads Python values once, while tracing, and bakes them
    into the graph. Changing the flag later changes nothing: the traced loss
    keeps the branch of its first call (measured: 0.6667 before and after the
    flag flipped). Eagerly, the same code follows the flag.

    ## How to fix it
    Make the value a graph input: pass it as an argument (a `tf.constant` or a
    tensor, not a Python bool, which would retrace), or keep it in a
    `tf.Variable` and `assign` it. There is no automatic fix: which of these
    fits depends on how often the value changes. `tfrewrite verify` shows the
    value that froze.
    """
    examples = (
        Invalid(
            """
            import tensorflow as tf

            use_absolute_error = False

            @tf.function
            def loss(y_true, y_pred):
                if use_absolute_error:
                    return tf.reduce_mean(tf.abs(y_true - y_pred))
                return tf.reduce_mean(tf.square(y_true - y_pred))

            def enable_absolute_error():
                global use_absolute_error
                use_absolute_error = True
            """
        ),
        Invalid(
            """
            import tensorflow as tf

            scale = 1.0
            scale = 2.0

            @tf.function
            def loss(y_true, y_pred):
                return scale * tf.reduce_mean(tf.square(y_true - y_pred))
            """
        ),
        Invalid(
            """
            import tensorflow as tf

            CONFIG = {"margin": 1.0}

            @tf.function
            def loss(y_true, y_pred):
                return tf.reduce_mean(tf.maximum(CONFIG["margin"] - y_true * y_pred, 0.0))

            def anneal():
                CONFIG["margin"] = 0.5
            """
        ),
        Invalid(
            """
            import numpy as np
            import tensorflow as tf

            class Agent:
                def __init__(self, model):
                    self.model = model
                    self.is_weight = 1.0
                    self.model.compile(optimizer="adam", loss=self._weighted_loss)

                def _weighted_loss(self, y_true, y_pred):
                    return tf.reduce_mean(self.is_weight * tf.square(y_true - y_pred))

                def train_step(self, weights):
                    self.is_weight = np.asarray(weights)
            """
        ),
        Invalid(
            """
            import tensorflow as tf

            def main(dataset):
                scale = 1.0

                @tf.function
                def step(x):
                    return x * scale

                for epoch in range(3):
                    scale = scale * 0.5
                    for x in dataset:
                        step(x)
            """
        ),
        Valid(
            """
            import tensorflow as tf

            class Scaled(tf.keras.layers.Layer):
                def __init__(self, scale=2.0):
                    super().__init__()
                    self.scale = scale

                def build(self, input_shape):
                    self.kernel = self.add_weight(shape=(input_shape[-1],))

                def call(self, inputs):
                    return inputs * self.kernel * self.scale
            """,
            note="attributes set up once, in `__init__` and `build`",
        ),
        Valid(
            """
            import tensorflow as tf

            SCALE = 2.0

            @tf.function
            def loss(y_true, y_pred):
                return SCALE * tf.reduce_mean(tf.square(y_true - y_pred))
            """,
            note="a module constant bound once is not state",
        ),
        Valid(
            """
            use_absolute_error = False

            def loss(y_true, y_pred):
                return abs(y_true - y_pred) if use_absolute_error else (y_true - y_pred) ** 2

            def enable():
                global use_absolute_error
                use_absolute_error = True
            """,
            note="not traced",
        ),
    )

    def applies_to(self, index: ModuleIndex, traced_qualnames: set[str]) -> bool:
        """Only files where some state can change (pass-1 facts): a rebound
        module name, items of a module name assigned, a traced method whose
        class writes `self` attributes outside set-up methods, or a traced
        function nested in an untraced one."""
        if not traced_qualnames:
            return False
        if index.rebound_module_names or (index.item_writes & index.module_names):
            return True
        for qualname in traced_qualnames:
            info = index.functions.get(qualname)
            if info is None:
                continue
            parent = qualname.rpartition(".")[0]
            if info.class_name is not None:
                prefix = info.class_name + "."
                if any(
                    other.self_writes and not is_setup_method(other.qualname.rpartition(".")[2])
                    for name, other in index.functions.items()
                    if name.startswith(prefix)
                ):
                    return True
            elif parent in index.functions and parent not in traced_qualnames:
                return True
        return False

    def check(self, ctx: RuleContext) -> Iterator[Violation]:
        # Which module names are rebound is a pass-1 fact; only literal
        # values (flags, numbers, strings) are frozen state worth reporting.
        rebound = ctx.index.rebound_module_names
        mutable = {name: rebound[name] for name in _module_literals(ctx.module) if name in rebound}
        changed_items = subscript_writes(ctx.module)
        for name in module_containers(ctx.module, ctx.names) & changed_items:
            mutable.setdefault(name, f"its items are changed with `{name}[...] = ...`")
        writes: dict[str, AttributeWrites] = {}
        for function in ctx.functions:
            if function.runs_traced is None:
                continue
            frozen = dict(mutable)
            parent = function.parent
            if parent is not None and parent.runs_traced is None:
                for name in rebound_in_loops(parent.node, ctx.names):
                    frozen[name] = f"a variable of `{parent.qualname}` it rebinds"
            attributes = self._rebound_attributes(ctx, function, writes)
            if frozen or attributes:
                yield from self._check_function(function, frozen, attributes)

    @staticmethod
    def _rebound_attributes(
        ctx: RuleContext, function: FunctionScope, cache: dict[str, AttributeWrites]
    ) -> dict[str, str]:
        """`self.<attr>` that another method rebinds (outside `__init__`/
        `build`), or that some method updates in place (`+=`): state the
        traced method reads once."""
        owner = ctx.class_of(function)
        if owner is None:
            return {}
        class_name, node = owner
        if class_name not in cache:
            cache[class_name] = attribute_writes(node, ctx.names)
        writes = cache[class_name]
        own = function.node.name.value
        result: dict[str, str] = {}
        for attr, methods in writes.augmented.items():
            updaters = sorted(m for m in methods if not is_setup_method(m))
            if updaters:
                result[attr] = f"updated in place in `{updaters[0]}`"
        for attr, methods in writes.assigned.items():
            if attr in result or own in methods or attr not in writes.plain:
                continue  # assigned afresh in the traced function itself: per trace
            rebinders = sorted(m for m in methods if not is_setup_method(m))
            if rebinders:
                result[attr] = f"rebound in `{rebinders[0]}`"
        return result

    def _check_function(
        self, function: FunctionScope, mutable: dict[str, str], attributes: dict[str, str]
    ) -> Iterator[Violation]:
        local = local_names(function.node)
        reported: set[str] = set()
        for node, ancestors in iter_with_ancestors(function.node.body):
            if isinstance(node, (cst.FunctionDef, cst.Lambda)):
                continue
            if any(isinstance(a, (cst.FunctionDef, cst.Lambda)) for a in ancestors):
                continue  # nested functions are checked as their own scope
            parent = ancestors[-1] if ancestors else None
            if isinstance(node, cst.Attribute) and attributes:
                attr = node.attr.value
                if not (
                    isinstance(node.value, cst.Name)
                    and node.value.value == "self"
                    and attr in attributes
                    and f"self.{attr}" not in reported
                    and _is_value_read(node, parent)
                ):
                    continue
                reported.add(f"self.{attr}")
                yield Violation(
                    node,
                    f"`self.{attr}` is Python state ({attributes[attr]}) read in traced "
                    f"`{function.qualname}`: its value is frozen at the first trace and later "
                    "changes are ignored; pass it as a tensor argument or keep it in a "
                    "`tf.Variable`",
                )
                continue
            if not isinstance(node, cst.Name) or node.value not in mutable:
                continue
            if node.value in local or node.value in reported:
                continue
            if not _is_read(node, parent):
                continue
            reported.add(node.value)
            yield Violation(
                node,
                f"`{node.value}` is Python state ({mutable[node.value]}) read in "
                f"traced `{function.qualname}`: its value is frozen at the first trace and later "
                "changes are ignored; pass it as a tensor argument or keep it in a `tf.Variable`",
            )


def _is_value_read(node: cst.Attribute, parent: cst.CSTNode | None) -> bool:
    """`self.x` read for its value: not a call (`self.model(x)`), not an
    attribute chain (`self.opt.apply_gradients`), not an assignment target."""
    if isinstance(parent, cst.Attribute) and parent.value is node:
        return False
    if isinstance(parent, cst.Call) and parent.func is node:
        return False
    if isinstance(parent, (cst.AssignTarget, cst.AugAssign)):
        return False
    return True


RULES = (ModuleStateInTracedCode,)
