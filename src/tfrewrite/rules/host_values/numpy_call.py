"""TFR105: `.numpy()` (and other reads of a tensor's host value) in traced code.

An eager tensor holds a value, so `x.numpy()`, `float(x)` and `int(x)` work
when a function runs eagerly. In traced code `x` is symbolic: it has no value
until the graph runs, and these raise (`AttributeError: 'SymbolicTensor'
object has no attribute 'numpy'`, `TypeError: float() argument must be ...
not 'SymbolicTensor'`). Only a tensor by the shared analysis is reported:
`.numpy()` on anything else (a NumPy array, an unknown object) is left alone.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import libcst as cst

from tfrewrite.facts.bindings import all_params, bound_names, local_bindings
from tfrewrite.facts.context import FunctionScope, RuleContext
from tfrewrite.facts.keras_names import keras_path
from tfrewrite.facts.tape_callers import under_tape
from tfrewrite.facts.tensors import TensorFacts
from tfrewrite.facts.vocabulary import (
    HOST_CONVERSIONS,
    KERAS_HOST_READS,
    LENGTH_READS,
    VARIABLE_WRITES,
)
from tfrewrite.facts.walk import enclosing_statement_line, iter_with_ancestors
from tfrewrite.findings import Applicability
from tfrewrite.rewrite.fixes import CstFix, NodeEdit, Violation
from tfrewrite.rewrite.numpy_operands import builtin_extremum, numpy_function
from tfrewrite.rewrite.tensor_results import Followed, follow
from tfrewrite.rewrite.traced_calls import Refusal
from tfrewrite.rewrite.value_uses import UseKind, wrapper_replacement
from tfrewrite.rules.base import Invalid, Rule, Valid
from tfrewrite.rules.host_values.array_methods import reduction, reduction_chain
from tfrewrite.rules.host_values.print_rewrite import announces_tracing, rewritten_print_around
from tfrewrite.rules.host_values.stream_writes import written_stream
from tfrewrite.rules.host_values.traced_context import differentiated


def _method_call(node: cst.Call, method: str) -> cst.BaseExpression | None:
    """`x` for a call `x.<method>()` without arguments, else None."""
    func = node.func
    if isinstance(func, cst.Attribute) and func.attr.value == method and not node.args:
        return func.value
    return None


def _candidate(call: cst.Call) -> bool:
    """The shapes this rule looks at, checked before any tensor facts are computed."""
    if isinstance(call.func, cst.Attribute):
        if call.func.attr.value == "get_value":
            return len(call.args) == 1
        return call.func.attr.value in ("numpy", "item") and not call.args
    if isinstance(call.func, cst.Name) and call.func.value == "get_value":
        return len(call.args) == 1
    return isinstance(call.func, cst.Name) and (
        call.func.value in HOST_CONVERSIONS or call.func.value in LENGTH_READS
    )


def _keras_host_read(ctx: RuleContext, call: cst.Call) -> cst.BaseExpression | None:
    """`v` for Keras' `K.get_value(v)` (`vocabulary.KERAS_HOST_READS`)."""
    arg = call.args[0] if len(call.args) == 1 else None
    if arg is None or arg.star or arg.keyword is not None:
        return None
    if keras_path(ctx.names.qualified_name(call.func)) not in KERAS_HOST_READS:
        return None
    return arg.value


class NumpyCallInTracedCode(Rule):
    code = "TFR105"
    name = "numpy-call-in-traced-code"
    summary = "`.numpy()`, `float(x)` or `int(x)` on a tensor in traced code raises when traced"
    fix_applicability = Applicability.SAFE
    explanation = """
    ## What it does
    Finds `x.numpy()`, `float(x)`, `int(x)` and `x.item()` on tensors in code
    that runs traced (a `@tf.function`, a loss given to `compile`, a Keras
    `Loss.call`, ...), and `.numpy()` on anything there: only TensorFlow
    values have it (`model(x).numpy()`, `self.w.numpy()`). Keras' backend
    read `K.get_value(v)` (`tf.keras.backend.get_value`) is one too: traced,
    it leaves the graph to read `v` (`tf.init_scope`), so a variable's value
    is read once, at trace time, and a loss weight a callback lowers each
    epoch stays what it was at the first trace (measured: 40, 40, 40 traced
    for 40, 20, 10 eagerly); it is rewritten as `.numpy()` is. `len(x)` of a
    tensor an op computes there (`len(tf.shape(x))`, `rows = tf.reshape(...)`
    then `len(rows)`) is reported without a fix: only AutoGraph gives the
    length traced, and whether the code needs a Python int there is the
    author's to say; `len` of a parameter is not (Keras hands `call` and
    `train_step` a tuple of inputs as often as one tensor).

    ## Why is this bad?
    Run eagerly, a tensor holds a value and `x.numpy()` copies it to the
    host. Traced, `x` is symbolic and has no value yet: `x.numpy()` raises
    `AttributeError: 'SymbolicTensor' object has no attribute 'numpy'`, and
    `float(x)` / `int(x)` raise `TypeError` unless AutoGraph turns them into
    casts to float32 and int32: with `autograph=False`, or in a loss Keras 3
    compiles, they raise. A function
    that passed its eager tests fails as soon as it is wrapped in
    `tf.function` or compiled by Keras.
    (`x.item()` fails even eagerly: tensors have no `.item()`.)

    ## The fix
    The host value is followed to every use. Where each use accepts a tensor
    (TensorFlow ops, arithmetic with tensors, indexing, shapes, `tf.print`,
    NumPy math that TFR104 rewrites), the tensor takes the host value's place:
    - `x.numpy()` becomes `x` (same dtype); `tf.constant(x.numpy())` and
      `np.asarray(x.numpy())` become `x`, with a dtype `tf.cast(x, dtype)`.
      `v.numpy()` of a variable is a snapshot: where it is returned or
      stored, it becomes `v.read_value()` (`tf.identity(v)` for an attribute
      or parameter that may be one), never the variable object, which later
      assignments would change;
    - `float(x)` becomes `tf.cast(x, tf.float32)` (a Python float is float32
      to TensorFlow), or `tf.cast(x, t.dtype)` where it meets the tensor `t`;
    - `int(x)` becomes `x` for an integer tensor, else `tf.cast(x, tf.int32)`
      (both truncate toward zero);
    - array reductions right after `.numpy()` become the tensor's, by the
      op table TFR104 uses: `x.numpy().max(axis=1)` becomes
      `tf.reduce_max(x, axis=1)` (`min`, `sum`, `mean`, `prod`, `std`,
      `var` alike, chained ones too). NumPy averages integers in float64 and
      sums them in int64 where TensorFlow keeps their dtype, and
      `tf.reduce_max` rejects booleans: such tensors are refused, and a
      tensor of unknown dtype makes the fix unsafe.

    A host value is a constant to `tf.GradientTape`: `.numpy()` and `float()`
    cut the gradient. Where the value is differentiated (inside a
    `tf.GradientTape` block, in a function called from one, directly or
    through other functions of the file, in a loss, in a Keras layer's or
    model's `call`, which `fit` runs under its tape), the rewrite keeps the
    cut with `tf.stop_gradient(x)`, and the fix is safe. Elsewhere it writes
    `x` and the fix is unsafe: gradients now flow through it (if the function
    is ever differentiated), which is usually what was meant.

    ## Values used as targets
    A DQN or actor-critic step often computes its target with
    `target_net(s).numpy()` in the tape: the round trip is what kept the
    target out of the gradient. Stripping `.numpy()` would let gradients flow
    through the target into every variable that produced it: the online
    network's own when the two networks share layers (or are one network),
    and the target network's whenever the tape differentiates with respect
    to it. So in the tape, or in a helper the tape's code calls,
    `q_next = target_net(s).numpy().max(axis=1)` becomes
    `q_next = tf.reduce_max(tf.stop_gradient(target_net(s)), axis=1)`: the
    loss and the gradients are the eager original's. A target computed
    before the tape opens is a constant to it either way and keeps the plain
    fix, except where it goes to NumPy math (`np.max(q_next, axis=1)`) and
    is not known to be a tensor: `tf.stop_gradient(target_net(s))` is
    written there too, as the TensorFlow value TFR104 needs to rewrite that
    math. Helpers called only from other files are not seen as under a tape.

    ## When it is not rewritten
    A use that needs a Python or NumPy value (`range(n)`, `len(v)`, `int(...)`
    of it again, `.tolist()`, NumPy calls TFR104 does not rewrite), a Python
    `print` of the value that TFR103 cannot rewrite into `tf.print`, and
    string formatting of it elsewhere (a tensor shows as `Tensor(...)`) are
    reported with the reason and no fix. A value held in a name and shown by
    prints TFR103 rewrites in the same run (`loss_value = loss.numpy()`, then
    `print("loss %.4f" % loss_value)`) becomes the tensor, with an unsafe fix:
    it rests on that rewrite. `int(x)` whose result meets a tensor is
    refused: the Python int takes the tensor's dtype after truncating. Uses
    that cannot be followed (passed to a function of the project, returned
    to a caller, stored on an attribute) make the fix unsafe.

    ## Fix safety
    The fix is safe when `x` is a proven tensor, every use of the host value
    is known to accept the tensor in its dtype, and the gradient is kept as
    it was: `tf.stop_gradient` where the value is differentiated, or none is
    needed (an `int`, or a value only printed or stored into a variable). It
    is unsafe (applied with `--unsafe-fixes`; the fix message says why) when:
    - `.numpy()` is called on a value not known to be a tensor (it assumes
      one: only TensorFlow values have `.numpy()`);
    - nothing shows the code is differentiated, so gradients now flow where
      the host value cut them;
    - the Python number met a value of unknown dtype, or several tensors, or
      one that is not a plain name, whose dtype it would have taken;
    - an array reduction is folded on a tensor of unknown dtype;
    - a use cannot be followed or decides Python control flow;
    - it rests on TFR103 rewriting the prints that show the value.

    The uses listed above that need a host value are reported with no fix,
    and so are array methods other than the reductions above (`.reshape`,
    `.argmax`, `.tolist()`) and reductions with arguments TensorFlow lacks
    (`out=`, `ddof=1`).
    """
    examples = (
        Invalid(
            """
            import tensorflow as tf

            @tf.function
            def total(x):
                y = tf.square(x)
                return tf.reduce_sum(y.numpy())
            """,
            """
            import tensorflow as tf

            @tf.function
            def total(x):
                y = tf.square(x)
                return tf.reduce_sum(y)
            """,
            unsafe=True,
            note="not known to be differentiated: unsafe, gradients now flow",
        ),
        Invalid(
            """
            import tensorflow as tf

            def weighted_mse(y_true, y_pred):
                weights = tf.abs(y_true).numpy()
                return tf.reduce_mean(weights * tf.square(y_true - y_pred))

            tf.keras.Sequential().compile(loss=weighted_mse)
            """,
            """
            import tensorflow as tf

            def weighted_mse(y_true, y_pred):
                weights = tf.stop_gradient(tf.abs(y_true))
                return tf.reduce_mean(weights * tf.square(y_true - y_pred))

            tf.keras.Sequential().compile(loss=weighted_mse)
            """,
            note="in a loss the host round trip cut the gradient: `tf.stop_gradient` keeps it cut",
        ),
        Invalid(
            """
            import tensorflow as tf

            @tf.function
            def step(model, x):
                with tf.GradientTape() as tape:
                    target = model(x).numpy()
                    loss = tf.reduce_mean(tf.square(model(x) - target))
                return tape.gradient(loss, model.trainable_variables)
            """,
            """
            import tensorflow as tf

            @tf.function
            def step(model, x):
                with tf.GradientTape() as tape:
                    target = tf.stop_gradient(model(x))
                    loss = tf.reduce_mean(tf.square(model(x) - target))
                return tape.gradient(loss, model.trainable_variables)
            """,
            unsafe=True,
            note="`.numpy()` on a model's output: assumed a tensor, so unsafe",
        ),
        Invalid(
            """
            import tensorflow as tf

            class Agent:
                def __init__(self, net, target_net):
                    self.net = net
                    self.target_net = target_net

                @tf.function
                def train_step(self, states, actions, rewards, states_2):
                    with tf.GradientTape() as tape:
                        q_next = self.target_net(states_2).numpy().max(axis=1)
                        q = tf.reduce_sum(self.net(states) * actions, axis=1)
                        loss = tf.reduce_mean(tf.square(rewards + 0.9 * q_next - q))
                    return tape.gradient(loss, self.net.trainable_variables)
            """,
            """
            import tensorflow as tf

            class Agent:
                def __init__(self, net, target_net):
                    self.net = net
                    self.target_net = target_net

                @tf.function
                def train_step(self, states, actions, rewards, states_2):
                    with tf.GradientTape() as tape:
                        q_next = tf.reduce_max(tf.stop_gradient(self.target_net(states_2)), axis=1)
                        q = tf.reduce_sum(self.net(states) * actions, axis=1)
                        loss = tf.reduce_mean(tf.square(rewards + 0.9 * q_next - q))
                    return tape.gradient(loss, self.net.trainable_variables)
            """,
            unsafe=True,
            note="a target value: kept out of the gradient, its `.max` becomes `tf.reduce_max`",
        ),
        Invalid(
            """
            import tensorflow as tf

            @tf.function
            def scale(x):
                n = int(tf.shape(x)[0])
                for i in range(n):
                    x = x * 0.5
                return x
            """,
            None,
            note="`range` needs a Python int: no fix",
        ),
        Valid(
            """
            import numpy as np
            import tensorflow as tf

            def report(x):
                return float(tf.reduce_mean(x).numpy())

            @tf.function
            def step(x, table):
                return x + float(len(table))
            """,
            note="not traced; `len(table)` is a Python value",
        ),
    )

    def check(self, ctx: RuleContext) -> Iterator[Violation]:
        tf, _ = ctx.tensorflow()
        for function in ctx.traced_functions():
            for node, ancestors in iter_with_ancestors(function.node.body, (function.node,)):
                if not (isinstance(node, cst.Call) and _candidate(node)):
                    continue
                scope = ctx.innermost_scope(function, ancestors)
                if _read_by_print(ctx, node, ancestors, scope):
                    continue  # TFR103 rewrites the print, with the tensor in its place
                violation = self._violation(ctx, node, ancestors, scope, tf)
                if violation is not None:
                    yield violation

    def _violation(
        self,
        ctx: RuleContext,
        call: cst.Call,
        ancestors: Sequence[cst.CSTNode],
        scope: FunctionScope,
        tf: str,
    ) -> Violation | None:
        facts = ctx.tensors(scope)
        if isinstance(call.func, cst.Name) and call.func.value in LENGTH_READS:
            return _length_read(ctx, call, ancestors, scope, facts, tf)
        source = _keras_host_read(ctx, call)
        if source is not None:
            message = (
                f"`{ctx.code(call)}` reads the value on the host: traced, Keras' `get_value` "
                "leaves the graph to read it, so a variable's value is read once, at trace "
                "time, and later assignments are ignored (a symbolic tensor there raises)"
            )
            return self._host_read(ctx, call, source, ancestors, scope, facts, tf, message)
        source = _method_call(call, "numpy")
        if source is not None and _may_have_numpy(source):
            return self._host_read(ctx, call, source, ancestors, scope, facts, tf)
        source = _method_call(call, "item")
        if source is not None and facts.is_tensor(source):
            return Violation(
                call,
                f"`{ctx.code(call)}`: tensors have no `.item()` (eager or traced); use the "
                f"tensor itself, `{tf}.reshape({ctx.code(source)}, [])` for a scalar tensor",
            )
        if (
            isinstance(call.func, cst.Name)
            and call.func.value in HOST_CONVERSIONS
            and ctx.names.qualified_name(call.func) is None
            and len(call.args) == 1
            and not call.args[0].star
            and call.args[0].keyword is None
            and _tensor_here(facts, call.args[0].value, ancestors)
        ):
            return self._host_read(ctx, call, call.args[0].value, ancestors, scope, facts, tf)
        return None

    def _host_read(
        self,
        ctx: RuleContext,
        call: cst.Call,
        source: cst.BaseExpression,
        ancestors: Sequence[cst.CSTNode],
        scope: FunctionScope,
        facts: TensorFacts,
        tf: str,
        keras_read: str | None = None,
    ) -> Violation:
        """`x.numpy()`, `float(x)` or `int(x)`, or Keras' `get_value(x)` (its
        message `keras_read`, read as `.numpy()`): the finding, with the
        tensor itself in its place where every use of the value accepts a
        tensor."""
        builtin = (
            call.func.value if isinstance(call.func, cst.Name) and keras_read is None else None
        )
        value = ctx.code(source.with_changes(lpar=(), rpar=()))
        # Keras' `get_value` takes a variable or a tensor by contract.
        proven = _tensor_here(facts, source, ancestors) or keras_read is not None
        if keras_read is not None:
            message = keras_read
        elif builtin is None:
            message = (
                f"`{ctx.code(call)}` on a tensor in traced code: a symbolic tensor has no value, "
                "so this raises `AttributeError` when traced"
            )
            if not proven:
                message = (
                    f"`{ctx.code(call)}` in traced code: only TensorFlow values have `.numpy()`, "
                    "and a symbolic tensor or a variable in a graph has no value, so this raises "
                    "when traced"
                )
        else:
            dtype = "float32" if builtin == "float" else "int32"
            message = (
                f"`{ctx.code(call)}` needs the tensor's value, which traced code does not have: "
                f"only AutoGraph saves it, by turning it into a cast; without AutoGraph "
                f"(`autograph=False`, a loss Keras 3 compiles) it raises `TypeError`. Keep a "
                f"tensor (`{tf}.cast({value}, {tf}.{dtype})`) or compute this outside traced code"
            )
        try:
            # `x.numpy().max(axis=1)`: the array's reductions become the
            # tensor's, and their result is the value followed to its uses.
            chain, methods, outer = (
                reduction_chain(call, ancestors) if builtin is None else ([], [], ancestors)
            )
            reduced: cst.Call = chain[-1] if chain else call
            parent = outer[-1] if outer else None
            if isinstance(parent, cst.Arg) and parent.star:
                raise Refusal(
                    f"the value is unpacked with `{parent.star}`, which iterates over it in Python"
                )
            reason = differentiated(ctx, scope, ancestors) or under_tape(ctx, scope)
            # TFR104 rewrites NumPy math on the value only where it then sees a
            # tensor: one the analysis knows (or assumes, for a parameter), or
            # what a TensorFlow op returns (`tf.reduce_max`, `tf.cast`).
            # `model(x).numpy()` that becomes `model(x)` is neither:
            # `tf.stop_gradient(model(x))` is, and keeps the cut as it was.
            known = proven or facts.is_likely_tensor(source) or bool(chain)
            known = known or builtin is not None
            numpy_uses: list[cst.CSTNode] = []

            def rewritten_by_tfr104(node: cst.CSTNode) -> bool:
                if not _rewritten_by_tfr104(ctx, node):
                    return False
                numpy_uses.append(node)
                return True

            followed = follow(
                ctx, scope, facts, reduced, outer, "the value", tf, rewritten_by_tfr104
            )
            needs_op = bool(numpy_uses) and not known
            printed_notes = _refuse_silent_uses(ctx, scope, followed, tf)
            if chain:
                # A reduction is a new tensor: no variable snapshot to take.
                text, unsafe = value, []
            else:
                text, unsafe = self._replacement(ctx, call, source, builtin, facts, followed, tf)
            unsafe += printed_notes
            gradient = builtin != "int" and not _no_gradient_uses(ctx, followed)
            if (gradient and reason is not None) or needs_op:
                text = f"{tf}.stop_gradient({text})"
            elif gradient:
                unsafe.append(
                    f"gradients now flow through `{value}`, where the host value cut them; "
                    f"nothing shows this code is differentiated (`{tf}.stop_gradient({value})` "
                    "keeps them cut)"
                )
            for method_call, method in zip(chain, methods, strict=True):
                folded, notes = reduction(
                    method_call, method, facts.kind(source), value, ctx.code, tf
                )
                text = folded.apply(text, tf)
                unsafe += [note for note in notes if note not in unsafe]
            if not proven:
                unsafe.append(
                    f"it assumes `{value}` is a tensor (only TensorFlow values have `.numpy()`)"
                )
            target: cst.CSTNode = reduced
            replacement = cst.parse_expression(text)
            if followed.folded is not None:
                target = followed.folded.call
                replacement = wrapper_replacement(followed.folded, ctx, tf, text)
            elif reduced.lpar:
                replacement = replacement.with_changes(lpar=reduced.lpar, rpar=reduced.rpar)
            elif _needs_parentheses(replacement, outer):
                replacement = replacement.with_changes(
                    lpar=[cst.LeftParen()], rpar=[cst.RightParen()]
                )
        except Refusal as refusal:
            return Violation(call, f"{message}; not rewritten: {refusal}")
        unsafe += followed.unsafe
        shown = ctx.code(replacement.with_changes(lpar=(), rpar=()))
        edits = (NodeEdit(target, replacement), *followed.wrapper_edits)
        _, imports = ctx.tensorflow()
        if f"{tf}." not in ctx.code(replacement):
            imports = ()
        if unsafe:
            fix = CstFix(
                f"Use `{shown}` (unsafe: {'; '.join(unsafe)})",
                edits,
                imports,
                Applicability.UNSAFE,
            )
        else:
            fix = CstFix(f"Use `{shown}`", edits, imports)
        return Violation(call, message, fix)

    @staticmethod
    def _replacement(
        ctx: RuleContext,
        call: cst.Call,
        source: cst.BaseExpression,
        builtin: str | None,
        facts: TensorFacts,
        followed: Followed,
        tf: str,
    ) -> tuple[str, list[str]]:
        """The tensor to write for the host value, and why that is unsafe.
        `.numpy()` keeps the dtype: the tensor itself. A Python number adapts
        to the tensor it meets and is float32/int32 to a TensorFlow op: the
        tensor is cast to that."""
        value = ctx.code(source.with_changes(lpar=(), rpar=()))
        unsafe: list[str] = []
        if builtin is None:
            if isinstance(source, (cst.Tuple, cst.GeneratorExp)):
                return ctx.code(source), unsafe
            if _may_be_variable(facts, source) and any(
                use.kind is UseKind.UNKNOWN or isinstance(use.node, cst.Return)
                for use in followed.uses
            ):
                # `v.numpy()` of a variable is a snapshot; `v` itself, stored or
                # returned, would change with later assignments.
                if facts.kind(source).variable:
                    return f"{value}.read_value()", unsafe
                return f"{tf}.identity({value})", unsafe
            return value, unsafe
        kind = facts.kind(source)
        met = {ctx.code(node): node for node in followed.meets}
        if followed.unknown_meets:
            other = ctx.code(followed.unknown_meets[0])
            unsafe.append(
                f"the Python number meets `{other}`, whose dtype it would take; the tensor "
                f"keeps its own"
            )
        if builtin == "int":
            if met:
                raise Refusal(
                    f"the Python int meets {', '.join(f'`{m}`' for m in met)}, whose dtype it "
                    f"takes; `int` truncates first: write `{tf}.cast({tf}.cast({value}, "
                    f"{tf}.int32), ...)` by hand"
                )
            if kind.integer:
                return value, unsafe
            return f"{tf}.cast({value}, {tf}.int32)", unsafe
        if len(met) == 1:
            [node] = met.values()
            if isinstance(node, (cst.Name, cst.Attribute)):
                return f"{tf}.cast({value}, {ctx.code(node)}.dtype)", unsafe
            unsafe.append(f"the Python float meets `{ctx.code(node)}`, whose dtype it would take")
        elif len(met) > 1:
            unsafe.append(
                f"the Python float meets {', '.join(f'`{m}`' for m in met)}, whose dtypes may "
                "differ"
            )
        if _only_printed(ctx, followed):
            return value, unsafe
        return f"{tf}.cast({value}, {tf}.float32)", unsafe


def _length_read(
    ctx: RuleContext,
    call: cst.Call,
    ancestors: Sequence[cst.CSTNode],
    scope: FunctionScope,
    facts: TensorFacts,
    tf: str,
) -> Violation | None:
    """`len(x)` of a tensor: traced, only AutoGraph gives its length (and
    runs it as the original did); reported without a fix, since whether the
    code needs a Python int (`range(len(x))`, `[0] * len(x)`) or takes a
    tensor is the author's to say."""
    if (
        ctx.names.qualified_name(call.func) is not None
        or len(call.args) != 1
        or call.args[0].star
        or call.args[0].keyword is not None
        or not _tensor_here(facts, call.args[0].value, ancestors)
        or not _computed_tensor(scope, call.args[0].value)
    ):
        return None
    value = ctx.code(call.args[0].value)
    return Violation(
        call,
        f"`{ctx.code(call)}` of a tensor needs AutoGraph: traced, only AutoGraph turns it "
        f"into the tensor's length; without it (`autograph=False`, a Keras 3 `call`) `len` of "
        f"a symbolic tensor raises `TypeError`. Use `{value}.shape[0]` where that dimension "
        f"is known, or `{tf}.shape({value})[0]`",
        autograph_converts=True,
    )


def _computed_tensor(
    scope: FunctionScope, value: cst.BaseExpression, seen: frozenset[str] = frozenset()
) -> bool:
    """Whether `value` is what an op computes in the function: a call, a
    slice of one, or a local name every binding of which is one
    (`ids = tf.numpy_function(
    ...)`; `bindings.local_bindings`). A parameter, or an item of one, may
    hold a container instead: Keras hands `call` and `train_step` what
    their caller gave, a tuple or a list of inputs as often as one tensor
    (`len(data)` of `(x, y)`), unless every call site in the project, or
    an `input_signature`, gives it one tensor (`single_tensor_params`) in
    code that runs traced today."""
    if isinstance(value, cst.Call):
        return True
    if isinstance(value, cst.Subscript) and all(
        isinstance(element.slice, cst.Slice) for element in value.slice
    ):
        # A slice of a computed tensor is one (`tf.argsort(p)[::-1]`).
        return _computed_tensor(scope, value.value, seen)
    if not isinstance(value, cst.Name) or value.value in seen:
        return False
    if value.value in {p.name.value for p in all_params(scope.node.params)}:
        # A step traced only once a fix decorates it keeps AutoGraph, which
        # gives the length: its parameters are asked about when it runs
        # traced today.
        traced = scope.runs_traced
        return (
            traced is not None and not traced.pending and value.value in traced.single_tensor_params
        )
    values = local_bindings(scope.node).get(value.value, [])
    seen = seen | {value.value}
    return bool(values) and all(
        v is not None and _computed_tensor(scope, v, seen) for v in values
    )


def _tensor_here(
    facts: TensorFacts, node: cst.BaseExpression, ancestors: Sequence[cst.CSTNode]
) -> bool:
    """`node` is a tensor where it is read: its names hold what the bindings
    before its statement made (`h = tf.shape(x)[1]` then `h = int(r *
    float(h))`: `float(h)` reads the tensor, whatever `h` becomes after)."""
    line = enclosing_statement_line(ancestors)
    kind = facts.kind_at(node, line) if line is not None else facts.kind(node)
    return kind.tensor


def _may_be_variable(facts: TensorFacts, node: cst.BaseExpression) -> bool:
    """A `tf.Variable`, or a value that may be one: an attribute (`self.w`,
    `optimizer.lr`) or a name the function does not compute itself (a
    parameter, a global). A local computed in the function is a tensor."""
    if facts.is_tensor(node):
        return False
    if facts.kind(node).variable or isinstance(node, cst.Attribute):
        return True
    return isinstance(node, cst.Name) and (
        node.value in facts.params or node.value not in bound_names(facts.function.body)
    )


def _may_have_numpy(node: cst.BaseExpression) -> bool:
    """Whether `node.numpy()` may be TensorFlow's host read: anything but a
    literal or a display (only TensorFlow values have `.numpy()`)."""
    return not isinstance(
        node,
        (
            cst.SimpleString,
            cst.FormattedString,
            cst.ConcatenatedString,
            cst.Integer,
            cst.Float,
            cst.List,
            cst.Dict,
            cst.Set,
            cst.Tuple,
        ),
    )


def _rewritten_by_tfr104(ctx: RuleContext, node: cst.CSTNode) -> bool:
    """NumPy math TFR104 rewrites once its operand is a tensor: the value
    passed to it is not a blocker (`np.mean(x.numpy())` -> `tf.reduce_mean(x)`)."""
    return numpy_function(node, ctx) is not None or builtin_extremum(node, ctx) is not None


def _refuse_silent_uses(
    ctx: RuleContext, scope: FunctionScope, followed: Followed, tf: str
) -> list[str]:
    """Uses where a tensor would not fail but silently show `Tensor(...)`:
    a Python `print` and string formatting. A value held in a name and shown
    only by prints that TFR103 rewrites into `tf.print` in the same run is
    no refusal: those prints show the tensor it becomes. The fix then rests
    on that rewrite (unsafe: with TFR103 not selected, the print would show
    `Tensor(...)`); the notes saying so are returned."""
    notes: list[str] = []
    for use in followed.uses:
        shown = _is_builtin_print(ctx, use.node) if isinstance(use.node, cst.Call) else False
        formatted = isinstance(use.node, cst.FormattedStringExpression) or (
            isinstance(use.node, cst.BinaryOperation)
            and isinstance(use.node.operator, cst.Modulo)
            and isinstance(use.node.left, (cst.SimpleString, cst.ConcatenatedString))
        )
        if (shown or formatted) and use.names:
            printer = rewritten_print_around(ctx, scope, use.node)
            if printer is not None:
                notes.append(
                    f"{use.subject('the value')} is printed by a `print` that TFR103 rewrites "
                    f"into `{tf}.print` in the same run, which shows the tensor"
                )
                continue
        if shown:
            raise Refusal(
                f"{use.subject('the value')} is printed by Python `print`, which would show "
                f"`Tensor(...)` once; TFR103 rewrites the print into `{tf}.print`"
            )
        if formatted:
            raise Refusal(
                f"{use.subject('the value')} is formatted into a string, where a tensor shows "
                "as `Tensor(...)`"
            )
    return notes


def _read_by_print(
    ctx: RuleContext, call: cst.Call, ancestors: Sequence[cst.CSTNode], scope: FunctionScope
) -> bool:
    """`t.numpy()`, `float(t)` or `int(t)` of a proven tensor written inside
    the arguments of a Python `print` (`print(f"loss {loss.numpy():.3f}")`)
    or of a write to `sys.stdout` / `sys.stderr` (a `print` with `end=""`):
    TFR103 rewrites the print into `tf.print` with the tensor in its place,
    so the host read is not a finding of its own. A print that announces
    tracing stays Python and keeps the finding."""
    printer = next(
        (
            a
            for a in reversed(ancestors)
            if isinstance(a, cst.Call)
            and (_is_builtin_print(ctx, a) or written_stream(ctx, a) is not None)
        ),
        None,
    )
    if printer is None or announces_tracing([arg.value for arg in printer.args]):
        return False
    source = _method_call(call, "numpy")
    if source is None and isinstance(call.func, cst.Name) and len(call.args) == 1:
        source = call.args[0].value if call.func.value in HOST_CONVERSIONS else None
    return source is not None and ctx.tensors(scope).is_tensor(source)


def _is_builtin_print(ctx: RuleContext, call: cst.Call) -> bool:
    return (
        isinstance(call.func, cst.Name)
        and call.func.value == "print"
        and ctx.names.qualified_name(call.func) is None
    )


def _only_printed(ctx: RuleContext, followed: Followed) -> bool:
    """Every use prints the value with `tf.print` (no gradient, no dtype)."""
    return bool(followed.uses) and all(
        isinstance(use.node, cst.Call)
        and ctx.names.qualified_name(use.node.func) == "tensorflow.print"
        for use in followed.uses
    )


def _no_gradient_uses(ctx: RuleContext, followed: Followed) -> bool:
    """Every use prints the value or stores it into a variable: no gradient
    reaches it there, so no gradient stop is needed."""
    return bool(followed.uses) and all(
        isinstance(use.node, cst.Call)
        and (
            ctx.names.qualified_name(use.node.func) == "tensorflow.print"
            or (
                isinstance(use.node.func, cst.Attribute)
                and use.node.func.attr.value in VARIABLE_WRITES
            )
        )
        for use in followed.uses
    )


def _needs_parentheses(node: cst.BaseExpression, ancestors: Sequence[cst.CSTNode]) -> bool:
    """A replacement that is an operation, where an operator, attribute or
    subscript around it would bind into it."""
    if not isinstance(
        node,
        (cst.BinaryOperation, cst.UnaryOperation, cst.BooleanOperation, cst.Comparison, cst.IfExp),
    ):
        return False
    parent = ancestors[-1] if ancestors else None
    return isinstance(
        parent,
        (cst.BinaryOperation, cst.UnaryOperation, cst.Attribute, cst.Subscript, cst.Comparison),
    )


RULES = (NumpyCallInTracedCode,)
