"""Project facts: which functions run traced, across every indexed file.

A function runs traced when it is decorated with `@tf.function` (any spelling),
wrapped by `tf.function(f)`, given to `compile(loss=..., metrics=...)`, is the
`call` of a Keras `Loss`/`Layer`/`Model`, a `Model.train_step`/`test_step`/
`predict_step`, a `Metric.update_state`/`result`, or is called from a function
that runs traced. Functions nested inside a traced function run traced too.

This module propagates those contexts and records what each module learns
from the others. What it yields is `traced_function`'s; names are resolved
by `project_lookup`; arguments flow by `call_site_flow`; Keras classes are
`keras_classes`' and losses and per-batch helpers `training_facts`'.
"""

from __future__ import annotations

import ast
import re
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import replace

from tfrewrite.facts.call_site_flow import apply_call_sites
from tfrewrite.facts.callee_facts import record_callee_parameters
from tfrewrite.facts.class_dispatch import init_computes, overrides
from tfrewrite.facts.eager_models import eagerly_compiled_classes
from tfrewrite.facts.handed_parameters import HandedCallables
from tfrewrite.facts.host_reads import record_host_reads_reached
from tfrewrite.facts.index_calls import TF_FUNCTION_NAMES, keyed_on_python_values
from tfrewrite.facts.index_names import dotted
from tfrewrite.facts.index_records import FunctionInfo, ModuleIndex, TracedSite
from tfrewrite.facts.keras_classes import (
    KerasClasses,
    record_built_by_running_call,
    record_called_classes,
    record_held_classes,
    record_held_models,
    record_weighted_classes,
)
from tfrewrite.facts.method_steps import (
    looped_train_methods,
    record_loop_method_names,
    record_looped_train_methods,
)
from tfrewrite.facts.passed_values import record_passed_values
from tfrewrite.facts.project_lookup import (
    ProjectLookup,
    is_plain_class,
    keras_base,
    named_classes,
    record_star_names,
    suffixes,
)
from tfrewrite.facts.tape_reach import link_tape_reach
from tfrewrite.facts.trace_shapes import concrete_shape_functions, modules_keras_traces
from tfrewrite.facts.traced_function import (
    COMPILE_CONTEXT,
    DYNAMIC_SHAPE_KEYWORDS,
    EAGER_LOOP_CONTEXTS,
    FRAMEWORK_TRACED_METHODS,
    HANDED_CONTEXT,
    KERAS_LOOP_HOOKS,
    KERAS_TENSOR_ARGUMENTS,
    LOSS_BASES,
    LOSS_SIGNATURES,
    NESTED_CONTEXT,
    OVERRIDES_CONTEXT,
    OWN_DECORATOR,
    PENDING_CALLER_CONTEXT,
    PENDING_NESTED_CONTEXT,
    PENDING_STEP_CONTEXTS,
    PENDING_STEP_REASON,
    SCALAR_STEP_BASES,
    TRACED_CALLER_CONTEXT,
    WRAPPED,
    ProjectFacts,
    StepKey,
    TracedFunction,
    TraceMarks,
    callable_as_hook,
    fit_calls,
    tape_block_context,
    traced_base_leaf,
)
from tfrewrite.facts.training_facts import (
    loop_call_targets,
    nested_functions,
    parameter_method,
    record_custom_schedules,
    record_training_facts,
)
from tfrewrite.workspace.line_names import path_line

_METRIC_WORDS = frozenset(
    {"accuracy", "metric", "precision", "recall", "auc", "iou", "score", "acc", "update"}
)


def names_a_measure(name: str) -> bool:
    """Whether a function's name says it measures rather than trains: one of
    its words (`compute_accuracy`, `iouMetric`) is a metric's, in the
    singular or the plural (`_assymetric_focal_tversky_loss` has none)."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).lower()
    return any(
        word in _METRIC_WORDS or word.removesuffix("s") in _METRIC_WORDS
        for word in spaced.split("_")
    )


def _loss_by_signature(info: FunctionInfo) -> bool:
    if names_a_measure(info.qualname.rsplit(".", 1)[-1]):
        return False
    return tuple(info.caller_params[:2]) in LOSS_SIGNATURES


def _signature_params(source: str) -> list[tuple[bool, bool]] | None:
    """Per position of an `input_signature=[tf.TensorSpec(...), ...]`:
    (tensor, scalar). None when it cannot be read."""
    try:
        tree = ast.parse(source, mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(tree, (ast.List, ast.Tuple)):
        return None
    result = []
    for spec in tree.elts:
        if not (isinstance(spec, ast.Call) and (dotted(spec.func) or "").endswith("TensorSpec")):
            result.append((False, False))
            continue
        shape = spec.args[0] if spec.args else None
        for kw in spec.keywords:
            if kw.arg == "shape":
                shape = kw.value
        scalar = isinstance(shape, (ast.List, ast.Tuple)) and not shape.elts
        result.append((True, scalar))
    return result


def compute_facts(
    indexes: list[ModuleIndex], carried: Sequence[tuple[ModuleIndex, TracedFunction]] = ()
) -> ProjectFacts:
    """Which functions run traced, why, and with what arguments. `carried`
    are functions known to run traced for reasons the indexes no longer show
    (a fix round re-indexing one file: a loss whose decorator the round
    removed still runs in its train step); what they call runs traced too."""
    facts = ProjectFacts()
    lookup = ProjectLookup(indexes)
    queue: deque[tuple[ModuleIndex, str]] = deque()
    marks: dict[tuple[str, str], TraceMarks] = {}
    by_path = {index.path: index for index in indexes}

    def mark(
        index: ModuleIndex,
        qualname: str,
        reason: str,
        is_loss: bool = False,
        tensor: list[str] | tuple[str, ...] = (),
        likely: list[str] | tuple[str, ...] = (),
        pending: bool = False,
        elsewhere: bool = False,
        steps: Iterable[StepKey] = (),
    ) -> None:
        info = index.functions.get(qualname)
        if info is None:
            return
        key = (index.path, qualname)
        known = marks.get(key)
        if known is None:
            known = marks[key] = TraceMarks(reason, pending=pending, elsewhere=elsewhere)
            if pending:
                known.steps.update(steps)
            queue.append((index, qualname))
        elif known.pending and not pending:
            # Traced for real, not only once a fix decorates it.
            known.reason, known.pending = reason, False
            known.elsewhere = known.elsewhere or elsewhere
            known.steps.clear()
            queue.append((index, qualname))
        elif elsewhere and not known.elsewhere:
            known.elsewhere = True
            if pending and known.pending:
                known.steps.update(steps)
            queue.append((index, qualname))  # so its callees learn it too
        elif pending and known.pending and not known.steps.issuperset(steps):
            known.steps.update(steps)
            queue.append((index, qualname))  # so its callees learn the step too
        if reason not in known.contexts:
            known.contexts.append(reason)
        known.is_loss = known.is_loss or is_loss
        known.tensor.update(tensor)
        known.likely.update(likely)

    # Keras models every `compile` runs eagerly: their methods are not
    # traced by Keras's contract.
    eager_models = eagerly_compiled_classes(
        indexes, lambda index, name: named_classes(index, name, lookup)
    )

    # A Keras model's step hooks run traced where Keras runs its models
    # (`fit`, `evaluate`, `predict`); a project that hands none to Keras and
    # calls the hook itself (`net.test_step(x)` in its own eager loop) runs
    # it as the plain method it is.
    keras_modules = modules_keras_traces(indexes, lookup)
    keras_loop_modules = modules_keras_traces(indexes, lookup, loops_only=True)
    called_methods = {name.rpartition(".")[2] for index in indexes for name in index.called_names}

    def mark_class(index: ModuleIndex, qualname: str, reason: str, elsewhere: bool) -> None:
        base = keras_base(index, qualname, lookup)
        if base is None:
            return
        # A base found through project classes may be another module's.
        elsewhere = elsewhere or not any(
            traced_base_leaf(b) in FRAMEWORK_TRACED_METHODS for b in index.classes[qualname].bases
        )
        for method in FRAMEWORK_TRACED_METHODS[base]:
            method_qualname = f"{qualname}.{method}"
            info = index.functions.get(method_qualname)
            if info is None or not callable_as_hook(info, method):
                continue
            if (
                method in KERAS_LOOP_HOOKS
                and not reason
                and index.path not in keras_loop_modules
                and method in called_methods
            ):
                continue  # the project's own method, which it calls itself
            is_loss = base in LOSS_BASES
            count = 0 if is_loss else KERAS_TENSOR_ARGUMENTS.get(method, 0)
            tensors = info.caller_params[:count]
            mark(
                index,
                method_qualname,
                reason or f"{base}.{method}",
                is_loss,
                tensors,
                elsewhere=elsewhere,
            )
            if base in SCALAR_STEP_BASES:
                # The optimizer's step count: a scalar integer variable.
                marks[(index.path, method_qualname)].scalar.update(tensors)

    # What objects parameters receive: `tf.function(model.train_step)` for a
    # parameter `model` traces that class's method.
    record_passed_values(indexes, lookup)
    handed_callables = HandedCallables(indexes, lookup)
    for index in indexes:
        for qualname, info in index.functions.items():
            if any(d in TF_FUNCTION_NAMES for d in info.decorators):
                mark(index, qualname, OWN_DECORATOR)
                _mark_signature(marks[(index.path, qualname)], info, info.decorator_keywords)
        for qualname in index.classes:
            if (index.path, qualname) not in eager_models:
                mark_class(index, qualname, "", elsewhere=False)
        for site in index.traced_sites:
            where = path_line(index.path, site.lineno, index.cell_starts)
            is_loss = site.reason.startswith(f"{COMPILE_CONTEXT}(loss")
            is_metric = site.reason.startswith(
                (f"{COMPILE_CONTEXT}(metrics", f"{COMPILE_CONTEXT}(w")
            )
            for target_index, target in _traced_site_targets(index, site, lookup):
                elsewhere = target_index.path != index.path
                if target in target_index.classes:
                    mark_class(target_index, target, f"{site.reason} at {where}", elsewhere)
                    continue
                info = target_index.functions.get(target)
                if info is None:
                    continue
                params = info.caller_params
                tensors: list[str] = []
                likely: list[str] = []
                if site.arguments == "tensor":
                    # A parameter defaulting to a number or a bool keeps it:
                    # the tracer fills the leading ones (`ds.map(load)`).
                    tensors = [p for p in params if p not in info.number_defaults]
                elif site.arguments == "first" or is_metric:
                    tensors = params[: 2 if is_metric else 1]
                elif site.arguments == "likely":
                    likely = params
                mark(
                    target_index,
                    target,
                    f"{site.reason} at {where}",
                    is_loss,
                    tensors,
                    likely,
                    elsewhere=elsewhere,
                )
                if site.reason.startswith(WRAPPED):
                    options = {"tensorflow.function": site.keywords}
                    _mark_signature(marks[(target_index.path, target)], info, options)
            # A parameter handed to the tracer: what calls hand over as it.
            for handed in handed_callables.targets(index, site):
                given = handed.given_at()
                handed_info = handed.index.functions[handed.qualname]
                params = handed_info.caller_params
                # A lambda passes what it likes: AutoGraph's assumption holds.
                direct = site.arguments == "tensor" and not handed.handed.through_lambda
                filled = [p for p in params if p not in handed_info.number_defaults]
                mark(
                    handed.index,
                    handed.qualname,
                    f"{site.reason} at {where} as `{site.target}`, given at {given}",
                    False,
                    filled if direct else [],
                    [] if direct else params,
                    elsewhere=handed.index.path != index.path,
                )

    for index, known in carried:
        mark(
            index,
            known.qualname,
            known.reason,
            known.is_loss,
            tuple(known.tensor_params),
            tuple(known.likely_params),
            pending=known.pending,
            elsewhere=not known.local_reasons_only,
            steps=known.pending_steps,
        )
        marks[(index.path, known.qualname)].contexts[:] = known.contexts

    # Functions nested in each qualname prefix, built once per file: scanning
    # every function for each traced one made large files quadratic.
    nested_in: dict[int, dict[str, list[str]]] = {}
    overriding = overrides(indexes, lookup)

    def propagate() -> None:
        while queue:
            index, qualname = queue.popleft()
            known = marks[(index.path, qualname)]
            info = index.functions[qualname]
            caller = info.qualname
            how = PENDING_CALLER_CONTEXT if known.pending else TRACED_CALLER_CONTEXT
            # `K.rnn(self.step, ...)` in a base class runs a subclass's
            # `step`: a method handed to a tracer by the base class. (A
            # method the base class calls itself is judged as it is called.)
            handed = any(
                c.startswith(HANDED_CONTEXT) and not c.startswith(COMPILE_CONTEXT)
                for c in known.contexts
            )
            for sub_index, override in overriding.get((index.path, qualname), ()) if handed else ():
                mark(
                    sub_index,
                    override,
                    f"{OVERRIDES_CONTEXT} `{caller}`",
                    pending=known.pending,
                    steps=known.steps,
                    elsewhere=known.elsewhere or sub_index.path != index.path,
                )
            if id(index) not in nested_in:
                nested_in[id(index)] = nested_functions(index)
            for nested in nested_in[id(index)].get(qualname, ()):
                if nested != qualname and not index.runs_eagerly(nested):
                    where = PENDING_NESTED_CONTEXT if known.pending else NESTED_CONTEXT
                    mark(
                        index,
                        nested,
                        f"{where} `{caller}`",
                        pending=known.pending,
                        steps=known.steps,
                        elsewhere=known.elsewhere,
                    )
            for callee in info.calls:
                targets = lookup.self_call_targets(index, info, callee)
                if callee.endswith("()"):
                    # Calling a plain Python object (`parse(lines)`) runs
                    # Python bookkeeping once, while tracing, by design: the
                    # step that calls it is judged instead (`step_hazards`).
                    targets = [
                        (target_index, target)
                        for target_index, target in targets
                        if not is_plain_class(target_index, target.rpartition(".")[0], lookup)
                    ]
                if not targets and not known.pending:
                    # `self.critic.sync()`: a method of a TensorFlow object
                    # the class holds (a `tf.Module`, a Keras layer) runs in
                    # the caller's trace. A plain Python object's called for
                    # its effect (a replay buffer's `add`, a tracker's) is
                    # Python bookkeeping that runs once, while tracing, by
                    # design: the step that calls it is judged instead
                    # (`step_hazards`), as a step not traced yet is. One
                    # whose result the caller uses (`self.aug.flip(x)`)
                    # computes part of the traced value: it runs traced.
                    # `self.decoder(x)`: calling a held object runs its
                    # `__call__` (a layer overriding `__call__` itself).
                    computes = callee in info.held_results
                    held = lookup.held_callee(callee) or parameter_method(
                        index, info, callee, lookup
                    )
                    targets = [
                        (target_index, target)
                        for target_index, target in held
                        if computes
                        or not is_plain_class(target_index, target.rpartition(".")[0], lookup)
                    ]
                    if len(targets) < len(held) and _steps_through(known.contexts, qualname):
                        _record_plain_effect_call(index, qualname, callee, held)
                for target_index, target in targets:
                    if (
                        target in target_index.classes
                        and not callee.endswith("()")
                        and is_plain_class(target_index, target, lookup)
                        and init_computes(target_index, target)
                    ):
                        # `CorrBlock(f1, f2)`: building an object of a plain
                        # class runs its `__init__` in the caller's trace.
                        target = f"{target}.__init__"
                    if target in target_index.functions:
                        reason = f"{how} `{caller}`"
                        mark(
                            target_index,
                            target,
                            reason,
                            pending=known.pending,
                            steps=known.steps,
                            elsewhere=known.elsewhere or target_index.path != index.path,
                        )

    propagate()
    # Train-step methods a loop calls: found once, used twice (they can be
    # pending steps, and their modules record that a loop calls them).
    looped_methods = looped_train_methods(indexes, lookup)
    pending_steps = _pending_train_steps(indexes, lookup, marks, looped_methods)
    record_host_reads_reached(pending_steps, lookup)
    for index, qualname in pending_steps:
        mark(
            index,
            qualname,
            f"{PENDING_STEP_REASON}: it will be traced once `@tf.function` decorates it (TFR302)",
            pending=True,
            elsewhere=True,  # the loop calling it may be another module's
            steps=[(index.path, qualname)],
        )
    propagate()
    _mark_train_step_contexts(indexes, lookup, marks)
    _mark_value_references(indexes, lookup, marks)
    apply_call_sites(indexes, lookup, marks)
    tapes = link_tape_reach(indexes, lookup)
    for (path, qualname), known in marks.items():
        facts.traced.setdefault(path, {})[qualname] = TracedFunction(
            qualname,
            known.reason,
            known.is_loss,
            frozenset(known.tensor),
            frozenset(known.scalar),
            frozenset(known.likely - known.tensor),
            frozenset(known.python),
            known.pending,
            _loss_by_signature(by_path[path].functions[qualname]),
            elements=tuple(sorted(known.elements.items())),
            single_tensor_params=frozenset(known.single - known.python),
            local_reasons_only=not known.elsewhere,
            contexts=tuple(dict.fromkeys([known.reason, *known.contexts])),
            jit_compile=_own_jit_compile(by_path[path].functions[qualname]),
            mixed_callers=tuple(
                (name, python_at, tensor_at)
                for name, (python_at, tensor_at) in sorted(known.mixed.items())
            ),
            tapes=tuple(tapes.get((path, qualname), ())),
            relaxed_shapes=known.relaxed,
            pending_steps=frozenset(known.steps) if known.pending else frozenset(),
            fed_from_outside=frozenset(
                set(by_path[path].functions[qualname].params) - known.fed_inside
            ),
        )
    _record_foreign_writes(indexes)
    _record_callback_model_writes(indexes)
    _record_outside_attribute_writes(indexes, lookup)
    _record_foreign_tf_functions(indexes, lookup)
    _record_rebound_imports(indexes)
    record_star_names(indexes)
    _record_held_state(indexes, lookup)
    keras = KerasClasses(lookup)
    record_held_classes(indexes, lookup, keras)
    record_held_models(indexes, lookup, keras)
    record_called_classes(indexes, lookup, keras)
    record_built_by_running_call(indexes, lookup)
    record_weighted_classes(indexes, lookup)
    record_callee_parameters(indexes, lookup)
    record_training_facts(indexes, lookup, facts)
    record_custom_schedules(indexes, lookup)
    record_looped_train_methods(indexes, looped_methods)
    record_loop_method_names(indexes)
    # Asks which functions the project's loops call (`looped_functions`).
    for path, qualname in concrete_shape_functions(indexes, facts.traced, keras_modules):
        facts.traced[path][qualname] = replace(facts.traced[path][qualname], concrete_shapes=True)
    return facts


def _mark_value_references(
    indexes: list[ModuleIndex], lookup: ProjectLookup, marks: dict[tuple[str, str], TraceMarks]
) -> None:
    """A traced function the project hands over as a value (to a Keras
    `LossFunctionWrapper`, a trainer's `loss_fn=`, returned by a factory,
    kept in `self.loss_fn`) runs wherever its receiver runs it: a context
    it keeps when a fix removes its own `@tf.function`."""
    if not marks:
        return
    for index in indexes:
        for name, how in index.value_references.items():
            for target_index, target in lookup.find(name, index):
                known = marks.get((target_index.path, target))
                if known is None:
                    continue
                context = f"{how} of {index.path}"
                if context not in known.contexts:
                    known.contexts.append(context)
                if target_index is not index:
                    known.elsewhere = True


def _own_jit_compile(info: FunctionInfo) -> str | None:
    for decorator in info.decorators:
        if decorator in TF_FUNCTION_NAMES:
            return info.decorator_keywords.get(decorator, {}).get("jit_compile")
    return None


def _traced_site_targets(
    index: ModuleIndex, site: TracedSite, lookup: ProjectLookup
) -> list[tuple[ModuleIndex, str]]:
    """What a site hands a tracer: the definition its target names, or the
    method of the objects a parameter of the enclosing function receives
    (`tf.function(model.train_step)` in `run(model, ...)`, every caller
    passing a `Model`)."""
    found = lookup.find(site.target, index)
    caller = index.functions.get(site.caller)
    if found or caller is None:
        return found
    return parameter_method(index, caller, site.target, lookup)


def _call_targets(
    index: ModuleIndex, callee: str, lookup: ProjectLookup, caller: str = ""
) -> list[tuple[ModuleIndex, str]]:
    """The project functions a call of `callee` (as `index` names it, in
    its function `caller`) may run: a definition (for `self.method(...)`,
    overrides in subclasses too), or what calling an object a class holds
    runs (`self.net(x)`: `Net.call`)."""
    info = index.functions.get(caller)
    return lookup.self_call_targets(index, info, callee) or lookup.held_instance(callee)


def _mark_train_step_contexts(
    indexes: list[ModuleIndex], lookup: ProjectLookup, marks: dict[tuple[str, str], TraceMarks]
) -> None:
    """The train step each traced function runs in: a function that opens a
    `GradientTape` and applies gradients, or a module-level tape block in a
    loop, and everything it calls, directly or not (a module-level model's
    `call` through `net(x)` included), runs traced once that step is (TFR301
    moves a loss's decorator onto it, TFR302 decorates it, TFR303 extracts
    it from its loop). A loss whose own `@tf.function` a fix removes keeps
    this context: its hazards are still hazards of the step. The decoration
    gate reads it to find what a step reaches that is traced already (a
    Keras model's `call`). Recorded for functions already traced only;
    steps already traced give their callees that context themselves."""
    if not marks:
        return
    seen: set[tuple[str, str, str]] = set()
    queue: deque[tuple[ModuleIndex, str, str]] = deque()
    for index in indexes:
        for qualname, info in index.functions.items():
            if not info.trains:
                continue
            known = marks.get((index.path, qualname))
            if known is not None and not known.pending:
                continue
            looping = index.is_training_loop(qualname)
            kind = EAGER_LOOP_CONTEXTS[0] if looping else PENDING_STEP_CONTEXTS[0]
            queue.append((index, qualname, f"{kind} `{info.qualname}`"))
        for line, called in index.tape_block_calls.items():
            context = tape_block_context(index, line)
            for callee in called:
                for target_index, target in _call_targets(index, callee, lookup):
                    if target in target_index.functions:
                        queue.append((target_index, target, context))
        for tape_loss in index.tape_losses:
            if tape_loss.function:
                continue
            where = f"{EAGER_LOOP_CONTEXTS[1]} " + path_line(
                index.path, tape_loss.lineno, index.cell_starts
            )
            for target_index, target in lookup.find(tape_loss.callee, index):
                if target in target_index.functions:
                    queue.append((target_index, target, where))
    while queue:
        index, qualname, context = queue.popleft()
        key = (index.path, qualname)
        if (*key, context) in seen:
            continue
        seen.add((*key, context))
        known = marks.get(key)
        if known is not None and context not in known.contexts:
            known.contexts.append(context)
        for callee in index.functions[qualname].calls:
            for target_index, target in _call_targets(index, callee, lookup, qualname):
                if target in target_index.functions:
                    queue.append((target_index, target, context))


def _mark_signature(
    known: TraceMarks, info: FunctionInfo, keywords: dict[str, dict[str, str]]
) -> None:
    """`tf.function(input_signature=[...])`: its positional parameters are
    tensors; with it, or `reduce_retracing`, traces may see unknown dimensions."""
    options = keywords.get("tensorflow.function", {})
    if any(
        options.get(keyword) not in (None, "None", "False") for keyword in DYNAMIC_SHAPE_KEYWORDS
    ):
        known.relaxed = True
    source = options.get("input_signature")
    if not source:
        return
    specs = _signature_params(source)
    if specs is None:
        return
    for name, (tensor, scalar) in zip(info.caller_params, specs, strict=False):
        if tensor:
            known.tensor.add(name)
            known.single.add(name)
        if scalar:
            known.scalar.add(name)


def _looped_targets(
    indexes: list[ModuleIndex], lookup: ProjectLookup, looped_methods: set[tuple[str, str, str]]
) -> set[tuple[str, str]]:
    """(path, qualname) of functions some Python loop calls: through the
    project's names, the objects a class holds (calling one runs its
    `__call__`), or by bare name for a function nested where it is called
    (a step defined inside `main()`)."""
    found: set[tuple[str, str]] = set()
    for index in indexes:
        for callee in index.loop_calls:
            for target_index, target in loop_call_targets(index, callee, lookup):
                found.add((target_index.path, target))
            if "." not in callee:
                suffix = "." + callee
                for qualname in index.functions:
                    if qualname.endswith(suffix):
                        found.add((index.path, qualname))
    return found | {(path, qualname) for path, qualname, _ in looped_methods}


def _pending_train_steps(
    indexes: list[ModuleIndex],
    lookup: ProjectLookup,
    marks: dict[tuple[str, str], TraceMarks],
    looped_methods: set[tuple[str, str, str]],
) -> list[tuple[ModuleIndex, str]]:
    """Undecorated custom train steps (they open a `GradientTape` and apply
    gradients) called from a Python loop, not `Model.train_step` overrides:
    the functions TFR302 decorates."""
    looped = _looped_targets(indexes, lookup, looped_methods)
    result = []
    for index in indexes:
        for qualname, info in index.functions.items():
            if not info.trains:
                continue
            if index.is_training_loop(qualname) or info.consumes_grown_lists:
                continue  # a training loop (TFR303's case), or eager by design
            if (index.path, qualname) in marks or (index.path, qualname) not in looped:
                continue
            if fit_calls(info):
                continue  # Keras traces it
            result.append((index, qualname))
    return result


def _record_foreign_writes(indexes: list[ModuleIndex]) -> None:
    """`config.LR = 0.1` in one module rebinds `LR` of module `config`."""
    writes = [(index, written) for index in indexes for written in index.foreign_writes]
    if not writes:
        return
    for index in indexes:
        if not index.module:
            continue
        for writer, written in writes:
            head, _, name = written.rpartition(".")
            if head == index.module or head.endswith("." + index.module):
                how = f"rebound in `{writer.path}`"
                if index.rebound_module_names.get(name, how) == "assigned more than once":
                    index.rebound_module_names[name] = how  # not only by its own module
                index.rebound_module_names.setdefault(name, how)


def _record_callback_model_writes(indexes: list[ModuleIndex]) -> None:
    """`self.model.schedule = ...` in a Keras callback of any module sets an
    attribute of whatever model `fit` runs it with, between calls of the
    model's traced `train_step`: every module learns the attributes so set."""
    writes: dict[str, str] = {}
    for index in indexes:
        for attr, where in index.model_writes.items():
            writes.setdefault(attr, where)
    if writes:
        for index in indexes:
            index.callback_model_writes = dict(writes)


def _record_outside_attribute_writes(indexes: list[ModuleIndex], lookup: ProjectLookup) -> None:
    """`agent.noise = noise * decay` in a loop of any module, `agent` an
    object of a project class: that class's module learns the attribute
    changes between the calls of its methods (`outside_attribute_writes`)."""
    for index in indexes:
        for built, attr, line in index.object_attribute_writes:
            where = f"rebound in `{path_line(index.path, line, index.cell_starts)}`"
            for target_index, qualname in lookup.find(built, index):
                if qualname in target_index.classes:
                    writes = target_index.outside_attribute_writes.setdefault(qualname, {})
                    writes.setdefault(attr, where)


def _record_foreign_tf_functions(indexes: list[ModuleIndex], lookup: ProjectLookup) -> None:
    """`agent.update(s, a, step)` in a script, `TD3.update` a plain
    `tf.function` of another module: the script learns the call runs one
    (`foreign_tf_functions`), so a changing Python number it passes
    retraces (TFR203)."""
    for index in indexes:
        for site in index.call_sites:
            if not site.written or site.written in index.foreign_tf_functions:
                continue
            for target_index, qualname in lookup.find(site.callee, index):
                info = target_index.functions.get(qualname)
                if target_index is not index and info is not None and keyed_on_python_values(info):
                    index.foreign_tf_functions[site.written] = qualname


def _record_rebound_imports(indexes: list[ModuleIndex]) -> None:
    """`import config` then `config.SCALE` read in traced code, where the
    project rebinds `SCALE` after import (`global SCALE` in a function of
    `config`, `config.SCALE = ...` in another module): recorded in the
    importing module as `config.SCALE` -> how. Bindings that run while
    `config` is imported (its own module-level statements) are settled by
    then and are not recorded."""
    by_module: dict[str, ModuleIndex] = {}
    for index in indexes:  # also by shorter names: `losses` for `pkg.losses`
        for key in suffixes(index.module) if index.module else ():
            by_module.setdefault(key, index)
    # Written through an import (`config.SCALE = ...`): known even when the
    # written module itself was never indexed (it imports no TensorFlow).
    # (The reader's own writes are the frozen-state analysis' to judge: it
    # sees whether they run in a function or once at module level.)
    written = [(writer, target) for writer in indexes for target in writer.foreign_writes]
    for reader in indexes:
        if not reader.module_attribute_reads:
            continue
        for target in set(reader.imports.values()):
            for writer, name in written:
                if (
                    writer is not reader
                    and name.rpartition(".")[0] == target
                    and name in reader.module_attribute_reads
                ):
                    reader.rebound_imports.setdefault(name, f"rebound in `{writer.path}`")
            module = by_module.get(target)
            if module is None or module is reader:
                continue
            for name, how in module.rebound_module_names.items():
                read = f"{target}.{name}"
                if how.startswith("rebound in `") and read in reader.module_attribute_reads:
                    reader.rebound_imports.setdefault(read, how)  # a function or another module


def _record_held_state(indexes: list[ModuleIndex], lookup: ProjectLookup) -> None:
    """`self.memory = ReplayBuffer(...)` where the project's `ReplayBuffer`
    updates `self.mem_cntr += 1` in a method: a traced method of the holder
    that reads `self.memory.mem_cntr` reads Python state that changes between
    calls. Recorded in the holder's module as `Agent.memory` -> attributes."""
    for index in indexes:
        for class_qualname, info in index.classes.items():
            for attr, callee in info.held_objects.items():
                for target_index, target in lookup.find(callee, index):
                    held = target_index.classes.get(target)
                    if held is None or not held.updated_attrs:
                        continue
                    name = target.rpartition(".")[2]
                    index.held_state[f"{class_qualname}.{attr}"] = {
                        updated: f"updated in place in `{name}.{method}`"
                        for updated, method in held.updated_attrs.items()
                    }
                    break


# Every method name a framework traces on each step of what it runs.
_FRAMEWORK_STEP_METHODS = frozenset(
    method for methods in FRAMEWORK_TRACED_METHODS.values() for method in methods
)


def _steps_through(contexts: list[str], qualname: str) -> bool:
    """Whether a traced function runs on every call of what traces it: its
    own `@tf.function`, or a method a framework traces per step (a Keras
    `call`, `train_step`, a metric's `update_state`). A function traced only
    as what those call may be set-up they run once (a layer's `add_weight`
    tracking the variable it makes)."""
    return OWN_DECORATOR in contexts or qualname.rpartition(".")[2] in _FRAMEWORK_STEP_METHODS


def _record_plain_effect_call(
    index: ModuleIndex, caller: str, callee: str, held: list[tuple[ModuleIndex, str]]
) -> None:
    """`self.schedule.step()` in traced `caller`, a method of a plain Python
    object called for its effect: when every method it may run changes
    attributes of its object on every call (sets them, or the items of the
    containers they hold: a replay buffer's `add`; not set-up under a test
    that they are unset), the call's effect happens once,
    while tracing (`ModuleIndex.plain_effect_calls`, what TFR202 reports
    there)."""
    written: set[str] = set()
    for target_index, target in held:
        info = target_index.functions.get(target)
        changed = info.self_changes if info is not None else set()
        if not changed:
            return
        written |= changed
    method = held[0][1].rsplit(".", 2)
    name = ".".join(method[-2:])
    index.plain_effect_calls.setdefault(caller, {})[callee] = (name, tuple(sorted(written)))
