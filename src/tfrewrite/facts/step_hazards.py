"""What decorating a train step changes, beyond what the rules on traced code
report: the checks TFR302 (and TFR301, when it moves a loss's decorator onto
the step) make before a step may take `@tf.function`.

Each hazard found is a `Blocker`. A blocker that some rule on traced code fixes
in the same run (a `print`, `.numpy()`) is covered by that fix; the others
(variables created per call, `logging`, a Python counter argument, `tf.print`
under XLA) keep the step eager, and the finding lists them with their lines.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import PurePath

import libcst as cst

from tfrewrite.facts.blockers import Blocker, line_name_of, lines_of
from tfrewrite.facts.context import FunctionScope, RuleContext
from tfrewrite.facts.fresh_arguments import fresh_object_arguments
from tfrewrite.facts.frozen_state import FrozenState
from tfrewrite.facts.keras_names import keras_leaf
from tfrewrite.facts.logging_calls import is_logging_call_node, logger_names
from tfrewrite.facts.models import called_class_kind
from tfrewrite.facts.name_use import name_use
from tfrewrite.facts.names import dotted_name
from tfrewrite.facts.numpy_arguments import mixed_with_tensors, numpy_argument_hazard
from tfrewrite.facts.python_counters import changing_number_arguments
from tfrewrite.facts.static_shapes import batch_dimension_read
from tfrewrite.facts.step_array_arguments import (
    enclosing_function,
    step_array_arguments,
    unconverted_uses,
)
from tfrewrite.facts.tensor_iteration import tensor_iterations
from tfrewrite.facts.tf_function import tf_function_decorator
from tfrewrite.facts.training import (
    calls_to,
    is_update_call,
    method_name,
    side_effects,
    value_sources,
)
from tfrewrite.facts.vocabulary import (
    FRAMEWORK_PREFIXES,
    LIST_GROWING_METHODS,
    LOG_METHODS,
    builds_variables,
    keras_host_loop,
    keras_host_weights,
    may_be_logger,
)
from tfrewrite.facts.walk import iter_nodes


def _parameters(function: FunctionScope) -> set[str]:
    params = function.node.params
    return {p.name.value for p in [*params.posonly_params, *params.params, *params.kwonly_params]}


def reads_static_shape(ctx: RuleContext, function: FunctionScope) -> bool:
    """`x.shape[0]` on a parameter, or a static read of a batch dimension
    (`tf.random.uniform([x.shape[0], 1])`, `tf.reshape(g, [g.shape[0], -1])`)
    in the step or a function of the file it calls: with `reduce_retracing=True`
    the batch dimension is traced as `None` for a short last batch, and shape
    arithmetic on it fails. (A whole `x.shape` handed to NumPy is rewritten to
    `tf.shape(x)` by the NumPy rules, and is no reason to keep a second trace
    for the short batch.)"""
    params = _parameters(function)
    if any(
        isinstance(node, cst.Subscript)
        and isinstance(node.value, cst.Attribute)
        and node.value.attr.value == "shape"
        and isinstance(node.value.value, cst.Name)
        and node.value.value.value in params
        for node in iter_nodes(function.node.body, into_functions=False)
    ):
        return True
    owner = ctx.class_of(function)
    read = batch_dimension_read(ctx, [function.node.body], owner[0] if owner else None)
    return read is not None


def _python_state_update(node: cst.CSTNode, local: set[str]) -> str | None:
    """`self.count += 1`, `self.best = ...`, `stats["n"] += 1`: the attribute
    or item updated, when `node` updates state that outlives the call (not
    an object the step built itself, named in `local`)."""
    if isinstance(node, cst.AugAssign):
        targets = [node.target]
    elif isinstance(node, cst.Assign):
        targets = [t.target for t in node.targets]
    else:
        return None
    for target in targets:
        if isinstance(target, (cst.Attribute, cst.Subscript)):
            base = target.value
            while isinstance(base, (cst.Attribute, cst.Subscript)):
                base = base.value
            if isinstance(base, cst.Name) and base.value in local:
                continue
            label = dotted_name(target) if isinstance(target, cst.Attribute) else None
            return label or (dotted_name(base) or "an object") + "[...]"
    return None


def _python_methods(ctx: RuleContext) -> dict[str, str]:
    """Method name -> class, for the plain Python classes of the file (not
    Keras models, layers, losses or metrics): a replay buffer's `sample`."""
    methods: dict[str, str] = {}
    for name, info in ctx.index.classes.items():
        if any(keras_leaf(base) or "Model" in base or "Layer" in base for base in info.bases):
            continue
        for method in info.methods:
            if not method.startswith("__"):
                methods.setdefault(method, name)
    return methods


def _python_object_class(ctx: RuleContext, receiver: str | None, params: set[str]) -> str | None:
    """The plain Python class of the project, in this module or another,
    whose object a name holds (`aug = Augmenter(depth)` in the function
    around a step, `from augment import Augmenter`): every value the file
    binds to the name builds one. None for a parameter, a dotted receiver,
    or a name that may hold anything else."""
    if not receiver or "." in receiver or receiver in params:
        return None
    sources = value_sources(ctx, cst.Name(receiver))[1:]
    classes = set()
    for value in sources:
        if not isinstance(value, cst.Call) or called_class_kind(ctx, value.func) != "python":
            return None
        classes.add((dotted_name(value.func) or "").rpartition(".")[2])
    return classes.pop() if len(classes) == 1 else None


def held_object_kind(
    ctx: RuleContext,
    owner: tuple[str, cst.ClassDef] | None,
    receiver: str | None,
    method: str | None,
) -> str | None:
    """What a method call on `self.<attr>` reaches, when `attr` holds an
    object the class builds (`self.memory = ReplayBuffer(...)`): "python"
    when the project defines its class as plain Python, "unknown" when
    the class is none of the project's nor of TensorFlow's (so its
    methods may be plain Python), None otherwise."""
    if owner is None or receiver is None or method is None or method.startswith("__"):
        return None
    head, _, attr = receiver.partition(".")
    if head != "self" or not attr or "." in attr:
        return None
    info = ctx.index.classes.get(owner[0])
    callee = info.held_objects.get(attr) if info is not None else None
    if callee is None:
        return None
    kind = ctx.index.held_classes.get(f"{owner[0]}.{attr}")
    if kind is not None:
        return "python" if kind == "python" else None
    name = callee.rpartition(".")[2]
    if callee.startswith(FRAMEWORK_PREFIXES) or not name[:1].isupper():
        return None  # a TensorFlow class, or a function (a model factory)
    return "unknown"


def unseen_held_objects(ctx: RuleContext, function: FunctionScope) -> list[str]:
    """Calls in the step of methods of held objects whose class tfrewrite
    cannot see (`self.noise.sample()` of a package's `OUNoise`): plain
    Python methods would run once, at trace time, so decorating the step is
    not proven safe."""
    owner = ctx.class_of(function)
    found: list[str] = []
    for node in iter_nodes(function.node.body, into_functions=False):
        if not isinstance(node, cst.Call):
            continue
        method = method_name(node)
        receiver = dotted_name(node.func.value) if method else None  # type: ignore[attr-defined]
        if held_object_kind(ctx, owner, receiver, method) == "unknown":
            call = f"`{receiver}.{method}(...)`"
            if call not in found:
                found.append(call)
    return found


def unpacked_object_results(ctx: RuleContext, function: FunctionScope) -> list[str]:
    """Calls in the step of an object it is handed or the module holds
    (a parameter, one of an enclosing function, a module-level object),
    not a function the file or an import names, whose result the step
    unpacks (`loss, mel = loss_fn(y, pred)`): a Keras loss object returns
    one tensor, which unpacks eagerly along its first axis but raises when
    traced. What the object returns is not known, so decorating the step
    is not proven safe."""
    handed: set[str] = set()
    scope: FunctionScope | None = function
    while scope is not None:
        handed |= _parameters(scope)
        scope = scope.parent
    found: list[str] = []
    for node in iter_nodes(function.node.body, into_functions=False):
        if not (
            isinstance(node, cst.Assign)
            and isinstance(node.value, cst.Call)
            and any(isinstance(t.target, (cst.Tuple, cst.List)) for t in node.targets)
        ):
            continue
        func = node.value.func
        if not isinstance(func, cst.Name) or ctx.names.qualified_name(func) is not None:
            continue
        name = func.value
        if name in handed or name in ctx.index.module_instances:
            call = f"`{name}(...)`"
            if call not in found:
                found.append(call)
    return found


def python_class_calls(ctx: RuleContext, function: FunctionScope) -> list[str]:
    """Calls in the step that build or call an object of a plain Python
    class the project defines (`Targets(batch)`, `Targets(batch).build()`,
    `parse(batch)` for a module-level `parse = Targets()`): its `__init__`
    or `__call__` runs once, at trace time, on symbolic tensors, and no rule
    checks that code as traced code. Decorating the step is then not proven
    safe. (Methods called on such an object are `decoration_blockers`'.)"""
    params = _parameters(function)
    found: list[str] = []
    for node in iter_nodes(function.node.body, into_functions=False):
        if not isinstance(node, cst.Call):
            continue
        written = dotted_name(node.func)
        if not written:
            continue
        local = written in params
        instance = ctx.index.module_instances.get(written) if not local else None
        # Every class the object may be of, when alternatives build it.
        choices = ctx.index.module_object_choices.get(written, ()) if not local else ()
        built = [instance] if instance else list(choices)
        # As pass 1 resolves the name: a class of this module is module-qualified.
        for made in built or [ctx.names.qualified_name(node.func) or written]:
            names = [made, f"{ctx.index.module}.{made}"]
            constructor = next((n for n in names if n in ctx.index.called_classes), "")
            if ctx.index.called_classes.get(constructor) != "python":
                continue
            class_name = constructor.rpartition(".")[2]
            method = "__call__" if built else "__init__"
            call = f"`{written}(...)` (`{class_name}.{method}`)"
            if call not in found:
                found.append(call)
    return found


def _defines_method(ctx: RuleContext, receiver: str, method: str, owner: str | None) -> bool:
    """Whether `receiver.method` is a method the project writes: on `self`,
    one of the class's own; on `self.<attr>`, one of the class of the object
    it holds (`self.agent = Agent()`)."""
    if receiver.partition(".")[0] != "self":
        return False
    local = ctx.receiver_class(receiver, owner)
    info = ctx.index.classes.get(local) if local is not None else None
    return info is not None and method in info.methods


def keras_host_loop_calls(
    ctx: RuleContext, statements: Sequence[cst.CSTNode], owner: str | None
) -> list[tuple[cst.Call, str]]:
    """Calls in `statements` of a Keras model method that runs its own loop
    on the host (`target.predict(states)`, `model.fit(...)`): traced, they
    raise. Each with why, and what to write instead. `owner`: the class
    whose `self` the statements see (a method it defines is its own)."""
    found: list[tuple[cst.Call, str]] = []
    for statement in statements:
        for node in iter_nodes(statement, into_functions=False):
            if not isinstance(node, cst.Call):
                continue
            method = method_name(node)
            does, weights = keras_host_loop(method), keras_host_weights(method)
            if does is None and weights is None:
                continue
            receiver = ctx.code(node.func.value).strip()  # type: ignore[attr-defined]
            if _defines_method(ctx, receiver, method, owner):  # type: ignore[arg-type]
                continue
            if weights is not None:
                instead = (
                    f"`{receiver}.weights`, its variables" if weights == "reads" else "`assign`"
                )
                found.append(
                    (
                        node,
                        f"calls `{receiver}.{method}`: Keras' {method} {weights} the weights as "
                        f"NumPy arrays on the host, which traced code cannot; use {instead} "
                        "instead",
                    )
                )
                continue
            positional = [a for a in node.args if a.keyword is None and not a.star]
            inputs = ctx.code(positional[0].value).strip() if positional else "..."
            if does == "trains":
                instead = f"train `{receiver}` with a tape and `apply_gradients` instead"
            else:
                instead = f"call the model instead (`{receiver}({inputs}, training=False)`)"
            found.append(
                (
                    node,
                    f"calls `{receiver}.{method}`: Keras' {method} runs its own loop and "
                    f"cannot run inside a tf.function; {instead}",
                )
            )
    return found


def _framework_objects(ctx: RuleContext, body: cst.CSTNode) -> set[str]:
    """Names the step binds to what TensorFlow or Keras builds (`with
    tf.GradientTape() as tape`, `opt = tf.keras.optimizers.Adam()`): a
    method called on them is TensorFlow's, whatever plain class of the file
    has a method of the same name."""
    names: set[str] = set()
    for node in iter_nodes(body, into_functions=False):
        if isinstance(node, cst.WithItem) and node.asname is not None:
            value, target = node.item, node.asname.name
        elif isinstance(node, cst.Assign) and len(node.targets) == 1:
            value, target = node.value, node.targets[0].target
        else:
            continue
        if not isinstance(target, cst.Name) or not isinstance(value, cst.Call):
            continue
        qualified = ctx.names.qualified_name(value.func) or ""
        if qualified.startswith(FRAMEWORK_PREFIXES):
            names.add(target.value)
    return names


def _plain_receiver(receiver: str, held: dict[str, str]) -> bool:
    """Whether a method call on `receiver` may reach a plain Python class:
    any receiver but `self` and its attributes, and a `self.<attr>` that
    holds an object the class builds from a class of the file
    (`self.memory = ReplayBuffer(...)`, then `self.memory.sample(32)`)."""
    head, _, attr = receiver.partition(".")
    if head != "self":
        return True
    return bool(attr) and "." not in attr and attr in held


def _loop_counters(loop: cst.For | cst.While) -> set[str]:
    """Names a `for` binds to Python ints: `for i in range(...)`, the index of
    `enumerate(...)`."""
    if not isinstance(loop, cst.For) or not isinstance(loop.iter, cst.Call):
        return set()
    callee = dotted_name(loop.iter.func)
    target = loop.target
    if callee == "range" and isinstance(target, cst.Name):
        return {target.value}
    if callee == "enumerate" and isinstance(target, (cst.Tuple, cst.List)) and target.elements:
        first = target.elements[0].value
        if isinstance(first, cst.Name):
            return {first.value}
    return set()


def _commented_out_decorator(ctx: RuleContext, node: cst.FunctionDef) -> int | None:
    """The line of a comment right above the definition that is a
    `@tf.function` decorator put out of action (`# @tf.function  # fails
    with ...`): the author tried tracing the step and turned it off."""
    leading = list(node.leading_lines)
    for position, line in enumerate(leading):
        if line.comment is None:
            continue
        text = line.comment.value.lstrip("#").strip()
        if text.startswith("@") and text.split("(")[0].split()[0].endswith("function"):
            # Positions cost a pass over the file: asked for only when found.
            return lines_of(ctx, node)[0] - (len(leading) - position)
    return None


def _update_call(step: Sequence[cst.CSTNode]) -> cst.Call | None:
    """The step's first call that applies gradients."""
    return next(
        (
            n
            for root in step
            for n in iter_nodes(root, into_functions=False)
            if isinstance(n, cst.Call) and is_update_call(n)
        ),
        None,
    )


def _schedule_name(path: str, qualname: str, line: int) -> str:
    return f"`{qualname}.__call__` ({PurePath(path).name}:{line})"


def failing_schedule(ctx: RuleContext, step: Sequence[cst.CSTNode]) -> Blocker | None:
    """The step applies gradients, and a learning-rate schedule of the
    project its optimizer may call does what raises traced (branches in
    Python on its step, calls `math` on it): Keras calls it inside the
    traced step from its own code, which AutoGraph does not convert
    (`ModuleIndex.custom_schedules`)."""
    failing = [s for s in ctx.index.custom_schedules if s[3]]
    update = _update_call(step) if failing else None
    if update is None:
        return None
    listed = ", ".join(f"{_schedule_name(*s[:3])}, which {s[3]}" for s in failing)
    return Blocker(
        *lines_of(ctx, update),
        f"applies gradients with an optimizer that may call the learning-rate schedule {listed}: "
        "traced, Keras calls it without AutoGraph and it raises",
    )


def unchecked_schedules(ctx: RuleContext, step: Sequence[cst.CSTNode]) -> list[str]:
    """The project's own learning-rate schedules the step's optimizer may
    call traced, when none of them is known to fail: what they do is not
    checked as traced code, so decorating the step rests on them."""
    schedules = ctx.index.custom_schedules
    if not schedules or any(s[3] for s in schedules) or _update_call(step) is None:
        return []
    return [_schedule_name(*s[:3]) for s in schedules]


def decoration_blockers(
    ctx: RuleContext,
    function: FunctionScope,
    loops: list[cst.For | cst.While],
    options: dict[str, str],
) -> list[Blocker]:
    """Everything in `function` (and the loops that call it) that changes
    meaning once it is decorated with `@tf.function(**options)`."""
    body = function.node.body
    blockers = [
        Blocker(*lines_of(ctx, node), what)
        for node, what in side_effects(ctx, body)
        if not (isinstance(node, cst.Call) and method_name(node) in LIST_GROWING_METHODS)
    ]
    turned_off = _commented_out_decorator(ctx, function.node)
    if turned_off is not None:
        blockers.append(
            Blocker(
                turned_off,
                turned_off,
                "holds a commented-out `@tf.function` above the step: tracing was turned off "
                "on purpose (delete the comment to let `tfrewrite fix` decorate it)",
                intent=True,
            )
        )
    # Python state the step reads that changes between calls (a module
    # global the epoch loop rebinds, a counter): frozen once it is traced.
    # Reported here too, so the decorator is withheld even when TFR201 is
    # not selected.
    frozen = list(FrozenState(ctx).reads(function))
    blockers.extend(
        Blocker(
            *lines_of(ctx, read.node),
            f"reads `{read.name}`, Python state ({read.how}): tracing freezes its value at "
            "the first call",
        )
        for read in frozen
    )
    blockers.extend(_rebound_by_calling_loops(ctx, function, loops, {r.name for r in frozen}))
    blockers.extend(
        Blocker(
            *lines_of(ctx, call),
            f"calls the step with {what} that changes every iteration: decorated, each new "
            f"value would trace a new graph (TFR203); pass `tf.constant({value})` there",
        )
        for call, value, what in changing_number_arguments(ctx, loops, function.node.name.value)
    )
    blockers.extend(fresh_object_arguments(ctx, function))
    blockers.extend(tensor_iterations(ctx, function))
    schedule = failing_schedule(ctx, [body])
    if schedule is not None:
        blockers.append(schedule)
    plain_methods = _python_methods(ctx)
    owner = ctx.class_of(function)
    info = ctx.index.classes.get(owner[0]) if owner is not None else None
    held = {
        attr: callee.rpartition(".")[2]
        for attr, callee in (info.held_objects if info else {}).items()
    }
    jit = options.get("jit_compile") == "True"
    params = _parameters(function)
    local = set(name_use(list(getattr(body, "body", ()))).writes)
    framework_objects = _framework_objects(ctx, body)
    loggers = logger_names(ctx)
    python_calls: set[int] = set()  # calls of a method of a Python class of the file
    for node in iter_nodes(body, into_functions=False):
        state = _python_state_update(node, local)
        if state is not None:
            blockers.append(
                Blocker(
                    *lines_of(ctx, node),
                    f"updates `{state}`, Python state outside the step: under tracing the "
                    "update runs once, at trace time",
                )
            )
        if not isinstance(node, cst.Call):
            continue
        qualified = ctx.names.qualified_name(node.func) or ""
        if builds_variables(qualified):
            short = dotted_name(node.func) or qualified
            blockers.append(
                Blocker(
                    *lines_of(ctx, node),
                    f"creates `{short}(...)` on every call, and a `tf.function` only supports "
                    "variables created once: build it outside the step",
                )
            )
        method = method_name(node)
        receiver = dotted_name(node.func.value) if method else None  # type: ignore[attr-defined]
        python_class = None
        if (
            method in plain_methods
            and receiver
            and _plain_receiver(receiver, held)
            and receiver.partition(".")[0] not in framework_objects
        ):
            python_class = plain_methods[method]
        elif held_object_kind(ctx, owner, receiver, method) == "python":
            python_class = held[receiver.partition(".")[2]]  # type: ignore[union-attr]
        elif method and not method.startswith("__"):
            python_class = _python_object_class(ctx, receiver, params)
        if python_class is not None:
            python_calls.add(id(node))
            blockers.append(
                Blocker(
                    *lines_of(ctx, node),
                    f"calls `{receiver}.{method}(...)`, a method of the Python class "
                    f"`{python_class}`: it runs once, at trace time, on symbolic tensors "
                    "(its result is frozen into the graph, or it fails)",
                )
            )
        if is_logging_call_node(ctx, node, loggers) or (
            method in LOG_METHODS and may_be_logger(receiver)
        ):
            blockers.append(
                Blocker(
                    *lines_of(ctx, node),
                    f"calls `{ctx.code(node.func).strip()}`: Python logging runs once, at trace "
                    "time, and logs symbolic tensors",
                )
            )
        if jit and (qualified == "tensorflow.print" or dotted_name(node.func) == "print"):
            blockers.append(
                Blocker(
                    *lines_of(ctx, node),
                    "prints, and `tf.print` has no XLA kernel under the `jit_compile=True` "
                    "the step would take over from its loss",
                )
            )
    blockers.extend(
        Blocker(*lines_of(ctx, call), what)
        for call, what in keras_host_loop_calls(
            ctx, [body], owner[0] if owner is not None else None
        )
        if id(call) not in python_calls
    )
    blockers.extend(_numpy_arguments(ctx, function, loops))
    name = function.node.name.value
    for loop in loops:
        counters = _loop_counters(loop)
        if not counters:
            continue
        for call in calls_to(loop.body, name):
            for arg in call.args:
                if isinstance(arg.value, cst.Name) and arg.value.value in counters:
                    blockers.append(
                        Blocker(
                            *lines_of(ctx, call),
                            f"passes the Python int `{arg.value.value}` to the step: each new "
                            "value traces it again; pass a tensor "
                            f"(`tf.constant({arg.value.value})`) or drop the argument",
                        )
                    )
    return blockers


def _numpy_arguments(
    ctx: RuleContext, function: FunctionScope, loops: list[cst.For | cst.While]
) -> list[Blocker]:
    """NumPy arrays the calling loops hand to the step, which mixes them with
    tensors: traced, they arrive as tensors of their own dtype (float64,
    bool), and the step's arithmetic raises (see `numpy_arguments`)."""
    uses = mixed_with_tensors(function.node.body, _parameters(function))
    if not uses:
        return []
    blockers: list[Blocker] = []
    for param, array in step_array_arguments(ctx, function, loops).items():
        if param not in uses:
            continue
        taken = "" if param == array.name else f" as `{param}`"
        blockers.append(
            Blocker(
                *lines_of(ctx, array.made),
                numpy_argument_hazard(array.name, taken, ctx.code(uses[param]).strip()),
            )
        )
    return blockers


def unconverted_array_arguments(
    ctx: RuleContext, function: FunctionScope, loops: list[cst.For | cst.While]
) -> list[str]:
    """Why decorating is not proven for NumPy arrays (not float32) the calling
    loops hand to the step, which uses them where tfrewrite cannot see that
    they are converted (`loss_fn(y, pred)`): eagerly an array takes the dtype
    of the tensor it meets; traced it keeps its own, and float64 meeting the
    model's float32 raises. Arrays the step mixes with tensors in its own
    arithmetic are blockers (`_numpy_arguments`), and arrays it only hands to
    a Keras model or a Keras `Loss` are converted alike eagerly and traced
    (`step_array_arguments`)."""
    arrays = step_array_arguments(ctx, function, loops)
    if not arrays:
        return []
    mixed = mixed_with_tensors(function.node.body, _parameters(function))
    reasons: list[str] = []
    for param, array in arrays.items():
        if param in mixed:
            continue
        uses = unconverted_uses(ctx, function, param, array.dtype)
        if not uses:
            continue
        tensor = f"a {array.dtype} tensor" if array.dtype else "a tensor of its own dtype"
        reasons.append(
            f"`{param}` is {array.described} at the loop's call "
            f"({line_name_of(ctx, array.made)}): traced, it arrives as {tensor} where eagerly "
            f"it takes the dtype of the tensor it meets, and {_use_shown(ctx, function, uses[0])} "
            "may raise on it (float64 meeting the model's float32 does)"
        )
    return reasons


def _use_shown(ctx: RuleContext, function: FunctionScope, use: cst.CSTNode) -> str:
    """The call the step hands `use` to (`` `loss_fn(y, pred)` ``), or its line."""
    for node in iter_nodes(function.node.body, into_functions=False):
        if isinstance(node, cst.Call) and any(a.value is use for a in node.args):
            return f"`{ctx.code(node).strip()}`"
    return line_name_of(ctx, use)


# Decorators that wrap nothing a trace would see.
_PLAIN_DECORATORS = frozenset({"staticmethod", "classmethod"})


def step_decorators(ctx: RuleContext, node: cst.FunctionDef) -> tuple[bool, list[str]]:
    """What the step's own decorators do: whether one of them, defined in
    this file, returns a `tf.function` of its own (a `@distributed(...)`
    factory whose wrapper is decorated and calls `strategy.run(fun)`: the
    step already runs traced), and the source of those whose wrapper is not
    known."""
    unknown: list[str] = []
    for decorator in node.decorators:
        expression = decorator.decorator
        target = expression.func if isinstance(expression, cst.Call) else expression
        name = dotted_name(target)
        if name in _PLAIN_DECORATORS:
            continue
        factory = next((f for f in ctx.functions if f.parent is None and f.qualname == name), None)
        if factory is not None and any(
            isinstance(inner, cst.FunctionDef)
            and inner is not factory.node
            and tf_function_decorator(ctx, inner) is not None
            for inner in iter_nodes(factory.node)
        ):
            return True, []
        unknown.append(ctx.code(expression).strip())
    return False, unknown


def _rebound_by_calling_loops(
    ctx: RuleContext,
    function: FunctionScope,
    loops: list[cst.For | cst.While],
    reported: set[str],
) -> list[Blocker]:
    """Names the step reads from its enclosing scope that a loop calling it
    rebinds: a fresh model and optimizer per fold, a batch bound by the loop.
    A traced step keeps what it saw at its first call (the first fold's model,
    whose variables it goes on training), since the arguments that decide
    whether it traces again have not changed."""
    params = _parameters(function)
    reads = [
        name
        for name in name_use(list(getattr(function.node.body, "body", ()))).reads
        if name not in params and name not in reported
    ]
    if not reads:
        return []
    home = enclosing_function(ctx, function.node)
    blockers: list[Blocker] = []
    seen: set[str] = set()
    for loop in loops:
        if enclosing_function(ctx, loop) is not home:
            continue  # a loop in another function rebinds its own locals
        if any(node is function.node for node in iter_nodes(loop.body)):
            # Defined anew on every iteration: it reads each iteration's
            # values, but decorated there each iteration makes a new
            # `tf.function`, which traces on every call.
            blockers.append(
                Blocker(
                    *lines_of(ctx, function.node),
                    "defines the step anew on every iteration of the loop that calls it: "
                    "decorated there, each iteration makes a new `tf.function`, which traces "
                    "on every call; define it before the loop, passing what the loop "
                    "rebinds as arguments",
                )
            )
            break
        bound = set(name_use(list(getattr(loop.body, "body", ()))).writes)
        if isinstance(loop, cst.For):
            bound |= {n.value for n in iter_nodes(loop.target) if isinstance(n, cst.Name)}
        for name in reads:
            if name in bound and name not in seen:
                seen.add(name)
                blockers.append(
                    Blocker(
                        *lines_of(ctx, _binding_statement(loop, name)),
                        f"rebinds `{name}` in the loop that calls the step, which reads it: a "
                        f"traced step keeps the `{name}` of its first call",
                    )
                )
    return blockers


def _binding_statement(loop: cst.For | cst.While, name: str) -> cst.CSTNode:
    """The first statement in `loop` that binds `name` (the loop itself when
    only its target does)."""
    for node in iter_nodes(loop.body, into_functions=False):
        if isinstance(node, cst.SimpleStatementLine) and name in name_use([node]).writes:
            return node
    return loop
