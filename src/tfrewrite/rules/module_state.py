"""TFR201: mutable module-level Python state read in traced code."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from tfrewrite.analysis.index import ModuleIndex
from tfrewrite.analysis.names import NameResolver
from tfrewrite.analysis.state import (
    AttributeWrites,
    attribute_writes,
    init_only_methods,
    is_plain_value,
    is_setup_method,
    module_containers,
    rebound_in_loops,
    subscript_writes,
)
from tfrewrite.analysis.tensors import local_names
from tfrewrite.analysis.walk import iter_with_ancestors, statement_children
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

            @tf.function
            def loss(y_true, y_pred):
                return scale * tf.reduce_mean(tf.square(y_true - y_pred))

            scale = 2.0
            """
        ),
        Invalid(
            """
            import tensorflow as tf

            lr_scale = 1.0

            @tf.function
            def train_step(x):
                return x * lr_scale

            for epoch in range(10):
                lr_scale = 1.0 / (epoch + 1)
                train_step(tf.ones(3))
            """,
            note="a module global rebound in the module's epoch loop",
        ),
        Invalid(
            """
            import tensorflow as tf

            class ReplayBuffer:
                def __init__(self):
                    self.mem_cntr = 0

                def store(self, item):
                    self.mem_cntr += 1

            class Agent:
                def __init__(self):
                    self.memory = ReplayBuffer()

                @tf.function
                def learn(self, x):
                    if self.memory.mem_cntr < 64:
                        return x
                    return 2 * x
            """,
            note="a counter of an object the class holds",
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
            import tensorflow as tf

            batch_size = 32
            print(batch_size)
            batch_size = 64

            @tf.function
            def step(x):
                return tf.random.normal((batch_size, 2)) + x
            """,
            note="rebound by the script before the function exists: every trace sees 64",
        ),
        Valid(
            """
            import tensorflow as tf

            class NoisyDense(tf.keras.layers.Layer):
                def __init__(self, units):
                    super().__init__()
                    self.units = units
                    self.reset_noise()

                def reset_noise(self):
                    self.eps = tf.random.normal((self.units,))

                def call(self, inputs):
                    return inputs * self.eps
            """,
            note="attributes set by a method only `__init__` calls are set up once",
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
        if index.held_state:
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
        # values (flags, numbers, strings) are frozen state worth reporting,
        # and plain values a module-level loop rebinds (`lr_scale = 1.0 /
        # (epoch + 1)` in the epoch loop).
        rebound = ctx.index.rebound_module_names
        mutable = {name: rebound[name] for name in _module_literals(ctx.module) if name in rebound}
        for name in _loop_plain_names(ctx.module, ctx.names):
            if rebound.get(name) == LOOP_REBOUND:
                mutable.setdefault(name, LOOP_REBOUND)
        changed_items = subscript_writes(ctx.module)
        for name in module_containers(ctx.module, ctx.names) & changed_items:
            mutable.setdefault(name, f"its items are changed with `{name}[...] = ...`")
        writes: dict[str, AttributeWrites] = {}
        for function in ctx.functions:
            if function.runs_traced is None:
                continue
            frozen = {
                name: how
                for name, how in mutable.items()
                if not _settled_before_first_call(ctx, function, name)
            }
            parent = function.parent
            if parent is not None and parent.runs_traced is None:
                for name in rebound_in_loops(parent.node, ctx.names):
                    frozen[name] = f"a variable of `{parent.qualname}` it rebinds"
            attributes = self._rebound_attributes(ctx, function, writes)
            held = self._held_state(ctx, function)
            if frozen or attributes or held:
                yield from self._check_function(function, frozen, attributes, held)

    @staticmethod
    def _held_state(ctx: RuleContext, function: FunctionScope) -> dict[str, dict[str, str]]:
        """`self.<attr>` -> attributes of the object it holds that change
        between calls (`self.memory.mem_cntr`, a counter the buffer's
        `store_transition` updates): a project fact."""
        owner = ctx.class_of(function)
        if owner is None or not ctx.index.held_state:
            return {}
        prefix = owner[0] + "."
        return {
            key[len(prefix) :]: value
            for key, value in ctx.index.held_state.items()
            if key.startswith(prefix)
        }

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
            setup = init_only_methods(node, ctx.module)
            cache[class_name] = attribute_writes(node, ctx.names, setup)
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
        self,
        function: FunctionScope,
        mutable: dict[str, str],
        attributes: dict[str, str],
        held: dict[str, dict[str, str]] | None = None,
    ) -> Iterator[Violation]:
        local = local_names(function.node)
        reported: set[str] = set()
        held = held or {}
        for node, ancestors in iter_with_ancestors(function.node.body):
            if isinstance(node, (cst.FunctionDef, cst.Lambda)):
                continue
            if any(isinstance(a, (cst.FunctionDef, cst.Lambda)) for a in ancestors):
                continue  # nested functions are checked as their own scope
            parent = ancestors[-1] if ancestors else None
            chain = _held_read(node, held)
            if chain is not None and chain[0] not in reported and _is_value_read(node, parent):
                name, how = chain
                reported.add(name)
                yield Violation(
                    node,
                    f"`{name}` is Python state ({how}) read in traced "
                    f"`{function.qualname}`: its value is frozen at the first trace and later "
                    "changes are ignored; pass it as a tensor argument or keep it in a "
                    "`tf.Variable`",
                )
                continue
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


LOOP_REBOUND = "rebound in a module-level loop"


def _loop_plain_names(module: cst.Module, resolver: NameResolver) -> set[str]:
    """Names a module-level loop binds to plain values (`is_plain_value`):
    its loop variable over `range`/`enumerate`, and its assignments."""
    names: set[str] = set()
    objects: set[str] = set()
    stack: list[tuple[cst.CSTNode, bool]] = [(s, False) for s in module.body]
    while stack:
        node, in_loop = stack.pop()
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            continue
        if isinstance(node, cst.For):
            counter = node.target
            if isinstance(counter, cst.Tuple) and counter.elements:
                counter = counter.elements[0].value
            iterated = node.iter
            if (
                isinstance(counter, cst.Name)
                and isinstance(iterated, cst.Call)
                and isinstance(iterated.func, cst.Name)
                and iterated.func.value in ("range", "enumerate")
            ):
                names.add(counter.value)
        if isinstance(node, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            if not in_loop:
                continue
            for small in node.body:
                if isinstance(small, cst.Assign):
                    bound = [t.target.value for t in small.targets if isinstance(t.target, cst.Name)]
                    (names if is_plain_value(small.value, resolver) else objects).update(bound)
                elif isinstance(small, cst.AugAssign) and isinstance(small.target, cst.Name):
                    names.add(small.target.value)
            continue
        loop = in_loop or isinstance(node, (cst.For, cst.While))
        stack.extend((child, loop) for child in statement_children(node))
    return names - objects


def _settled_before_first_call(ctx: RuleContext, function: FunctionScope, name: str) -> bool:
    """Whether every trace of a module function sees the final value of
    `name`, which plain module-level statements bind more than once (a
    script that sets `batch_size = 64` again before its GAN section): the
    function is the last one of its name, and is defined after the last
    binding, or is first called by a module-level statement after it and
    from nowhere else. Then nothing is frozen."""
    index = ctx.index
    last = index.straight_rebinds.get(name)
    if last is None or function.parent is not None or function.class_name is not None:
        return False
    if index.rebound_module_names.get(name) != "assigned more than once":
        return False  # another module rebinds it too
    info = index.functions.get(function.qualname)
    defs = [
        s for s in ctx.module.body if isinstance(s, cst.FunctionDef) and s.name.value == function.qualname
    ]
    if info is None or not defs or defs[-1] is not function.node:
        return False  # the index describes the last definition of the name only
    if info.lineno > last:
        return True
    qualified = index.qualify(function.qualname)
    calls = [line for line in index.module_call_lines.get(qualified, ()) if line > info.lineno]
    if not calls or min(calls) <= last:
        return False
    if any(site.target == qualified for site in index.traced_sites):
        return False
    return not any(qualified in other.calls for other in index.functions.values())


def _held_read(node: cst.CSTNode, held: dict[str, dict[str, str]]) -> tuple[str, str] | None:
    """`self.memory.mem_cntr` when `self.memory` holds an object whose
    `mem_cntr` changes between calls: (the expression, how it changes)."""
    if not (held and isinstance(node, cst.Attribute) and isinstance(node.value, cst.Attribute)):
        return None
    inner = node.value
    if not (isinstance(inner.value, cst.Name) and inner.value.value == "self"):
        return None
    how = held.get(inner.attr.value, {}).get(node.attr.value)
    if how is None:
        return None
    return f"self.{inner.attr.value}.{node.attr.value}", how


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
