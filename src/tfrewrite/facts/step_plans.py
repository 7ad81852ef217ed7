"""Train steps that want a decorator (TFR302, and TFR301 when it moves a
loss's decorator onto the step): the undecorated steps a Python loop calls,
the options each takes over from its losses, and what keeps each eager
(`step_hazards`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from tfrewrite.facts.blockers import Blocker
from tfrewrite.facts.context import FunctionScope, RuleContext
from tfrewrite.facts.step_hazards import (
    decoration_blockers,
    python_class_calls,
    reads_static_shape,
    step_decorators,
    unchecked_schedules,
    unconverted_array_arguments,
    unpacked_object_results,
    unseen_held_objects,
)
from tfrewrite.facts.tf_function import carried_options, make_decorator, tf_function_decorator
from tfrewrite.facts.training import (
    feeds_short_final_batch,
    is_train_step,
    loops_calling,
    traced_by_fit,
)
from tfrewrite.facts.walk import iter_nodes


@dataclass
class StepPlan:
    """An undecorated train step called from a Python loop, and how to
    decorate it: the Python side effects in it are blockers that rules on
    traced code must fix in the same run."""

    function: FunctionScope
    options: dict[str, str]
    loss_callees: list[str]  # dotted names of the losses it differentiates
    blockers: list[Blocker]
    # A method that no loop in its module calls: a loop elsewhere calls
    # `obj.name(...)` and only this class has a train-step method `name`.
    by_method_name: bool = False
    # Calls of methods of held objects whose class tfrewrite cannot see
    # (`step_hazards.unseen_held_objects`): decorating is not proven safe.
    unseen_calls: list[str] = field(default_factory=list)
    # Star-imported modules the project does not hold: names the step uses
    # may come from them, so what it calls is not known.
    unseen_star_imports: list[str] = field(default_factory=list)
    # Decorators of the step whose wrapper is not known (`@timed`): the
    # `tf.function` would trace the wrapper too.
    unknown_decorators: list[str] = field(default_factory=list)
    # NumPy arrays (not float32) the loop passes, which the step hands where
    # tfrewrite cannot see them converted: why, one per argument
    # (`step_hazards.unconverted_array_arguments`).
    array_arguments: list[str] = field(default_factory=list)
    # Calls that build or call an object of a plain Python class of the
    # project (`step_hazards.python_class_calls`): code tracing runs once,
    # which no rule checks as traced code.
    python_class_calls: list[str] = field(default_factory=list)
    # A method that a loop in another module calls, resolved by its class:
    # what that loop passes is not checked here.
    looped_elsewhere: bool = False
    # The project's own learning-rate schedules the optimizer may call in the
    # traced step (`step_hazards.unchecked_schedules`): not checked as traced code.
    schedules: list[str] = field(default_factory=list)
    # Objects it calls and unpacks the result of, whose class is not known
    # (`step_hazards.unpacked_object_results`).
    unpacked_results: list[str] = field(default_factory=list)
    # With `by_method_name`: the method of the step's class that the loop
    # calls, and that calls the step (SAC's `train` calling `update_critic`).
    via: str = ""
    # Functions of other modules it reaches that read a tensor's value on
    # the host (`ModuleIndex.host_reads_reached`): checked in their own run.
    host_reads: list[str] = field(default_factory=list)
    # The parameters its own tape loops iterate, each an element of the
    # caller's loop (`ModuleIndex.per_call_tape_loops`).
    per_call_loops: list[str] = field(default_factory=list)

    @property
    def unproven(self) -> str | None:
        """Why decorating the step is an unsafe fix, or None when it is proven."""
        if self.by_method_name:
            return "the loop's call is matched to this method by its name only"
        if self.looped_elsewhere:
            return "the loop that calls it is in another module, whose arguments are not checked"
        if self.unknown_decorators:
            listed = ", ".join(f"`@{d}`" for d in self.unknown_decorators)
            return (
                f"the step is wrapped by {listed}: `@tf.function` would trace the wrapper too, "
                "and what it does is not known"
            )
        if self.unseen_star_imports:
            imports = ", ".join(f"`from {m} import *`" for m in self.unseen_star_imports)
            return (
                f"the file takes names from {imports}, which tfrewrite cannot see: what "
                "they are is not known"
            )
        if self.unseen_calls:
            calls = ", ".join(self.unseen_calls)
            return (
                f"it calls {calls} on an object whose class tfrewrite cannot see: a Python "
                "method would run once, at trace time"
            )
        if self.python_class_calls:
            calls = ", ".join(self.python_class_calls)
            return (
                f"it calls {calls}, Python code that would run once, at trace time, on "
                "symbolic tensors; tfrewrite does not check it as traced code"
            )
        if self.host_reads:
            functions = ", ".join(f"`{name}`" for name in self.host_reads)
            return (
                f"it reaches {functions} of another module, which reads a value on the host "
                "(`.numpy()`, `.item()` or NumPy): on a symbolic tensor that raises once "
                "traced, unless a fix in that module rewrites it"
            )
        if self.array_arguments:
            return "; ".join(self.array_arguments)
        if self.unpacked_results:
            calls = ", ".join(self.unpacked_results)
            return (
                f"it unpacks what {calls} returns, an object whose class is not known here: "
                "one tensor (what a Keras loss object returns) unpacks eagerly but raises "
                "when traced"
            )
        if self.per_call_loops:
            names = ", ".join(f"`{name}`" for name in self.per_call_loops)
            return (
                f"its loops over {names}, with the updates in them, run in the trace: over a "
                "tuple or list they unroll, over a tensor AutoGraph makes them a "
                "`tf.while_loop` that runs the optimizer inside it"
            )
        if self.schedules:
            return (
                f"its optimizer may call the learning-rate schedule {', '.join(self.schedules)} "
                "inside the traced step, without AutoGraph; tfrewrite does not check it as "
                "traced code"
            )
        return None


def loss_keys(ctx: RuleContext, function: FunctionScope) -> list[str]:
    """Callees (as pass 1 names them) of the losses `function`'s tape differentiates."""
    return [t.callee for t in ctx.index.tape_losses if t.function == function.qualname]


def options_from_losses(ctx: RuleContext, callees: list[str]) -> dict[str, str]:
    options: dict[str, str] = {}
    for callee in callees:
        options.update(carried_options(ctx.index.loss_decorator_options.get(callee, {})))
    return options


def undecorated_train_steps(ctx: RuleContext) -> list[StepPlan]:
    plans = []
    for function in ctx.functions:
        info = ctx.index.functions.get(function.qualname)
        if info is None or not (info.trains):
            continue
        if ctx.index.is_training_loop(function.qualname):
            continue  # a training loop with its own tape loop: TFR303's case
        if function.traced is not None:
            continue
        if info.consumes_grown_lists:
            continue  # eager by design: every call sees lists of a new length
        if tf_function_decorator(ctx, function.node) is not None:
            continue
        if traced_by_fit(ctx, function) or not is_train_step(ctx, function):
            continue
        if function.node.asynchronous is not None or any(
            isinstance(n, (cst.Yield, cst.Await))
            for n in iter_nodes(function.node.body, into_functions=False)
        ):
            continue  # a generator or coroutine cannot become a tf.function
        loops = loops_calling(ctx, function.node.name.value)
        looped = ctx.index.looped_functions.get(function.qualname)
        if not loops and looped is None:
            continue
        callees = loss_keys(ctx, function)
        options = options_from_losses(ctx, callees)
        traced_by_wrapper, unknown_decorators = step_decorators(ctx, function.node)
        if traced_by_wrapper:
            continue  # `@distributed(...)` returns a `tf.function` of its own

        short_batches = looped or any(feeds_short_final_batch(ctx, loop) for loop in loops)
        # A short last batch then costs one more trace, not a `None` batch size
        # in the step's shape arithmetic.
        if short_batches and not reads_static_shape(ctx, function):
            options.setdefault("reduce_retracing", "True")
        blockers = decoration_blockers(ctx, function, loops, options)
        by_method_name = function.qualname in ctx.index.matched_by_name and not loops
        via = ctx.index.matched_by_name.get(function.qualname, "") if by_method_name else ""
        looped_elsewhere = function.is_method and not loops and not by_method_name
        unseen = unseen_held_objects(ctx, function)
        plans.append(
            StepPlan(
                function,
                options,
                callees,
                blockers,
                by_method_name,
                unseen,
                list(ctx.index.unseen_star_imports),
                unknown_decorators,
                unconverted_array_arguments(ctx, function, loops),
                python_class_calls=python_class_calls(ctx, function),
                looped_elsewhere=looped_elsewhere,
                schedules=unchecked_schedules(ctx, [function.node.body]),
                unpacked_results=unpacked_object_results(ctx, function),
                via=via,
                host_reads=list(ctx.index.host_reads_reached.get(function.qualname, ())),
                per_call_loops=sorted(info.tape_loop_params)
                if function.qualname in ctx.index.per_call_tape_loops
                else [],
            )
        )
    return plans


def decorated_step(ctx: RuleContext, plan: StepPlan) -> tuple[cst.FunctionDef, tuple]:
    """The step with `@tf.function(...)` added, and the imports that needs."""
    alias, imports = ctx.tensorflow()
    node = plan.function.node
    decorator = make_decorator(alias, plan.options)
    return node.with_changes(decorators=[decorator, *node.decorators]), imports
