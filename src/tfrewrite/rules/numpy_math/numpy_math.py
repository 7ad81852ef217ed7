"""TFR104: NumPy math on tensors in traced code, rewritten into TensorFlow ops.

NumPy converts its arguments to arrays on the host. An eager tensor converts
(it holds a value), so `np.mean(np.square(y_true - y_pred))` works when run
eagerly; a symbolic tensor, which is what a traced function sees, has no value
yet and the call raises `NotImplementedError: Cannot convert a symbolic
tf.Tensor to a numpy array`. The TensorFlow op with the same semantics runs in
the graph instead.

A call is looked at only when one of its array operands is a tensor by the
shared analysis (proven, or likely: then the fix is unsafe), or a NumPy call
this rule rewrites that takes a tensor (so
`np.mean(np.square(y_true - y_pred))` is two findings, fixed from the inside
out). NumPy on Python values is fine under tracing and is left alone.

The rewrite edits the call in place: the callee changes, NumPy's parameters are
renamed to TensorFlow's, defaults that change nothing are dropped, and the
arguments keep their text, layout and comments.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import libcst as cst

from tfrewrite.facts.context import RuleContext
from tfrewrite.facts.import_requests import ImportRequest
from tfrewrite.facts.walk import iter_with_ancestors
from tfrewrite.findings import Applicability
from tfrewrite.rewrite.fixes import CstFix, NodeEdit, Violation, assuming
from tfrewrite.rewrite.numpy_operands import (
    Operands,
    builtin_extremum,
    extremum_operands,
    numpy_function,
    numpy_modules,
)
from tfrewrite.rewrite.numpy_ops import JOIN, MAPPINGS, UNMAPPED, Mapping
from tfrewrite.rewrite.tensor_results import follow
from tfrewrite.rewrite.traced_calls import Refusal, SampleSite, iter_module_calls
from tfrewrite.rewrite.value_uses import wrapper_replacement
from tfrewrite.rules.base import Invalid, Rule, Valid
from tfrewrite.rules.numpy_math.builtin_extrema import extremum_violation
from tfrewrite.rules.numpy_math.numpy_argument_casts import build_call, comments, parenthesized
from tfrewrite.rules.numpy_math.numpy_writer import Plan, Writer


def _rewritten_here(ctx: RuleContext, node: cst.CSTNode) -> bool:
    """A NumPy call or builtin `max`/`min` this rule rewrites in the same run:
    a result passed to it is not a blocker."""
    return numpy_function(node, ctx) is not None or builtin_extremum(node, ctx) is not None


def _spelling(ctx: RuleContext, call: cst.Call) -> str:
    return f"`{ctx.code(call.func)}(...)`"


class NumpyMathOnTensors(Rule):
    code = "TFR104"
    name = "numpy-math-on-tensors"
    summary = "NumPy math on tensors in traced code fails on symbolic tensors"
    fix_applicability = Applicability.SAFE
    explanation = """
    ## What it does
    Finds NumPy calls (`np.mean`, `np.square`, `np.clip`, ...) on tensors in
    code that runs traced (a `@tf.function`, a loss given to `compile`, a
    Keras `Loss.call`, ...) and rewrites them into the TensorFlow op with the
    same semantics, in any import spelling: `np.mean`, `numpy.mean`,
    `from numpy import mean`.

    A parameter of a traced function with no evidence either way (no
    default, no annotation, a name and uses that do not say Python value) is
    a tensor whenever the function is called with one, as AutoGraph assumes:
    NumPy on it is reported, and its fix is unsafe and says what it assumes
    ("it assumes `x` is a tensor argument"); `tfrewrite verify` proves it.

    ## Why is this bad?
    NumPy converts its arguments to arrays on the host. Run eagerly, a tensor
    holds a value and converts; traced, it is symbolic and the call raises
    `NotImplementedError: Cannot convert a symbolic tf.Tensor to a numpy
    array`. So `np.mean(np.square(y_true - y_pred))` works in a quick eager
    test and fails as soon as Keras compiles the loss.

    ## The mapping
    | NumPy | TensorFlow |
    |---|---|
    | `mean`, `sum`, `prod` | `tf.reduce_mean`, `tf.reduce_sum`, `tf.reduce_prod` |
    | `max`/`amax`, `min`/`amin` | `tf.reduce_max`, `tf.reduce_min` |
    | `std`, `var` (divide by N: `ddof=0`) | `tf.math.reduce_std`, `tf.math.reduce_variance` |
    | `square`, `sqrt`, `abs`/`absolute` | `tf.square`, `tf.sqrt`, `tf.abs` |
    | `exp`, `tanh`, `sign`, `floor` | `tf.exp`, `tf.tanh`, `tf.sign`, `tf.floor` |
    | `log`, `log1p`, `ceil` | `tf.math.log`, `tf.math.log1p`, `tf.math.ceil` |
    | `round`/`around` | `tf.round` (both round half to even: `2.5` → `2.0`) |
    | `maximum`, `minimum` | `tf.maximum`, `tf.minimum` (both propagate NaN) |
    | `clip(x, lo, hi)` | `tf.clip_by_value(x, lo, hi)` |
    | `clip(x, lo, None)`, `clip(x, None, hi)` | `tf.maximum(x, lo)`, `tf.minimum(x, hi)` |
    | `where(c, x, y)` | `tf.where(c, x, y)` |
    | `concatenate([a, b], axis)` | `tf.concat([a, b], axis)` (`axis=0` written out) |
    | `stack([a, b], axis)` | `tf.stack([a, b], axis)` |
    | `power(x, y)`, `power(2.0, x)` | `tf.pow(x, y)`, `2.0 ** x` |
    | `log2(x)` (unsafe) | `tf.math.log(x) / math.log(2.0)` |
    | `linalg.norm(x)`, `linalg.norm(x, axis=a)` | `tf.norm(x)`, `tf.norm(x, axis=a)` |
    | `argmax(x)`, `argmax(x, a)` (`argmin`) | `tf.argmax(tf.reshape(x, [-1]))`, `tf.argmax(x, a)` |
    | builtin `max(a, b)`, `min(a, b, c)` | `tf.maximum(a, b)`, `tf.minimum(tf.minimum(a, b), c)` |
    | builtin `max(x)` of a 1-D tensor | `tf.reduce_max(x)` |

    Builtin `max`/`min` compare their operands with `>`, which needs a
    Python bool from a tensor: traced, they raise
    `OperatorNotAllowedInGraphError` (AutoGraph does not convert them). The
    element-wise op gives the same value for the scalars they could compare
    (and the gradient flows to the larger operand, as through the operand
    `max` returned). Python's `max` returns a Python number where that
    operand wins; the rewrite returns a tensor of the same value. On NaN the
    builtin's answer depends on the operands' order, `tf.maximum` propagates
    NaN.

    TensorFlow has no `log2`: `log(x) / log(2)` is within a unit in the last
    place but misses some exact powers of two (float32 `2**15` gives
    14.999999, so `floor` of it is off by one): that fix is unsafe.
    `np.argmax` without an axis returns the index into the flattened array;
    `tf.argmax` reduces axis 0, hence the reshape. Both return int64 and the
    first index of a tie; on NaN, NumPy returns the first NaN's index.
    `np.linalg.norm` with `ord` or an axis pair picks a norm by the rank,
    which tfrewrite does not know: refused.

    A Python number before the tensor moves after it: `np.maximum(0, x)`
    becomes `tf.maximum(x, 0)` and `np.where(c, 0, x)` becomes
    `tf.where(tf.logical_not(c), x, 0)`. Traced, TensorFlow gives a leading
    Python number its default dtype (int32, float32) and then rejects a
    tensor of another dtype; NumPy 2 gives the number the tensor's dtype.
    (On a tie both return the second operand, so an element `-0.0` gives
    `-0.0` in `np.maximum(0.0, x)` and `0.0` in `tf.maximum(x, 0.0)`: equal
    values, they differ only in the sign of zero.)

    A local name bound only to such calls (`err = np.square(y_true - y_pred)`)
    counts as a tensor too, so `np.mean(err)` is reported in the same run.

    `axis` and `keepdims` carry over (`axis=None` reduces over everything in
    both); parameters that change nothing are dropped (`dtype=None`,
    `out=None`, `ddof=0`, `decimals=0`). Nested calls are separate findings,
    fixed from the inside out.

    ## Dtypes
    NumPy 2 keeps a float32 array float32 when combined with a Python number,
    and TensorFlow converts the number to the tensor's dtype: for
    floating-point tensors (a loss's `y_true`/`y_pred`, results of float ops)
    the rewrite keeps the dtype, and the fix is safe. Where NumPy's dtype
    depends on the input's:
    - `mean`/`std`/`var` of integers or booleans are float64 in NumPy: the
      rewrite casts, `tf.reduce_mean(tf.cast(x, tf.float64))`;
    - `sum`/`prod` of booleans count in int64 in NumPy: the rewrite casts,
      `tf.reduce_sum(tf.cast(mask, tf.int64))`; of integers too, unsafe
      (NumPy accumulates unsigned integers in uint64);
    - a NumPy float64/int64 scalar that meets a tensor in arithmetic or a
      comparison takes the tensor's dtype (`loss + np.mean(mask)` is float32),
      where a float64 tensor makes TensorFlow raise: the cast goes to the
      dtype the result meets, `tf.cast(mask, loss.dtype)`; where that tensor
      is not a plain name, or the result is bound to a name, the fix is
      unsafe;
    - `sqrt`/`exp`/`log`/`log1p`/`tanh` of integers are floats in NumPy,
      errors in TensorFlow: refused; `floor`/`ceil`/`round` of integers are
      no-ops in NumPy: refused (drop the call);
    - an integer tensor with a Python float (`np.maximum(i, 0.5)`) is float64
      in NumPy: refused; so are tensors of different kinds in one call
      (`np.concatenate([ints, floats])`: NumPy promotes, TensorFlow raises).
    When the tensor's dtype is not known, or an operand is neither a tensor
    nor a Python number (it might be a float64 NumPy array, which promotes),
    the fix is offered as unsafe, with the reason.

    The result is a tensor where NumPy gave an array: the same values,
    shape and dtype, and a value TensorFlow ops and gradients flow through.
    Reductions of float16 may differ in the last bits: NumPy accumulates
    them in float32.

    ## When it is not rewritten
    The call stays, with a finding saying why: `dtype=`, `out=`, `where=`,
    `initial=`, `ddof` other than 0, `decimals` other than 0, `*args`,
    `np.clip` with `a_min` but no `a_max` or the reverse (NumPy raises),
    `np.clip` with literal bounds in the wrong order (NumPy returns the upper
    bound, `tf.clip_by_value` the lower; with non-literal bounds the fix is
    unsafe), one-argument `np.where`, `np.where` choosing between two Python
    numbers, `concatenate`/`stack` of something other than a list or tuple
    display or with `axis=None`, a result used through NumPy array API a
    tensor lacks (`.astype(...)`, `.reshape(...)`), a multi-line call whose
    dropped argument carries a comment, and `np.matmul`/`np.dot`, whose
    meaning depends on the operands' ranks, which tfrewrite does not know.
    A list or tuple holding a tensor given as one array
    (`np.mean([loss_a, loss_b])`) is reported without a fix: NumPy stacks it
    on the host, in a dtype that depends on every element (a Python float
    makes it float64); stack it with `tf.stack` first.
    NumPy calls on values not known to be tensors are left alone: NumPy on
    Python values is fine under tracing.

    ## Fix safety
    The fix is safe when it rests on proof: the operands are proven tensors
    of a known dtype (or Python numbers), so the TensorFlow op gives NumPy's
    values, shape and dtype, and every use of the result accepts a tensor.
    It is unsafe (applied with `--unsafe-fixes`; the fix message says why)
    when it rests on likely evidence or on a dtype that is not known:
    - an operand is a *likely* tensor, a parameter of a traced function with
      no evidence either way ("it assumes `x` is a tensor argument");
    - the tensor's dtype is not known where NumPy's result dtype depends on
      it (integers averaged in float64, accumulated in int64, promoted by a
      Python float), or an operand is neither a tensor nor a Python number;
    - `sum`/`prod` of integers, a NumPy scalar result that meets a tensor
      which is not a plain name or that is bound to a name, `log2`,
      `np.clip` with bounds that are not number literals, `np.where` on a
      condition not known to be boolean, an integer `power` whose exponent
      may be negative;
    - the result leaves the function (passed to a function of the project,
      returned to a caller, stored on an attribute) or decides Python control
      flow (a tensor there needs AutoGraph).

    What "When it is not rewritten" lists, and the dtype cases refused above,
    are reported with no fix.
    """
    examples = (
        Invalid(
            """
            import numpy as np
            from tensorflow import keras

            def mse(y_true, y_pred):
                return np.mean(np.square(y_true - y_pred))

            model = keras.Sequential([keras.layers.Dense(1)])
            model.compile(loss=mse)
            """,
            """
            from tensorflow import keras
            import tensorflow as tf

            def mse(y_true, y_pred):
                return tf.reduce_mean(tf.square(y_true - y_pred))

            model = keras.Sequential([keras.layers.Dense(1)])
            model.compile(loss=mse)
            """,
            findings=2,
            note="nested calls are fixed from the inside out; TensorFlow imported once",
        ),
        Invalid(
            """
            import numpy as np
            import tensorflow as tf

            def bce(y_true, y_pred):
                p = np.clip(y_pred, 1e-7, 1.0 - 1e-7)
                loss = -(y_true * np.log(p) + (1.0 - y_true) * np.log(1.0 - p))
                return np.mean(loss, axis=-1)

            tf.keras.Sequential().compile(loss=bce)
            """,
            """
            import tensorflow as tf

            def bce(y_true, y_pred):
                p = tf.clip_by_value(y_pred, 1e-7, 1.0 - 1e-7)
                loss = -(y_true * tf.math.log(p) + (1.0 - y_true) * tf.math.log(1.0 - p))
                return tf.reduce_mean(loss, axis=-1)

            tf.keras.Sequential().compile(loss=bce)
            """,
            findings=4,
            note="`p` is bound only to a call this rule rewrites: `np.log(p)` is reported too",
        ),
        Invalid(
            """
            from numpy import std
            import tensorflow as tf

            @tf.function
            def spread(x):
                return std(tf.cast(x, tf.float32), axis=0, ddof=1)
            """,
            None,
            note="`ddof=1` has no TensorFlow counterpart",
        ),
        Valid(
            """
            import numpy as np
            import tensorflow as tf

            @tf.function
            def scaled(x, sizes: list[int]):
                return x * np.sqrt(np.mean(sizes))
            """,
            note="`sizes` is annotated as a Python list: NumPy on Python values is fine",
        ),
        Valid(
            """
            import numpy as np

            def mse(y_true, y_pred):
                return np.mean(np.square(y_true - y_pred))
            """,
            note="not traced",
        ),
    )

    def check(self, ctx: RuleContext) -> Iterator[Violation]:
        tf, imports = ctx.tensorflow()
        operands: dict[int, Operands] = {}
        sites = [site for module in numpy_modules() for site in iter_module_calls(ctx, module)]
        for site in sites:
            name = numpy_function(site.call, ctx)
            if name is None:
                continue
            facts = operands.setdefault(id(site.facts), Operands(ctx, site.facts))
            data = facts.data_operands(MAPPINGS[name], site.call)
            if not any(facts.kind(node).tensor for node in data):
                listed = _listed_tensor(facts, MAPPINGS[name], data)
                if listed is not None:
                    yield Violation(
                        site.call,
                        f"{_spelling(ctx, site.call)} on a list holding the tensor "
                        f"`{ctx.code(listed)}` in traced code: NumPy cannot convert a symbolic "
                        "tensor, so this raises when traced; not rewritten: NumPy stacks the "
                        "list into one array, promoting mixed elements (a Python float makes "
                        f"it float64); stack it with `{tf}.stack([...])` (or `{tf}.concat`) "
                        "and pass that",
                    )
                likely = site.facts.likely
                if likely is site.facts:
                    continue  # NumPy on Python values: fine under tracing
                likely_operands = operands.setdefault(id(likely), Operands(ctx, likely))
                if not any(likely_operands.kind(node).tensor for node in data):
                    continue
                # Only a parameter with no evidence either way makes it a
                # tensor: report it, and let the fix rest on that assumption.
                likely_site = dataclasses.replace(site, facts=likely)
                violation = self._violation(
                    ctx, likely_site, name, Writer(ctx, likely_operands, tf), imports
                )
                yield assuming(violation, site.facts.assumption_note(site.call))
                continue
            yield self._violation(ctx, site, name, Writer(ctx, facts, tf), imports)
        yield from self._builtin_extrema(ctx, tf, imports, operands)

    def _builtin_extrema(
        self,
        ctx: RuleContext,
        tf: str,
        imports: tuple[ImportRequest, ...],
        operands: dict[int, Operands],
    ) -> Iterator[Violation]:
        """Builtin `max(a, b)` / `min(a, b)` on tensors: Python compares the
        operands with `>`, which needs a Python bool from a tensor."""
        for function in ctx.traced_functions():
            for node, ancestors in iter_with_ancestors(function.node.body, (function.node,)):
                if builtin_extremum(node, ctx) is None:
                    continue
                assert isinstance(node, cst.Call)
                scope = ctx.innermost_scope(function, ancestors)
                facts = ctx.tensors(scope)
                kinds = operands.setdefault(id(facts), Operands(ctx, facts))
                values = extremum_operands(node)
                if any(kinds.kind(value).tensor for value in values):
                    yield extremum_violation(ctx, node, kinds, tf, imports)
                    continue
                if facts.likely is facts:
                    continue
                likely = operands.setdefault(id(facts.likely), Operands(ctx, facts.likely))
                if any(likely.kind(value).tensor for value in values):
                    violation = extremum_violation(ctx, node, likely, tf, imports)
                    yield assuming(violation, facts.assumption_note(node))

    def _violation(
        self,
        ctx: RuleContext,
        site: SampleSite,
        name: str,
        writer: Writer,
        imports: tuple[ImportRequest, ...],
    ) -> Violation:
        call = site.call
        message = (
            f"{_spelling(ctx, call)} on a tensor in traced code: NumPy cannot convert a "
            "symbolic tensor, so this raises when traced"
        )
        tf = writer.tf
        call_ancestors = site.ancestors
        if site.astype is not None:
            call_ancestors = (*site.ancestors, site.astype, site.astype.func)
        try:
            followed = follow(
                ctx,
                site.function,
                site.facts,
                call,
                call_ancestors,
                "the result",
                tf,
                lambda node: _rewritten_here(ctx, node),
            )
            writer.meets, writer.unknown_meets = followed.meets, followed.unknown_meets
            plan = writer.plan(name, call)
            replacement: cst.BaseExpression = build_call(
                call, plan.func, plan.out, _tf_positional(name, plan)
            )
            if plan.expression is not None:
                replacement = parenthesized(plan.expression, call, call_ancestors)
            if comments(call) != comments(replacement):
                raise Refusal("the call's comments would be lost; rewrite it by hand")
            target: cst.CSTNode = call
            if followed.folded is not None:
                # `np.mean(x).astype(np.float32)` -> `tf.cast(tf.reduce_mean(x), tf.float32)`
                target = followed.folded.call
                replacement = wrapper_replacement(followed.folded, ctx, tf, ctx.code(replacement))
        except Refusal as refusal:
            return Violation(call, f"{message}; not rewritten: {refusal}")
        unsafe = [*plan.unsafe, *followed.unsafe]
        edits = (NodeEdit(target, replacement), *followed.wrapper_edits)
        use = plan.func
        if plan.expression is not None:
            use = plan.expression if len(plan.expression) <= 60 else f"{plan.func}(...)"
        if unsafe:
            fix = CstFix(
                f"Use `{use}` (unsafe: {'; '.join(unsafe)})",
                edits,
                (*imports, *plan.imports),
                Applicability.UNSAFE,
            )
        else:
            fix = CstFix(f"Use `{use}`", edits, (*imports, *plan.imports))
        return Violation(call, message, fix)


def _listed_tensor(
    operands: Operands, mapping: Mapping, data: list[cst.BaseExpression]
) -> cst.BaseExpression | None:
    """A tensor inside a list or tuple display passed as an array operand
    (`np.mean([loss_a, loss_b])`), for calls that take one array there."""
    if mapping.category in (JOIN, UNMAPPED):
        return None
    for node in data:
        if isinstance(node, (cst.List, cst.Tuple)):
            for element in node.elements:
                if (
                    not isinstance(element, cst.StarredElement)
                    and operands.kind(element.value).tensor
                ):
                    return element.value
    return None


def _tf_positional(name: str, plan: Plan) -> tuple[str, ...]:
    if plan.func.endswith((".maximum", ".minimum")) and name == "clip":
        return ("x", "y")
    return MAPPINGS[name].tf_positional


RULES = (NumpyMathOnTensors,)
