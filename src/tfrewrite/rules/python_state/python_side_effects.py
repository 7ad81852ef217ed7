"""TFR202: Python side effects on outside state in traced code."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import libcst as cst

from tfrewrite.facts.bindings import local_names
from tfrewrite.facts.context import FunctionScope, RuleContext
from tfrewrite.facts.file_writes import file_writes
from tfrewrite.facts.prefilters import MUTATING_METHODS
from tfrewrite.facts.python_iterators import outside_iterator
from tfrewrite.facts.state import (
    AttributeWrites,
    attribute_writes,
    is_container,
    module_containers,
    reads_before_writing,
    reads_self_attribute,
    reset_self_containers,
    scratch_self_containers,
    self_attribute_name,
)
from tfrewrite.facts.vocabulary import LIST_GROWING_METHODS, SETUP_METHODS
from tfrewrite.facts.walk import iter_nodes, iter_small_statements
from tfrewrite.findings import Applicability
from tfrewrite.rewrite.fixes import Violation
from tfrewrite.rules.base import Invalid, Rule, Valid
from tfrewrite.rules.python_state.clock_reads import clock_reads
from tfrewrite.rules.python_state.per_trace_writes import (
    argument_kept,
    argument_mutations,
    flag_guarded_effects,
    kept_tensor,
    plain_effect_calls,
)
from tfrewrite.rules.python_state.run_once import lazy_initialisations


def _declared_outside(function: cst.FunctionDef) -> set[str]:
    """Names the function declares `global` or `nonlocal`."""
    return {
        item.name.value
        for node in iter_small_statements(function.body)
        if isinstance(node, (cst.Global, cst.Nonlocal))
        for item in node.names
    }


def _traced_enclosing_names(function: FunctionScope) -> set[str]:
    """The names the functions around `function` bind, out to the first
    that does not run traced: they run in the same trace, so what those
    names hold is made afresh for it (`spec = Optional.empty(None)` in a
    traced function, its attribute set by a nested branch function)."""
    names: set[str] = set()
    scope = function.parent
    while scope is not None and scope.runs_traced is not None:
        names |= local_names(scope.node)
        scope = scope.parent
    return names


def _outside_target(node: cst.BaseExpression, local: set[str]) -> str | None:
    """The spelling of `node` when it names state outside the function: a
    non-local name, or an attribute of `self`/a non-local name."""
    base = node
    while isinstance(base, (cst.Attribute, cst.Subscript)):
        base = base.value
    if not isinstance(base, cst.Name) or base.value in local:
        return None
    if isinstance(node, cst.Name) and node.value == "self":
        return None
    return cst.Module([]).code_for_node(node)


class _Containers:
    """Which receivers of a mutating method are Python containers living
    outside a traced function: a module-level name bound to a list/dict/set
    display or constructor, such a name of an enclosing function, or a
    `self` attribute every assignment of which makes one (and which the
    function does not create afresh itself). A call through a module
    (`tf.add`, `ops.add`, `K.update`) or on anything else is not one."""

    def __init__(self, ctx: RuleContext) -> None:
        self.ctx = ctx
        self._module: set[str] | None = None
        self._classes: dict[str, AttributeWrites] = {}

    def outside(
        self, receiver: cst.BaseExpression, function: FunctionScope, local: set[str]
    ) -> str | None:
        ctx = self.ctx
        if isinstance(receiver, cst.Name):
            name = receiver.value
            if name in local or name in ctx.index.imports:
                return None
            binder = function.enclosing_binder(name)
            if binder is not None:
                return name if name in _local_containers(binder, ctx) else None
            if self._module is None:
                self._module = module_containers(ctx.module, ctx.names)
            return name if name in self._module else None
        if (
            isinstance(receiver, cst.Attribute)
            and isinstance(receiver.value, cst.Name)
            and receiver.value.value == "self"
        ):
            owner = ctx.class_of(function)
            if owner is None:
                return None
            class_name, node = owner
            if class_name not in self._classes:
                self._classes[class_name] = attribute_writes(node, ctx.names)
            attr = receiver.attr.value
            if attr not in self._classes[class_name].containers:
                return None
            if attr in reset_self_containers(function.node, node, ctx.names):
                return None  # a new container each call, before any use
            method = function.node.name.value
            if attr in scratch_self_containers(node, method, ctx.names):
                return None  # every caller builds it afresh for this call
            return f"self.{attr}"
        return None


def _local_containers(scope: FunctionScope, ctx: RuleContext) -> set[str]:
    """Names an enclosing function binds only to Python containers."""
    bound: dict[str, bool] = {}
    for small in iter_small_statements(scope.node.body):
        if isinstance(small, cst.Assign):
            for target in small.targets:
                if isinstance(target.target, cst.Name):
                    name = target.target.value
                    bound[name] = bound.get(name, True) and is_container(small.value, ctx.names)
    return {name for name, container in bound.items() if container}


def _graph_loops(function: FunctionScope, ctx: RuleContext) -> Iterator[cst.For | cst.While]:
    """Loops of `function` (not of functions nested in it) that AutoGraph
    runs as a `tf.while_loop`: a `for` over `tf.range(...)`, a `while` on a
    tensor condition. (A `for` over a value the analysis calls a tensor is
    not counted: Keras passes a list of tensors as one `inputs`.)"""
    facts = ctx.tensors(function)
    for node in iter_nodes(function.node.body, into_functions=False):
        if isinstance(node, cst.For):
            iterated = node.iter
            if (
                isinstance(iterated, cst.Call)
                and ctx.names.qualified_name(iterated.func) == "tensorflow.range"
            ):
                yield node
        elif isinstance(node, cst.While) and facts.kind(node.test).tensor:
            yield node


def _lists_grown_in_graph_loops(
    function: FunctionScope, ctx: RuleContext, local: set[str]
) -> Iterator[tuple[cst.Call, str, str]]:
    """`(call, "parts.append", loop kind)` for each `parts.append(...)` inside a
    graph loop on a list the function built before the loop."""
    lists = _local_containers(function, ctx) & local
    if not lists:
        return
    seen: set[int] = set()
    for loop in _graph_loops(function, ctx):
        kind = "`while` on a tensor" if isinstance(loop, cst.While) else "loop over `tf.range`"
        for node in iter_nodes(loop.body, into_functions=False):
            if (
                isinstance(node, cst.Call)
                and isinstance(node.func, cst.Attribute)
                and node.func.attr.value in LIST_GROWING_METHODS
                and isinstance(node.func.value, cst.Name)
                and node.func.value.value in lists
                and id(node) not in seen
            ):
                seen.add(id(node))
                yield node, f"{node.func.value.value}.{node.func.attr.value}", kind


def _advanced(call: cst.Call, ctx: RuleContext, local: set[str]) -> cst.BaseExpression | None:
    """What `call` advances: `it` of `next(it)` or `next(it, default)` (the
    builtin: neither imported nor bound in the file), or of `it.__next__()`."""
    func = call.func
    if isinstance(func, cst.Name) and func.value == "next":
        if "next" in local or "next" in ctx.index.imports or "next" in ctx.index.functions:
            return None
        if call.args and call.args[0].keyword is None and not call.args[0].star:
            return call.args[0].value
        return None
    if isinstance(func, cst.Attribute) and func.attr.value == "__next__" and not call.args:
        return func.value
    return None


def _advanced_iterators(
    function: FunctionScope, ctx: RuleContext, local: set[str]
) -> Iterator[Violation]:
    """`next(it)` on a Python iterator made outside the function: it advances
    once per trace, not once per call (`next` on a dataset's iterator is an
    op, and is not reported)."""
    for node in iter_nodes(function.node.body, into_functions=False):
        if not isinstance(node, cst.Call):
            continue
        advanced = _advanced(node, ctx, local)
        if advanced is None:
            continue
        origin = outside_iterator(ctx, function, advanced, local)
        if origin is None:
            continue
        spelled = ctx.code(advanced)
        yield Violation(
            node,
            f"`{ctx.code(node)}` advances the Python iterator `{spelled}` (made by {origin}) in "
            f"traced `{function.qualname}`: it runs once, while tracing, so the iterator "
            "advances once per trace and every call reuses the item of the first trace; pass "
            "the items as tensor arguments, or iterate a `tf.data.Dataset` (`next` on its "
            "iterator runs on every call)",
        )


def _file_writes(function: FunctionScope, ctx: RuleContext, local: set[str]) -> Iterator[Violation]:
    """Python file writes (`open(path, "a")`, `json.dump`, `np.save`): they
    run once, while tracing."""
    shadowed = local | {name for name in ctx.index.functions if "." not in name}
    for write in file_writes(function.node, ctx.names, shadowed):
        callee = ctx.code(write.node.func)
        yield Violation(
            write.node,
            f"`{callee}(...)` {write.what} in traced `{function.qualname}`: it runs once, "
            "while tracing, not on every call, so later calls write nothing; write outside "
            "the traced function, or with an op that runs on every call "
            '(`tf.io.write_file`, `tf.print(..., output_stream="file://...")`, `tf.summary`)',
        )


class PythonSideEffectInTracedCode(Rule):
    code = "TFR202"
    name = "python-side-effect-in-traced-code"
    summary = (
        "A Python side effect in traced code (a mutation, `next`, a file write, a clock read) "
        "runs once"
    )
    fix_applicability = Applicability.NONE
    explanation = """
    ## What it does
    Finds traced code with Python side effects: it mutates Python state
    living outside the function (`history.append(loss)`, `stats["n"] += 1`,
    `self.calls += 1`, also kept through a local name, `step = self.step`,
    `step += 1`, `self.step = step`, a `global` counter), advances a Python iterator made
    outside it (`next(it)` for a module-level `it = iter([...])`, a
    generator object kept on `self`), or writes a file through Python
    (`open(path, "a")`, `json.dump(record, fh)`, `np.save(path, value)`),
    or reads one of Python's clocks (`time.time()`, `time.perf_counter()`,
    `datetime.now()`). A traced method that keeps a tensor on its object
    (`self.q_values = self.net(obs)`) is reported when a method of the
    class that runs eagerly reads it: there it is a symbolic tensor of a
    finished trace, and reading it raises ("out of scope").

    ## Why is this bad?
    Python code in a `tf.function` runs while tracing, not on every call.
    The list gets one element (a symbolic tensor) per trace instead of one
    value per step, and the counter counts traces, not calls. `next(it)`
    advances the iterator once per trace, and every call reuses the item of
    the first trace (eagerly 1, 2, 3; traced 1, 1, 1). A file gets one record
    per trace, and nothing on later calls. A clock is read once, while
    tracing: every call gets the time of its trace, and a duration timed
    inside the function (`d_time = time.time() - start`) is a constant of
    the graph (a clock read only to seed an op, `seed=int(time.time())`, is
    not reported: the traced op still draws afresh on every call). Eagerly
    the same code behaves as written, so the difference shows up only in
    training runs.

    `next` on a `tf.data` iterator (`it = iter(dataset)`) is an op and runs
    on every call: it is not reported. An iterator counts as a Python one
    only when where it comes from proves it: a generator (expression, or a
    call of a generator function of the file), `iter(...)` of a Python list,
    tuple, dict, set, string or `range`, or `itertools.count`. TensorFlow's
    own writers (`tf.io.write_file`, `tf.print(...,
    output_stream="file://...")`, `tf.summary`) are ops too, and opening a
    file only to read it is not a write.

    An attribute of an object `self` holds (`self.odefunc.nfe = 0`) outlives
    the call like any other object's, and is reported outside set-up
    methods (`build`). A method its own `@tf.function` traces, or a Keras
    layer's or model's `call` (`fit` and every traced caller trace it), that
    keeps a tensor it computes on `self` for other code (`self.coef =
    tf.linalg.solve(a, b)`, `self.outputs = [h, state_h, state_c]`, an
    attribute the module never reads) leaves the trace's symbolic tensor
    there: after the call it has no value, and later calls never update it
    (reported without a fix; return the value, or `assign` it to a
    `tf.Variable`). A layer's `call` keeping its state for the rest of the
    same trace (an attribute the module reads back) is not reported. A
    traced method that stores a Python argument on `self` (`self.rate =
    rate` for `rate=0.5`, an argument with a number or bool default or one
    the project's call sites pass as a Python value) stores it only while
    tracing: a later call with an argument seen before reuses that trace,
    and the object keeps what the last trace stored (eagerly 0.9, 0.1, 0.9
    leave 0.9; traced, 0.1). A property's setter is not reported, nor an
    argument that may be a tensor (`mask=None`). A `self` flag tested and
    set around variable writes (`if self.first: self.first = False;
    self.mean.assign(m)`) is tested while tracing: the trace keeps the
    branch, and its writes run on every call. A `@tf.function` that changes
    a list or dict it is given (`logs["temp"] = t`) raises when traced
    ("should not modify its Python input arguments"). State the traced functions
    around a function make (`spec = Optional.empty(None)` in a traced
    function, set by a branch function nested in it) is made afresh for each
    trace: not reported. Nor is set-up that runs once whether traced or not:
    a name or attribute assigned only while it is unset (`global _acc; if
    _acc is None: _acc = BinaryAccuracy()`), created by the first call
    eagerly and by the first trace traced, and skipped after.

    Lists built and consumed inside the function (`parts = []; ...;
    tf.stack(parts)`) are fine and not reported: they only shape the graph.
    Except in a loop AutoGraph turns into a `tf.while_loop` (a `for` over
    `tf.range(...)`, a `while` on a tensor): a tensor appended
    there belongs to the loop body's graph and escapes it, and the function
    raises `InaccessibleTensorError` when traced. Use a `tf.TensorArray`
    there, or a Python `range` when the count is a Python number.

    ## How to fix it
    Return the value and collect it outside the traced function, use a
    `tf.Variable` (`counter.assign_add(1)`) or a `tf.TensorArray`, or a Keras
    metric (`update_state`). Pass an iterator's items as tensor arguments, or
    iterate a `tf.data.Dataset`; write files outside the traced function or
    with TensorFlow's writers; read the clock with `tf.timestamp()`, or time
    the call from eager code.

    ## Fix safety
    There is no automatic fix: the right container depends on how the value
    is consumed.
    """
    examples = (
        Invalid(
            """
            import tensorflow as tf

            @tf.function
            def powers(x):
                outputs = []
                for i in tf.range(3):
                    outputs.append(x ** tf.cast(i, x.dtype))
                return tf.stack(outputs)
            """,
            note="a local list grown in a loop AutoGraph runs as a `tf.while_loop`",
        ),
        Invalid(
            """
            import time

            import tensorflow as tf

            @tf.function
            def train_step(x):
                start = time.time()
                loss = tf.reduce_mean(x)
                return loss, time.time() - start
            """,
            findings=2,
            note="the clock is read while tracing: every call returns the same duration",
        ),
        Invalid(
            """
            import tensorflow as tf

            losses = []

            @tf.function
            def train_step(x):
                loss = tf.reduce_mean(x)
                losses.append(loss)
                return loss
            """
        ),
        Invalid(
            """
            import tensorflow as tf

            calls = 0

            @tf.function
            def step(x):
                global calls
                calls += 1
                return x * 2
            """
        ),
        Valid(
            """
            import tensorflow as tf

            @tf.function
            def stacked(x):
                parts = []
                for i in range(3):
                    parts.append(x * i)
                return tf.stack(parts)
            """,
            note="a local list only shapes the graph",
        ),
        Invalid(
            """
            import tensorflow as tf
            from tensorflow import keras

            class Counting(keras.layers.Layer):
                def call(self, inputs):
                    self.calls += 1
                    return inputs
            """
        ),
        Valid(
            """
            losses = []

            def step(x):
                losses.append(x)
            """,
            note="not traced",
        ),
        Invalid(
            """
            import tensorflow as tf

            class Tracker(tf.Module):
                def __init__(self):
                    self.history = []

                @tf.function
                def __call__(self, x):
                    self.history.append(x)
                    return x
            """
        ),
        Valid(
            """
            import tensorflow as tf
            from keras import ops

            @tf.function
            def combine(x, y):
                return tf.add(x, y) + tf.math.add(x, 1.0) + ops.add(y, 2.0)
            """,
            note="a call through a module is an op, not a container mutation",
        ),
        Valid(
            """
            import tensorflow as tf

            class Stack(tf.keras.layers.Layer):
                def build(self, input_shape):
                    self.blocks = []
                    for _ in range(3):
                        self.blocks.append(tf.keras.layers.Dense(4))

                def call(self, inputs):
                    if not self.built:
                        self.build(inputs.shape)
                    for block in self.blocks:
                        inputs = block(inputs)
                    return inputs
            """,
            note="a list the method creates itself only shapes the layer",
        ),
        Valid(
            """
            import tensorflow as tf

            @tf.function
            def unrolled(x):
                outputs = []
                for i in range(3):
                    outputs.append(x * i)
                return tf.add_n(outputs)
            """,
            note="a Python-unrolled loop appending tensors to a local list",
        ),
        Valid(
            """
            import tensorflow as tf

            @tf.function
            def step(x, **options):
                options.update(scale=2)
                counter = tf.Variable(0)
                counter.assign_add(1)
                return x * options["scale"]
            """,
            note="arguments and locals belong to the call",
        ),
        Invalid(
            """
            import tensorflow as tf

            it = iter([1, 2, 3])

            @tf.function
            def shifted(x):
                return x + next(it)
            """,
            note="a Python iterator advances once per trace",
        ),
        Valid(
            """
            import tensorflow as tf

            it = iter(tf.data.Dataset.range(3))

            @tf.function
            def shifted(x):
                return x + next(it)
            """,
            note="`next` on a dataset's iterator runs on every call",
        ),
        Invalid(
            """
            import tensorflow as tf

            class Policy:
                def __init__(self):
                    self.net = tf.keras.Sequential([tf.keras.layers.Dense(2)])

                @tf.function
                def act(self, obs):
                    self.q_values = self.net(obs)
                    return tf.argmax(self.q_values, axis=1)

                def probabilities(self):
                    return tf.nn.softmax(self.q_values)
            """,
            note="an eager method reads a tensor the traced one kept: out of scope",
        ),
        Invalid(
            """
            import tensorflow as tf

            @tf.function
            def step(x):
                with open("log.txt", "a") as log:
                    log.write("step\\n")
                return x * 2
            """,
            note="a Python file write runs once, while tracing",
        ),
        Valid(
            """
            import tensorflow as tf

            @tf.function
            def step(x):
                tf.print("step", output_stream="file:///tmp/log.txt")
                tf.io.write_file("last.txt", tf.strings.as_string(x))
                return x * 2
            """,
            note="TensorFlow's writers run on every call",
        ),
    )

    def check(self, ctx: RuleContext) -> Iterator[Violation]:
        containers = _Containers(ctx)
        for function in ctx.functions:
            if function.runs_traced is not None:
                yield from self._check(function, containers)

    def _check(self, function: FunctionScope, containers: _Containers) -> Iterator[Violation]:
        # Arguments and locals belong to the call (mutating an argument is the
        # caller's business, and `**kwargs` is a fresh dict); `self` does not.
        declared_global = _declared_outside(function.node)
        local = (
            (local_names(function.node) | _traced_enclosing_names(function))
            - declared_global
            - {"self"}
        )
        for call, method, loop in _lists_grown_in_graph_loops(function, containers.ctx, local):
            yield Violation(
                call,
                f"`{method}(...)` in a {loop} in traced "
                f"`{function.qualname}`: AutoGraph runs the loop as a `tf.while_loop`, and a "
                "tensor put in a Python list there escapes the loop, which raises "
                "`InaccessibleTensorError`; collect the values in a `tf.TensorArray` "
                "(`ta = ta.write(i, value)`, then `ta.stack()`)",
            )
        yield from _advanced_iterators(function, containers.ctx, local)
        yield from _file_writes(function, containers.ctx, local)
        yield from clock_reads(function, containers.ctx, local)
        # A set-up method (`build`) fills its object's own containers once:
        # Keras, or the flag guarding its call, runs it once, by design.
        setup = function.is_method and function.node.name.value in SETUP_METHODS
        if not setup:
            yield from flag_guarded_effects(function, containers.ctx)
        yield from argument_mutations(function)
        yield from plain_effect_calls(function, containers.ctx)
        lazily_set: set[int] | None = None
        for node in iter_nodes(function.node.body, into_functions=False):
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
                if node.func.attr.value not in MUTATING_METHODS:
                    continue
                target = containers.outside(node.func.value, function, local)
                if target is not None and setup and target.startswith("self."):
                    continue
                if target is not None:
                    yield Violation(
                        node,
                        f"`{target}.{node.func.attr.value}(...)` mutates Python state outside "
                        "traced "
                        f"`{function.qualname}`: it runs once, while tracing, not on every call; "
                        "return the value or use a `tf.Variable`/`tf.TensorArray`",
                    )
            elif isinstance(node, (cst.AugAssign, cst.Assign)):
                if lazily_set is None:
                    lazily_set = lazy_initialisations(function.node.body)
                if id(node) in lazily_set:
                    continue  # set up once, on the first call or trace alike
                targets = (
                    [node.target]
                    if isinstance(node, cst.AugAssign)
                    else [t.target for t in node.targets]
                )
                for target_node in targets:
                    described = self._describe_assignment(
                        target_node,
                        local,
                        declared_global,
                        isinstance(node, cst.AugAssign)
                        or _counted_on(function.node, target_node, node),
                        lambda base: containers.outside(base, function, local),
                    )
                    if described and setup and described.startswith("`self."):
                        continue  # a set-up method configures its own objects once
                    if described:
                        yield Violation(
                            node,
                            f"assigning {described} inside traced `{function.qualname}` runs once, "
                            "while tracing, not on every call; use a `tf.Variable` and `assign`",
                        )
                    elif not setup and isinstance(node, cst.Assign):
                        kept = kept_tensor(containers.ctx, function, target_node, node.value)
                        if kept is not None:
                            what, reader = kept
                            read = (
                                f"; `{reader}` runs eagerly and reads it, which raises "
                                '("out of scope")'
                                if reader
                                else ""
                            )
                            yield Violation(
                                node,
                                f"{what} of the trace of `{function.qualname}`: "
                                "after the call it holds a symbolic tensor, not the value (it has "
                                f"no `.numpy()`, and another graph cannot use it){read}; return "
                                "the value instead, or `assign` it to a `tf.Variable`",
                            )
                        argument = argument_kept(containers.ctx, function, target_node, node.value)
                        if argument is not None:
                            attr, param = argument
                            yield Violation(
                                node,
                                f"assigning `self.{attr}` from the argument `{param}` inside "
                                f"traced `{function.qualname}` runs only while tracing: a later "
                                f"call with a `{param}` seen before reuses its trace and leaves "
                                f"`self.{attr}` as the last trace set it; set it outside the "
                                "traced call, or keep it in a `tf.Variable` and `assign`",
                            )

    @staticmethod
    def _describe_assignment(
        target: cst.BaseExpression,
        local: set[str],
        declared_global: set[str],
        augmented: bool,
        container: Callable[[cst.BaseExpression], str | None],
    ) -> str | None:
        if isinstance(target, cst.Name):
            return f"global `{target.value}`" if target.value in declared_global else None
        if isinstance(target, cst.Subscript):
            # An item of a Python container that lives outside the function.
            if container(target.value) is None:
                return None
            spelled = _outside_target(target, local)
            return f"`{spelled}`" if spelled else None
        if (
            isinstance(target, cst.Attribute)
            and isinstance(target.value, cst.Attribute)
            and isinstance(target.value.value, cst.Name)
            and target.value.value.value == "self"
        ):
            # State of an object `self` holds (`self.odefunc.nfe = 0`): it
            # outlives the call, as any other object's does.
            return f"`self.{target.value.attr.value}.{target.attr.value}`"
        if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name):
            if target.value.value == "self":
                # A counter on self (`self.calls += 1`) is state; a plain
                # assignment is how layers cache sublayers and variables.
                return f"`self.{target.attr.value}`" if augmented else None
            spelled = _outside_target(target, local)
            return f"`{spelled}`" if spelled else None
        return None


def _counted_on(
    function: cst.FunctionDef, target: cst.BaseExpression, node: cst.Assign | cst.AugAssign
) -> bool:
    """`self.step = step` after `step = self.step` and `step += 1`: the
    attribute is given a value computed from its own, as `self.step += 1`
    gives it (a counter kept through a local name, or `self.step =
    self.step + 1`)."""
    attr = self_attribute_name(target)
    if attr is None or not isinstance(node, cst.Assign):
        return False
    if not reads_before_writing(function, attr):
        return False  # set afresh in each call first: scratch state of the call
    if reads_self_attribute(node.value, attr):
        return True
    if not isinstance(node.value, cst.Name):
        return False
    name = node.value.value
    return any(
        isinstance(other, cst.Assign)
        and any(isinstance(t.target, cst.Name) and t.target.value == name for t in other.targets)
        and reads_self_attribute(other.value, attr)
        for other in iter_nodes(function.body, into_functions=False)
    )


RULES = (PythonSideEffectInTracedCode,)
