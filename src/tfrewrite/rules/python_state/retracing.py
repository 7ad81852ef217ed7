"""TFR203: a `tf.function` called with a Python number that changes every iteration."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from tfrewrite.facts.bindings import single_values
from tfrewrite.facts.call_arguments import bind_arguments
from tfrewrite.facts.context import RuleContext
from tfrewrite.facts.index_calls import keyed_on_python_values
from tfrewrite.facts.names import dotted_name
from tfrewrite.facts.python_counters import LoopNumbers
from tfrewrite.facts.walk import iter_nodes, iter_with_ancestors
from tfrewrite.findings import Applicability
from tfrewrite.rewrite.fixes import Violation
from tfrewrite.rules.base import Invalid, Rule, Valid
from tfrewrite.workspace.line_names import line_name


def _enclosing_class(ancestors: tuple[cst.CSTNode, ...]) -> str | None:
    """The qualname of the innermost class around a loop (whose `self` its
    method sees), or None."""
    names: list[str] = []
    owner = None
    for node in ancestors:
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            names.append(node.name.value)
            if isinstance(node, cst.ClassDef):
                owner = ".".join(names)
    return owner


def _traced_callee(
    ctx: RuleContext,
    func: cst.BaseExpression,
    chain: list[str],
    owner: str | None,
    decorated: set[str],
    scope: cst.FunctionDef | None = None,
) -> str | None:
    """How the call names a `tf.function` of this file, or None: a function
    by name (the innermost enclosing function's nested `def` first, then
    outwards: `train.train_step`), a method of the enclosing class
    (`self.update(...)`), of an object the class holds (`self.agent.act(...)`
    for `self.agent = Agent()`), or of an object the module builds once
    (`agent.act(...)` for `agent = Agent()`) or the function `scope` around
    the loop builds (`policy = Agent(...)` in `train`)."""
    written = dotted_name(func)
    if written is not None and written in ctx.index.foreign_tf_functions:
        return written  # another module's `tf.function` (`agent.update`)
    if isinstance(func, cst.Name):
        name = func.value
        if any(
            ".".join([*chain[:depth], name]) in decorated for depth in range(len(chain), -1, -1)
        ):
            return name
        return None
    if not isinstance(func, cst.Attribute):
        return None
    receiver = dotted_name(func.value) or ""
    local_class = ctx.receiver_class(receiver, owner) if receiver else None
    if local_class is None and scope is not None and receiver.isidentifier():
        local_class = _built_in(ctx, scope, receiver)
    if local_class is not None and f"{local_class}.{func.attr.value}" in decorated:
        return f"{receiver}.{func.attr.value}"
    return None


def _relay(
    ctx: RuleContext,
    call: cst.Call,
    numbers: LoopNumbers,
    loop: cst.CSTNode,
    relays: dict[cst.FunctionDef, dict[str, tuple[cst.CSTNode, str]]],
) -> None:
    """`visualize_filter(filter_index)` in `for filter_index in range(64)`:
    a plain function of this file (module level, not traced) that the loop
    hands a number it changes, recorded by the parameter that receives it."""
    if not isinstance(call.func, cst.Name):
        return
    target = next(
        (f.node for f in ctx.functions if f.qualname == call.func.value and f.runs_traced is None),
        None,
    )
    if target is None:
        return
    for name, bound in bind_arguments(target, call.args).items():
        described = numbers.describe(bound.value) if bound.passed and bound.value else None
        if described is not None:
            relays.setdefault(target, {}).setdefault(name, (loop, described[1]))


def _relayed(
    ctx: RuleContext,
    relays: dict[cst.FunctionDef, dict[str, tuple[cst.CSTNode, str]]],
    decorated: set[str],
    reported: set[int],
) -> Iterator[Violation]:
    """The `tf.function` calls of each relaying function that pass on the
    parameter a loop changes: each call of the function traces anew."""
    for function, params in relays.items():
        for inner in iter_nodes(function.body, into_functions=False):
            if not isinstance(inner, cst.Call) or id(inner) in reported:
                continue
            callee = _traced_callee(ctx, inner.func, [], None, decorated, function)
            if callee is None:
                continue
            for arg in inner.args:
                value = arg.value
                if not isinstance(value, cst.Name) or value.value not in params:
                    continue
                loop, what = params[value.value]
                line = ctx.lines([loop])[0][0]
                reported.add(id(inner))
                yield Violation(
                    inner,
                    f"`{callee}` is called with `{value.value}`, which the loop on "
                    f"{line_name(line)} "
                    f"fills with {what} that changes every iteration (through "
                    f"`{function.name.value}`): each new value traces a new graph; pass "
                    f"`tf.constant({value.value})` or give `{callee}` an `input_signature`",
                )
                break


def _built_in(ctx: RuleContext, scope: cst.FunctionDef, name: str) -> str | None:
    """The class of this file whose object the function `scope` binds
    `name` to, once (`policy = Agent(...)`); None otherwise."""
    value = single_values(scope).get(name)
    callee = dotted_name(value.func) if isinstance(value, cst.Call) else None
    return callee if callee in ctx.index.classes else None


class PythonScalarRetraces(Rule):
    code = "TFR203"
    name = "python-scalar-argument-retraces"
    summary = "A `tf.function` called with a changing Python number retraces on every call"
    fix_applicability = Applicability.NONE
    explanation = """
    ## What it does
    Finds calls to a `@tf.function` inside loops that pass a Python number
    the loop changes: the counter of `for step in range(...)` (or
    `enumerate(...)`), a `while` counter (`step += 1`), or a decayed Python
    learning rate (`lr *= 0.9`). The function may be a method, called on
    `self`, on an object the class holds (`self.agent.act(...)`) or on one
    the module builds once (`agent = Agent()`, then `agent.act(...)`), also
    when that function is another module's (a script's episode loop calling
    `agent.update(s, a, step)` of the module defining the agent). A loop
    handing such a number to a plain function of the module that passes it
    on to a `tf.function` (`visualize(channel)` calling `ascent_step(image,
    channel)`) is reported where the number is passed on: each call of the
    plain function traces anew.

    ## Why is this bad?
    A `tf.function` keys its traces on the values of Python arguments: every
    new integer traces and compiles a new graph. A loop of 10,000 steps traces
    10,000 graphs: slower than running eagerly, and memory grows until
    TensorFlow warns about excessive retracing.

    ## How to fix it
    Pass a tensor (`train_step(x, tf.constant(step))`) or give the function an
    `input_signature`.

    ## Fix safety
    There is no automatic fix: inside the function the argument becomes a
    tensor, so Python code that branches on it must change too (see TFR101).
    """
    examples = (
        Invalid(
            """
            import tensorflow as tf

            @tf.function
            def train_step(x, step):
                return x * step

            for step in range(100):
                train_step(tf.ones(3), step)
            """
        ),
        Invalid(
            """
            import tensorflow as tf

            class Trainer:
                def __init__(self):
                    self.scale = tf.Variable(1.0)

                @tf.function
                def update(self, x, epoch):
                    return x * self.scale * epoch

                def fit(self, x):
                    for epoch in range(10):
                        self.update(x, epoch)
            """
        ),
        Valid(
            """
            import tensorflow as tf

            @tf.function
            def train_step(x, step):
                return x * step

            for step in range(100):
                train_step(tf.ones(3), tf.constant(step))
            """
        ),
        Invalid(
            """
            import tensorflow as tf

            @tf.function
            def ascent_step(image, channel):
                return image + tf.gather(image, channel, axis=-1)[..., None]

            def visualize(channel):
                image = tf.zeros((1, 8, 8, 4))
                for _ in range(20):
                    image = ascent_step(image, channel)
                return image

            for channel in range(4):
                visualize(channel)
            """,
            note="the loop changes the number a function passes on to a `tf.function`",
        ),
        Invalid(
            """
            import tensorflow as tf

            @tf.function
            def train_step(x, learning_rate):
                return x * learning_rate

            lr = 0.1
            for epoch in range(10):
                train_step(tf.ones(3), lr)
                lr *= 0.9
            """
        ),
        Invalid(
            """
            import tensorflow as tf

            @tf.function
            def train_step(x, step):
                return x * tf.cast(step, x.dtype)

            step = 0
            while step < 100:
                train_step(tf.ones(3), step)
                step += 1
            """
        ),
        Valid(
            """
            import tensorflow as tf

            @tf.function
            def head(x, grid):
                return tf.reshape(x, [grid, -1])

            def targets(x):
                outputs = []
                grid = 13
                for _ in range(3):
                    outputs.append(head(x, grid))
                    grid *= 2
                return outputs

            dataset = tf.data.Dataset.from_tensor_slices(tf.zeros([4, 676 * 21])).map(targets)
            """,
            note="a loop that runs while tracing another function traces a few graphs once",
        ),
        Valid(
            """
            import tensorflow as tf

            @tf.function
            def train_step(x, learning_rate):
                return x * learning_rate

            lr = tf.Variable(0.1)
            for epoch in range(10):
                train_step(tf.ones(3), lr)
                lr.assign(lr * 0.9)
            """,
            note="a variable keeps one trace",
        ),
        Valid(
            """
            import tensorflow as tf

            @tf.function(input_signature=[tf.TensorSpec([3]), tf.TensorSpec([], tf.int32)])
            def train_step(x, step):
                return x * tf.cast(step, x.dtype)

            for step in range(100):
                train_step(tf.ones(3), step)
            """,
            note="an input signature converts the int to a tensor",
        ),
    )

    def check(self, ctx: RuleContext) -> Iterator[Violation]:
        decorated = {
            qualname
            for qualname, info in ctx.index.functions.items()
            if keyed_on_python_values(info)
        }
        if not decorated and not ctx.index.foreign_tf_functions:
            return
        reported: set[int] = set()
        # Plain functions of this file a loop hands a changing number:
        # function node -> parameter -> (the loop, what it passes).
        relays: dict[cst.FunctionDef, dict[str, tuple[cst.CSTNode, str]]] = {}
        traced = {id(f.node) for f in ctx.functions if f.runs_traced is not None}
        for node, ancestors in iter_with_ancestors(ctx.module):
            if not isinstance(node, (cst.For, cst.While)):
                continue
            if any(id(a) in traced for a in ancestors):
                continue  # unrolled while tracing: a few traces, not one per step
            scope = next(
                (a for a in reversed(ancestors) if isinstance(a, cst.FunctionDef)), ctx.module
            )
            numbers = LoopNumbers.of(node, scope, ctx)
            if not numbers:
                continue
            # A name the loop calls resolves to the innermost enclosing
            # function's nested `def` first, then outwards (`train.train_step`).
            chain = [
                a.name.value for a in ancestors if isinstance(a, (cst.FunctionDef, cst.ClassDef))
            ]
            owner = _enclosing_class(ancestors)
            for inner in iter_nodes(node.body, into_functions=False):
                if not isinstance(inner, cst.Call) or id(inner) in reported:
                    continue
                function = scope if isinstance(scope, cst.FunctionDef) else None
                callee = _traced_callee(ctx, inner.func, chain, owner, decorated, function)
                if callee is None:
                    _relay(ctx, inner, numbers, node, relays)
                    continue
                for arg in inner.args:
                    described = numbers.describe(arg.value)
                    if described is None:
                        continue
                    value, what = described
                    reported.add(id(inner))
                    yield Violation(
                        inner,
                        f"`{callee}` is called with {what} that changes every iteration: "
                        "each new value traces a new graph; pass "
                        f"`tf.constant({value})` or give `{callee}` an `input_signature`",
                    )
                    break
        yield from _relayed(ctx, relays, decorated, reported)


RULES = (PythonScalarRetraces,)
