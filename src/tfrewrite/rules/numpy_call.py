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

from tfrewrite.analysis.index import ModuleIndex
from tfrewrite.analysis.tensors import TensorFacts, is_tensor_op
from tfrewrite.analysis.walk import iter_with_ancestors
from tfrewrite.context import RuleContext
from tfrewrite.findings import Applicability
from tfrewrite.rules.base import CstFix, Invalid, NodeEdit, Rule, Valid, Violation

# TensorFlow ops that take a host value and fail on a symbolic tensor: a
# `.numpy()` argument to them cannot simply be dropped.
_HOST_VALUE_OPS = frozenset({"tensorflow.constant", "tensorflow.Variable"})
# Builtins that turn a tensor into a Python number.
_HOST_BUILTINS = frozenset({"float", "int"})


def _method_call(node: cst.Call, method: str) -> cst.BaseExpression | None:
    """`x` for a call `x.<method>()` without arguments, else None."""
    func = node.func
    if isinstance(func, cst.Attribute) and func.attr.value == method and not node.args:
        return func.value
    return None


def _candidate(call: cst.Call) -> bool:
    """The shapes this rule looks at, checked before any tensor facts are computed."""
    if isinstance(call.func, cst.Attribute):
        return call.func.attr.value in ("numpy", "item") and not call.args
    return isinstance(call.func, cst.Name) and call.func.value in _HOST_BUILTINS


class NumpyCallInTracedCode(Rule):
    code = "TFR105"
    name = "numpy-call-in-traced-code"
    summary = "`.numpy()`, `float(x)` or `int(x)` on a tensor in traced code raises when traced"
    fix_applicability = Applicability.UNSAFE
    explanation = """
    ## What it does
    Finds `x.numpy()`, `float(x)`, `int(x)` and `x.item()` on tensors in code
    that runs traced (a `@tf.function`, a loss given to `compile`, a Keras
    `Loss.call`, ...).

    ## Why is this bad?
    Run eagerly, a tensor holds a value and `x.numpy()` copies it to the
    host. Traced, `x` is symbolic and has no value yet: `x.numpy()` raises
    `AttributeError: 'SymbolicTensor' object has no attribute 'numpy'`, and
    `float(x)` / `int(x)` raise `TypeError`. A function that passed its eager
    tests fails as soon as it is wrapped in `tf.function` or compiled by Keras.
    (`x.item()` fails even eagerly: tensors have no `.item()`.)

    ## The fix
    When the NumPy value goes straight back into a TensorFlow op
    (`tf.reduce_sum(x.numpy())`), the round trip through the host is dropped:
    `tf.reduce_sum(x)`. The fix is unsafe: `.numpy()` also cut the gradient
    (a NumPy array is a constant to `tf.GradientTape`), and without it
    gradients flow through `x`. That is usually what was meant; to keep the
    gradient cut, write `tf.stop_gradient(x)` instead.

    ## When it is not rewritten
    A `.numpy()` whose value is used as a NumPy array or a Python value
    (assigned to a name, passed to NumPy or Python code, indexed, compared),
    or passed to `tf.constant` / `tf.Variable` (which need a host value), is
    reported without a fix: compute that value with TensorFlow ops (TFR104
    rewrites NumPy math on tensors), or move the code out of traced code.
    `float(x)` and `int(x)` are reported without a fix: the code around them
    expects a Python number (for `range`, a shape, string formatting), and
    whether a tensor (`tf.cast(x, tf.float32)`) can take its place depends on
    that code.

    Only values known to be tensors are reported: `.numpy()` on a NumPy
    array, a `tf.Variable` or an attribute such as `self.w` is left alone.
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
            note="the value goes straight back into a TensorFlow op: unsafe, gradients now flow",
        ),
        Invalid(
            """
            import numpy as np
            from tensorflow import keras

            def clipped_mse(y_true, y_pred):
                error = (y_true - y_pred).numpy()
                return keras.ops.mean(np.minimum(error**2, 1.0))

            keras.Sequential().compile(loss=clipped_mse)
            """,
            None,
            note="used as a NumPy array: no fix",
        ),
        Invalid(
            """
            import tensorflow as tf

            @tf.function
            def scale(x):
                n = int(tf.shape(x)[0])
                return x / float(tf.reduce_max(x))
            """,
            None,
            findings=2,
        ),
        Valid(
            """
            import numpy as np
            import tensorflow as tf

            def report(x):
                return float(tf.reduce_mean(x).numpy())

            @tf.function
            def step(x, table):
                return x + table.numpy()
            """,
            note="not traced; `table` is not known to be a tensor",
        ),
    )

    def applies_to(self, index: ModuleIndex, traced_qualnames: set[str]) -> bool:
        """Only files where a traced function calls `.numpy()`, `.item()` or a
        host conversion builtin (a pass-1 fact: calls are recorded by name)."""
        for qualname in traced_qualnames:
            info = index.functions.get(qualname)
            if info is not None and (
                not info.method_calls.isdisjoint(("numpy", "item"))
                or not _HOST_BUILTINS.isdisjoint(info.calls)
            ):
                return True
        return False

    def check(self, ctx: RuleContext) -> Iterator[Violation]:
        tf, _ = ctx.tensorflow()
        for function in ctx.traced_functions():
            for node, ancestors in iter_with_ancestors(function.node.body, (function.node,)):
                if not (isinstance(node, cst.Call) and _candidate(node)):
                    continue
                facts = ctx.tensors(ctx.innermost_scope(function, ancestors))
                violation = self._violation(ctx, node, ancestors, facts, tf)
                if violation is not None:
                    yield violation

    def _violation(
        self,
        ctx: RuleContext,
        call: cst.Call,
        ancestors: Sequence[cst.CSTNode],
        facts: TensorFacts,
        tf: str,
    ) -> Violation | None:
        source = _method_call(call, "numpy")
        if source is not None and facts.is_tensor(source):
            return self._numpy(ctx, call, source, ancestors, tf)
        source = _method_call(call, "item")
        if source is not None and facts.is_tensor(source):
            return Violation(
                call,
                f"`{ctx.code(call)}`: tensors have no `.item()` (eager or traced); use the "
                f"tensor itself, `{tf}.reshape({ctx.code(source)}, [])` for a scalar tensor",
            )
        if (
            isinstance(call.func, cst.Name)
            and call.func.value in _HOST_BUILTINS
            and ctx.names.qualified_name(call.func) is None
            and len(call.args) == 1
            and not call.args[0].star
            and call.args[0].keyword is None
            and facts.is_tensor(call.args[0].value)
        ):
            builtin = call.func.value
            dtype = "float32" if builtin == "float" else "int32"
            return Violation(
                call,
                f"`{ctx.code(call)}` needs the tensor's value, which traced code does not have: "
                f"it raises `TypeError` when traced; keep a tensor "
                f"(`{tf}.cast({ctx.code(call.args[0].value)}, {tf}.{dtype})`) or compute this "
                "outside traced code",
            )
        return None

    def _numpy(
        self,
        ctx: RuleContext,
        call: cst.Call,
        source: cst.BaseExpression,
        ancestors: Sequence[cst.CSTNode],
        tf: str,
    ) -> Violation:
        message = (
            f"`{ctx.code(call)}` on a tensor in traced code: a symbolic tensor has no value, "
            "so this raises `AttributeError` when traced"
        )
        consumer = self._tensorflow_consumer(ctx, call, ancestors)
        if consumer is None:
            return Violation(
                call,
                f"{message}; not rewritten: the value is used as a NumPy array or a Python "
                "value here; compute it with TensorFlow ops, or move this out of traced code",
            )
        if consumer in _HOST_VALUE_OPS:
            return Violation(
                call,
                f"{message}; not rewritten: `{consumer.replace('tensorflow', tf, 1)}` needs a "
                f"host value; use `{ctx.code(source)}` itself",
            )
        replacement = source
        if not isinstance(source, (cst.Tuple, cst.GeneratorExp)):
            # An argument needs no parentheses of its own: `(a - b).numpy()` -> `a - b`.
            replacement = source.with_changes(lpar=call.lpar, rpar=call.rpar)
        value = ctx.code(source.with_changes(lpar=(), rpar=()))
        fix = CstFix(
            f"Pass `{value}` itself (unsafe: gradients now flow through it; "
            f"`{tf}.stop_gradient({value})` keeps them cut)",
            (NodeEdit(call, replacement),),
            applicability=Applicability.UNSAFE,
        )
        return Violation(call, message, fix)

    @staticmethod
    def _tensorflow_consumer(
        ctx: RuleContext, call: cst.Call, ancestors: Sequence[cst.CSTNode]
    ) -> str | None:
        """The qualified name of the TensorFlow op `call` is an argument of, or None."""
        if len(ancestors) < 2:
            return None
        arg, outer = ancestors[-1], ancestors[-2]
        if not (
            isinstance(arg, cst.Arg)
            and arg.value is call
            and not arg.star
            and isinstance(outer, cst.Call)
            and any(a is arg for a in outer.args)
        ):
            return None
        qualified = ctx.names.qualified_name(outer.func)
        if qualified in _HOST_VALUE_OPS:
            return qualified
        return qualified if is_tensor_op(qualified) else None


RULES = (NumpyCallInTracedCode,)
