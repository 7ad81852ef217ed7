"""TFR101: a Python `if` (or `A if c else B`) on a tensor, in traced code.

The rule converts only conditions the shared tensor analysis proves to be
tensors; everything else (static shapes, `is None`, `isinstance`, dtype
checks, Python flags such as `training`, `self.*`) stays a Python `if` and
produces no finding. A tensor `if` that cannot be rewritten safely is still a
finding, with the reason and no fix.

Nested conditionals are rewritten inside out: an `if` whose branches still
hold a tensor conditional waits for the next fix round, when the inner one
has become a `tf.cond`. The rewriting itself lives beside it in `tfrewrite.rules.tensor_conditions`
(`cond_returns`, `cond_assign`, and the data flow, conditions, dtypes and
code generation they share).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

import libcst as cst

from tfrewrite.facts.bindings import all_params
from tfrewrite.facts.block_exits import block_statements
from tfrewrite.facts.context import FunctionScope, RuleContext
from tfrewrite.facts.import_requests import ImportRequest
from tfrewrite.facts.walk import iter_nodes, iter_with_ancestors
from tfrewrite.findings import Applicability
from tfrewrite.rewrite.fixes import CstFix, NodeEdit, Violation
from tfrewrite.rules.base import Invalid, Rule, Valid
from tfrewrite.rules.tensor_conditions.cond_assign import met_tensor, rewrite_assigning
from tfrewrite.rules.tensor_conditions.cond_callers import python_caller_refusal, some_path_refusal
from tfrewrite.rules.tensor_conditions.cond_codegen import (
    Branch,
    Refusal,
    UnmergeableBranches,
    cond_call,
    lambda_body,
    walrus_target,
)
from tfrewrite.rules.tensor_conditions.cond_dtypes import match_dtypes, value_kind
from tfrewrite.rules.tensor_conditions.cond_effects import branch_problem
from tfrewrite.rules.tensor_conditions.cond_flow import (
    assigned_names,
    contains_return,
    placement,
    reads,
)
from tfrewrite.rules.tensor_conditions.cond_returns import rewrite_returning
from tfrewrite.rules.tensor_conditions.cond_shapes import (
    both_branches_problem,
    lazy_operand_problem,
)
from tfrewrite.rules.tensor_conditions.cond_site import CondSite

FIX_MESSAGE = "Rewrite as `tf.cond`"
_MESSAGE = "Python `if` on a tensor needs AutoGraph; rewrite it as `tf.cond`"
_IFEXP_MESSAGE = "`A if c else B` on a tensor needs AutoGraph; rewrite it as `tf.cond`"


@dataclass(frozen=True)
class _Outcome:
    """What the rule concludes about one conditional."""

    fix: CstFix | None = None
    reason: str | None = None  # refused: why
    unsafe: tuple[str, ...] = ()  # fixed, but the fix rests on these assumptions
    waiting: bool = False  # convertible once the conditionals inside it are
    inner: bool = False  # refused because a conditional inside it is
    rank: str | None = None  # a rank test: the message of its static rewrite
    # The likely tensors the finding rests on ("`x` is a tensor argument").
    assumed: str = ""
    # Refused because the branches give values AutoGraph cannot merge either.
    unmergeable: bool = False


def _fix(site: CondSite, edits: Sequence[NodeEdit]) -> CstFix:
    """The fix, unsafe when the rewrite rests on something not proven."""
    applicability = Applicability.UNSAFE if site.unsafe else Applicability.SAFE
    return CstFix(FIX_MESSAGE, tuple(edits), site.imports, applicability)


def _ifexp(
    site: CondSite, node: cst.IfExp, ancestors: Sequence[cst.CSTNode], nested: bool
) -> _Outcome:
    """`A if c else B` -> `tf.cond(c, lambda: A, lambda: B)`."""
    condition = site.translator.translate(node.test, node)
    if condition.reason:
        return _Outcome(reason=condition.reason)
    if nested:
        return _Outcome(waiting=True)
    for side, value in (("true", node.body), ("false", node.orelse)):
        walrus = walrus_target(value)
        if walrus is not None:
            return _Outcome(
                reason=(
                    f"the {side} branch binds '{walrus}' with `:=`, which in a `tf.cond` "
                    "branch would bind a local of the branch instead"
                )
            )
        statements = [cst.SimpleStatementLine(body=[cst.Expr(value=value)])]
        problem = branch_problem(
            statements, site.ctx.names, side, allow_return=False, expression=True
        ) or site.branch_scope_problem(side, statements)
        if problem:
            return _Outcome(reason=problem)
    site.unsafe = []
    body, orelse = node.body, node.orelse
    kinds = (value_kind(body, site.facts), value_kind(orelse, site.facts))
    try:
        target, meets = _assigned_to(site, node, ancestors)
        matched = match_dtypes(
            f"'{target}'" if target else "the value",
            (body, orelse),
            kinds,
            site.facts,
            set(),
            site.tf,
            meets=meets,
        )
    except (ValueError, Refusal) as error:
        return _Outcome(reason=str(error), unmergeable=isinstance(error, UnmergeableBranches))
    traced_both = _shape_problem(site, node.test, [node.body], [node.orelse])
    if traced_both:
        return _Outcome(reason=traced_both)
    site.note_unsafe(matched.unsafe)
    body = matched.replace.get(id(body), body)
    orelse = matched.replace.get(id(orelse), orelse)
    true, false = (Branch(f"lambda: {lambda_body(site.ctx, v)}") for v in (body, orelse))
    if target is not None:  # `name = A if c else B`: laid out like a statement
        indent = site.indent_of(placement(site.scope.node, ancestors[:-2], ancestors[-2]))
        code = cond_call(site.tf, condition.code, true, false, f"{target} = ", indent)
        code = code.removeprefix(f"{target} = ")
    else:
        code = f"{site.tf}.cond({condition.code}, {true.callable_code}, {false.callable_code})"
    replacement = cst.parse_expression(code)
    return _Outcome(_fix(site, [NodeEdit(node, replacement)]), unsafe=tuple(site.unsafe))


_RANK_FUNCTIONS = frozenset({"tensorflow.rank", "tensorflow.math.rank"})


def _static_rank_test(site: CondSite, test: cst.BaseExpression) -> _Outcome | None:
    """`if tf.rank(x) > 1:` compares a rank with a number: its branches are
    typically valid only for that rank (`tf.squeeze`, `tf.argmax(x, -1)`),
    and a `tf.cond` would build both. The static `x.shape.rank` keeps it a
    Python `if`, as AutoGraph cannot. Unsafe: a rank unknown when traced
    (`None`) would fail the comparison."""
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1):
        return None
    comparison = test.comparisons[0]
    if not isinstance(
        comparison.operator,
        (
            cst.Equal,
            cst.NotEqual,
            cst.LessThan,
            cst.LessThanEqual,
            cst.GreaterThan,
            cst.GreaterThanEqual,
        ),
    ):
        return None
    sides = [test.left, comparison.comparator]
    for index, side in enumerate(sides):
        other = sides[1 - index]
        if not (
            isinstance(side, cst.Call)
            and site.ctx.names.qualified_name(side.func) in _RANK_FUNCTIONS
            and len(side.args) == 1
            and side.args[0].keyword is None
            and isinstance(other, cst.Integer)
        ):
            continue
        operand = side.args[0].value
        if not isinstance(operand, (cst.Name, cst.Attribute)):
            return None
        static = cst.parse_expression(f"{site.ctx.code(operand).strip()}.shape.rank")
        fix = CstFix(
            "Test the static rank",
            (NodeEdit(side, static),),
            (),
            Applicability.UNSAFE,
        )
        return _Outcome(
            fix=fix,
            rank=(
                f"`{site.ctx.code(test).strip()}` tests a rank: a `tf.cond` would build both "
                f"branches; test the static `{site.ctx.code(static)}` instead (unsafe fix: "
                "assumes the rank is known when traced)"
            ),
        )
    return None


def _shape_problem(
    site: CondSite,
    test: cst.BaseExpression,
    true: Sequence[cst.CSTNode],
    false: Sequence[cst.CSTNode],
) -> str | None:
    """Why a `tf.cond` would fail to trace where the Python `if` works: a
    branch (or the lazy side of `and`/`or`) reads the rank, dimension or
    shape the condition tests, and `tf.cond` traces both (see `cond_shapes`)."""
    code = site.ctx.code
    return lazy_operand_problem(site.shape_guards, test, code) or both_branches_problem(
        site.shape_guards,
        test,
        [("the true branch's {use}", true), ("the false branch's {use}", false)],
        code,
    )


def _assigned_to(
    site: CondSite, node: cst.IfExp, ancestors: Sequence[cst.CSTNode]
) -> tuple[str | None, str | None]:
    """For `name = A if c else B`: the name, and the floating-point tensor
    every later use of it meets (see `met_tensor`); raises `Refusal` when a
    later use needs a Python value."""
    if len(ancestors) < 2:
        return None, None
    assign, line = ancestors[-1], ancestors[-2]
    if not (
        isinstance(assign, cst.Assign)
        and assign.value is node
        and len(assign.targets) == 1
        and isinstance(assign.targets[0].target, cst.Name)
        and isinstance(line, cst.SimpleStatementLine)
    ):
        return None, None
    name = assign.targets[0].target.value
    place = placement(site.scope.node, ancestors[:-2], line)
    return name, met_tensor(site, name, place, set())


def _if_statement(
    site: CondSite, node: cst.If, ancestors: Sequence[cst.CSTNode], nested: bool
) -> _Outcome:
    """An `if` statement: one that returns, or one that assigns."""
    static = _static_rank_test(site, node.test)
    if static is not None:
        return static
    condition = site.translator.translate(node.test, node)
    if condition.reason:
        # A branch that cannot leave a `tf.cond` (`break`, `print`...) is the
        # true blocker: fixing the condition alone would not make it rewritable.
        for side, suite in (("true", node.body), ("false", node.orelse)):
            problem = branch_problem(
                block_statements(suite), site.ctx.names, side, allow_return=True
            )
            if problem:
                return _Outcome(reason=problem)
        return _Outcome(reason=condition.reason)
    if nested:
        return _Outcome(waiting=True)
    place = placement(site.scope.node, ancestors, node)
    site.current = node
    site.unsafe = []
    try:
        declared = site.declarations & assigned_names(node)
        if declared:
            raise Refusal(
                f"'{sorted(declared)[0]}' is declared `global`/`nonlocal` and assigned in a "
                "branch, which a branch function cannot do"
            )
        if contains_return(node):
            edits = rewrite_returning(site, node, place, condition.code)
        else:
            edits = rewrite_assigning(site, node, place, condition.code)
    except Refusal as refusal:
        return _Outcome(reason=str(refusal), unmergeable=isinstance(refusal, UnmergeableBranches))
    orelse: list[cst.CSTNode] = list(block_statements(node.orelse))
    if contains_return(node):  # what follows may become the other branch
        orelse += [s for body, index in place.blocks for s in body[index + 1 :]]
    traced_both = _shape_problem(site, node.test, block_statements(node.body), orelse)
    if traced_both:
        return _Outcome(reason=traced_both)
    return _Outcome(_fix(site, edits), unsafe=tuple(site.unsafe))


class TensorIf(Rule):
    code = "TFR101"
    name = "tensor-if"
    summary = "Python `if` on a tensor in traced code: rewrite it as `tf.cond`"
    fix_applicability = Applicability.SAFE
    autograph_converts = True
    explanation = """
    ## What it does
    Finds Python `if` statements and `A if c else B` expressions whose condition
    is a tensor, inside code that runs under `tf.function` (a decorated function,
    a loss or metric given to `compile`, `Loss.call`, `Layer.call`, a train step,
    and what they call), and rewrites them as explicit `tf.cond`. A lambda
    handed to something that traces it (`compile(loss=lambda ...)`,
    `Dataset.map`/`filter`, `keras.layers.Lambda`, `tf.map_fn`,
    `strategy.run`) is traced code too; a tensor conditional expression in
    one is reported without a fix (Keras 3 runs a compiled loss without
    AutoGraph, so it fails in `fit`). A `while` loop whose condition is a
    tensor (`while tf.reduce_max(delta) > tol:`, `while not done(t):`) is
    the same hazard, reported without a fix: its `tf.while_loop` needs the
    loop variables, each keeping its dtype and shape from one iteration to
    the next, which a Python loop (`steps = 0`, then `steps += 1`) does not
    promise.

    ## Why is this bad?
    Python cannot branch on a symbolic tensor. The code works only because
    AutoGraph rewrites the `if` at trace time into generated code nobody reads;
    under `tf.function(autograph=False)`, where AutoGraph gives up ("could not
    transform"), or in code it does not convert, the same function raises
    `OperatorNotAllowedInGraphError: Using a symbolic tf.Tensor as a Python bool
    is not allowed`. The rewrite makes the branch explicit, so the function no
    longer needs AutoGraph.

    ## How it rewrites
    - `if c: return A` / `else: return B` becomes `return tf.cond(c, lambda: A, lambda: B)`.
    - An early return (`if c: return A` followed by more code) moves the rest of
      the function into the other branch.
    - Variables a branch assigns and that are used after the `if` become the
      outputs of the `tf.cond` (`w, b = tf.cond(...)`); a branch that leaves one
      alone passes its old value through; variables used only inside a branch
      stay local to it. Augmented and tuple assignments work.
    - `elif` chains become nested `tf.cond`s; nested `if`s are rewritten inside out.
      A function is never left half rewritten: when a tensor `if` around
      others cannot be rewritten (a `print` in its branch, or a dtype its
      rewritten branches no longer match), the function needs AutoGraph all
      the same, and its other tensor conditionals stay as written too,
      refused with that reason.
    - `and` / `or` / `not` become `tf.logical_and` / `tf.logical_or` /
      `tf.logical_not`; `1.0 < m <= 2.0` becomes `tf.logical_and(1.0 < m, m <= 2.0)`;
      a scalar that is not boolean is compared explicitly (`n != 0`, or
      `tf.cast(x, tf.bool)` when its dtype is unknown). When the right operand of
      `and`/`or` could fail or have an effect where Python would skip it (an
      index, an integer `//` or `%`, a call that is not pure TensorFlow math),
      it stays lazy: `n > 0 and t // n > 1` becomes
      `tf.cond(n > 0, lambda: t // n > 1, lambda: False)`.
    - One-expression branches become lambdas; blocks become small functions
      defined right before the `tf.cond`, keeping their statements, TensorFlow
      side effects (`tf.print`, variable updates) and comments. A name a block
      reads before assigning becomes a parameter of its function.
    - `tf.cond` needs one dtype for both branches and turns a Python number
      into an int32 or float32 tensor, where Python lets the number take the
      dtype of what it meets. So a Python number facing a floating-point tensor
      takes that tensor's dtype (`tf.constant(0.0, dtype=err.dtype)`, or
      `tf.cast(loss, mse.dtype)` for a number passed through), and numbers in
      both branches take the dtype of the tensor every later use meets
      (`factor` in `err * factor`). Where that dtype is not known the fix is
      unsafe, and says so: float16 or float64 values would not match.
    - Rank and shape tests (`x.shape.rank`, `len(x.shape)`, static dimensions)
      stay Python `if`s: a `tf.cond` builds both branches, and a branch valid
      only for some ranks (`tf.squeeze(x, -1)`) would fail to build. A test of
      how many rows `tf.where(mask)` or `tf.boolean_mask` selected is
      rewritten all the same: those rows are never known while tracing, so a
      branch that reads them cannot fail to build.

    - A file that uses `keras.ops` and does not import TensorFlow gets
      `ops.cond`, `ops.logical_and`, `ops.cast`: a Keras 3 loss keeps running
      on every backend.
    - `if tf.rank(x) == 2:` becomes `if x.shape.rank == 2:` (unsafe: it
      assumes the rank is known when traced), since a `tf.cond` would build a
      branch valid only for that rank.

    ## When it is not reported
    Static shapes (`x.shape[-1] == 1`, `len(x.shape) == 2`), `is None`,
    `isinstance`, dtype checks, `tf.executing_eagerly()`, Python flags such as
    `training` and attributes of `self` stay Python `if`s and are not reported.
    Nor is a condition on a parameter that every call site in the project
    passes a Python value (`self.sample(batch, priority_exp=0.6)` for `if
    priority_exp == 0:`): traced with a Python number, the condition is a
    Python bool and tracing picks the branch, as it should; a `tf.cond` there
    would raise `TypeError: pred must not be a Python bool`. Nor is the truth
    test of a parameter that defaults to `None` (`labels if labels else
    extra` in a `Dataset.map` function): it asks whether the value was
    given, unless the parameter is known to be a scalar tensor (the truth of
    a larger tensor raises eagerly too, so code that runs does not test one
    so). A `tf.Variable` tested by `if` (`if self.training:` on
    `tf.Variable(False)`) is a tensor condition: traced, it reads the value.

    ## Refusals (reported without a fix, with the reason)
    A `while` on a tensor is reported without a fix: a hand-written
    `tf.while_loop` needs loop variables that keep their dtype and shape on
    every iteration, which the rule cannot prove. An `if` is refused for:
    - A variable defined in one branch only, not before the `if`, and used after
      it ("'w' is defined only in the true branch").
    - One branch returns and the other neither returns nor falls through to a
      `return`; a bare `return`; a `return` inside a loop or `try`, or inside a
      `with` block that more code follows; an early return in a generator.
    - A condition not known to be a scalar tensor, or one that mixes a Python
      value and a tensor with `and`/`or`; a chained comparison whose middle
      operand contains a call (it would run twice) or whose later operands could
      fail (they would run even when an earlier link is false); a `:=` on the
      lazy side of `and`/`or`; `t in (a, b)` on a tensor.
    - A branch that assigns a name and then uses a nested function, defined
      outside the branch, that reads it (in a branch function the nested
      function would still see the old value), or that uses a nested function
      rebinding names with `nonlocal`/`global`; a branch calling `super()`
      without arguments (write `super(ClassName, self)`); a `:=` in a branch of
      `A if c else B`.
    - A branch with `break`, `continue`, `yield`, `await`, `global` or
      `nonlocal` (or assigning a name the function declares so), or with Python
      side effects tracing would run for both branches: `print`, list appends
      and other container updates, attribute or item assignment, `del`,
      `raise`/`assert`, calls made for their effect that are not TensorFlow.
    - Branch outputs that can have different dtypes: a Python number facing a
      tensor that is not known to be floating-point, `None`, a string, a
      Python container, a boolean tensor facing a floating-point one; a
      function, class or module defined in a branch and used after it.
    - Both branches empty (delete the `if` instead).
    - A branch that reads the structure the condition tests: `tf.cond`
      traces both branches, so under `tf.shape(y_pred)[0] > 1` the true
      branch's `y_pred[1]` fails to trace for a batch of one ("`tf.cond`
      traces both branches: the true branch's `y_pred[1]` needs the batch
      size (dimension 0) of `y_pred` the condition tests"). Reading the
      structure is an index, an axis, a reshape, `tf.unstack`, any call but
      element-wise math or a reduction over every axis, also through a name
      computed element-wise from the value; the test may go through names
      (`n = tf.shape(y_pred)[0]`). The same holds for the lazy
      right side of `and`/`or`. A batch size is often unknown while tracing
      (Keras traces `fit` with `None`), so `y_pred.shape[0] > 1` is no
      equivalent and the rule does not write it; a rank test becomes the
      static `x.shape.rank` instead (below).
    - A condition on a parameter one call site passes a Python value and
      another a tensor: a `tf.cond` would fail for the first caller, the
      `if` needs AutoGraph for the second; the message names the Python
      caller's line (call sites in the same file).
    - A condition on a name that is a tensor on some paths to the `if` and
      a Python value on others (`n = tf.shape(x)[1]` in one branch, `n =
      x.shape[1]` in the other): the traces taking the first path need
      AutoGraph, and a `tf.cond` would fail in the others ("`n` is a tensor
      on some paths to it and a Python value on others"). A binding after
      a loop does not count for an `if` inside it.
    - A result used where Python needs a number (`range(rounds)`, `int(n)`):
      as a tensor it would need AutoGraph there.
    - More than a few statements after an early-return `if` that would have to
      be copied into both of its branches.

    ## Fix safety
    The fix is safe when it rests on proof: the tensor analysis proves the
    condition is a scalar tensor, and the dtype of every branch output is
    known. The `tf.cond` then computes what the `if` computed, without
    AutoGraph. It is unsafe (applied with `--unsafe-fixes`; the fix message
    names the assumption) when it rests on likely evidence or an assumption:
    - the condition reads a *likely* tensor, a parameter of a traced function
      with no evidence either way (`@tf.function def f(x): if x > 0:`, called
      with a tensor): the fix assumes a tensor argument and a scalar
      condition; `tfrewrite verify` proves it;
    - a Python number faces a floating-point tensor of unknown width (it is
      written as float32), or both branches give Python numbers and no later
      use names the dtype (`tf.cond` makes them int32 or float32 tensors): the
      fix assumes the values they meet have that dtype;
    - `if tf.rank(x) == 2:` becomes `if x.shape.rank == 2:`, which assumes
      the rank is known when traced (it is for concrete inputs and Keras
      losses; an `input_signature` of unknown rank would make it `None`).
      It is never a `tf.cond`: a branch such as `tf.squeeze(x, axis=-1)`
      would fail to trace for the ranks the `if` skips it for.

    The refusals above, a tensor `while`, and a tensor conditional expression
    in a lambda that runs traced are reported with no fix.
    """
    examples = (
        Invalid(
            """
            import tensorflow as tf

            @tf.function
            def loss(y_true, y_pred):
                err = tf.reduce_mean(tf.abs(y_true - y_pred))
                if err > 1.0:
                    return tf.sqrt(err)
                return err
            """,
            """
            import tensorflow as tf

            @tf.function
            def loss(y_true, y_pred):
                err = tf.reduce_mean(tf.abs(y_true - y_pred))
                return tf.cond(err > 1.0, lambda: tf.sqrt(err), lambda: err)
            """,
            note="early return: the rest of the function is the false branch",
        ),
        Invalid(
            """
            import tensorflow as tf

            @tf.function
            def loss(y_true, y_pred):
                mse = tf.reduce_mean(tf.square(y_true - y_pred))
                if mse > 10.0:
                    # clip huge losses
                    mse = tf.sqrt(mse)
                    tf.print("clipped", mse)
                return mse
            """,
            """
            import tensorflow as tf

            @tf.function
            def loss(y_true, y_pred):
                mse = tf.reduce_mean(tf.square(y_true - y_pred))
                def _mse_if_true(mse):
                    # clip huge losses
                    mse = tf.sqrt(mse)
                    tf.print("clipped", mse)
                    return mse
                mse = tf.cond(mse > 10.0, lambda: _mse_if_true(mse), lambda: mse)
                return mse
            """,
            note="a block becomes a small function; `mse` keeps its value otherwise",
        ),
        Invalid(
            """
            import tensorflow as tf

            @tf.function
            def loss(y_true, y_pred):
                err = tf.reduce_mean(y_pred - y_true)
                if err > 0.0 and err < 1.0:
                    penalty = err * 2.0
                else:
                    penalty = 0
                return err + penalty
            """,
            """
            import tensorflow as tf

            @tf.function
            def loss(y_true, y_pred):
                err = tf.reduce_mean(y_pred - y_true)
                penalty = tf.cond(
                    tf.logical_and(err > 0.0, err < 1.0),
                    lambda: err * 2.0,
                    lambda: tf.constant(0.0, dtype=err.dtype),
                )
                return err + penalty
            """,
            note="`and` on tensors; the Python 0 takes the dtype of the other branch",
        ),
        Invalid(
            """
            import tensorflow as tf

            @tf.function
            def loss(y_true, y_pred):
                m = tf.reduce_mean(y_pred)
                scale = 2.0 if m > 0.5 else 1
                return m * scale
            """,
            """
            import tensorflow as tf

            @tf.function
            def loss(y_true, y_pred):
                m = tf.reduce_mean(y_pred)
                scale = tf.cond(
                    m > 0.5,
                    lambda: tf.constant(2.0, dtype=m.dtype),
                    lambda: tf.constant(1.0, dtype=m.dtype),
                )
                return m * scale
            """,
            note="a conditional expression; its numbers take the dtype of the tensor they meet",
        ),
        Invalid(
            """
            import tensorflow as tf

            @tf.function
            def loss(y_true, y_pred):
                m = tf.reduce_mean(y_pred)
                if m > 0.0:
                    w = m * 2.0
                return m + w
            """,
            None,
            note="refused: 'w' is defined only in the true branch",
        ),
        Invalid(
            """
            import tensorflow as tf

            @tf.function
            def loss(y_true, y_pred):
                if tf.shape(y_pred)[0] > 1:
                    v = y_pred[1]
                else:
                    v = y_pred[0]
                return tf.reduce_mean(tf.square(v - y_true[0]))
            """,
            None,
            note=(
                "refused: `tf.cond` traces both branches, and `y_pred[1]` fails to trace "
                "for a batch of one"
            ),
        ),
        Invalid(
            """
            import tensorflow as tf

            @tf.function
            def f(x):
                if x > 0:
                    return x * 2
                return -x
            """,
            """
            import tensorflow as tf

            @tf.function
            def f(x):
                return tf.cond(x > 0, lambda: x * 2, lambda: -x)
            """,
            unsafe=True,
            note="`x` is likely a tensor (`f(tf.constant(1))`): an unsafe fix that says so",
        ),
        Valid(
            """
            import tensorflow as tf

            @tf.function
            def loss(y_true, y_pred, training=False):
                if y_pred.shape[-1] == 1:
                    y_pred = tf.squeeze(y_pred, -1)
                if training:
                    y_pred = y_pred * 0.9
                if y_true is None or isinstance(y_true, list):
                    return tf.reduce_mean(y_pred)
                return tf.reduce_mean(tf.square(y_true - y_pred))
            """,
            note="Python conditions stay Python `if`s",
        ),
        Valid(
            """
            import tensorflow as tf

            class Buffer:
                @tf.function
                def sample(self, batch, priority_exp):
                    if priority_exp == 0:
                        return tf.ones_like(batch)
                    return batch ** priority_exp

                def train(self, batch):
                    return self.sample(batch, priority_exp=0.6)
            """,
            note="every caller passes a Python number: the condition is a Python bool",
        ),
        Valid(
            """
            import tensorflow as tf

            def eager_only(x):
                if tf.reduce_sum(x) > 0:
                    return x
                return -x
            """,
            note="not traced",
        ),
    )

    def check(self, ctx: RuleContext) -> Iterator[Violation]:
        tf, imports = _namespace(ctx)
        memo: dict[int, _Outcome] = {}
        sites: dict[tuple[int, bool], CondSite] = {}  # per function, proven and likely facts
        reported: set[int] = set()
        for traced in ctx.traced_functions():
            for node, ancestors in iter_with_ancestors(traced.node):
                if isinstance(node, cst.While):
                    yield from self._while(ctx, node, ancestors, sites, tf, imports)
                    continue
                if not isinstance(node, (cst.If, cst.IfExp)):
                    continue
                function = _enclosing_function(node, ancestors)
                scope = ctx.scope_of(function) if function is not None else None
                if scope is None:
                    continue

                if _presence_test(scope, node.test):
                    continue
                site = self._site(ctx, scope, False, sites, tf, imports)
                if site.translator.translate(node.test, node).tensor:
                    reported.add(id(node))
                    yield _violation(node, self._outcome(site, node, ancestors, memo))
                    continue
                likely = self._site(ctx, scope, True, sites, tf, imports)
                if (
                    likely.facts is site.facts
                    or not likely.translator.translate(node.test, node).tensor
                ):
                    refusal = python_caller_refusal(
                        ctx, scope, site.facts, tf, node.test, node
                    ) or some_path_refusal(ctx, likely.facts, tf, node.test, node)
                    if refusal is not None:
                        reported.add(id(node))
                        yield _violation(node, _Outcome(reason=refusal))
                    continue
                assumed = site.facts.assumptions(node.test)
                outcome = self._outcome(likely, node, ancestors, memo)
                reported.add(id(node))
                if outcome.unmergeable:
                    # A tensor there would fail AutoGraph's conversion too
                    # (`if visualise: return loss, preds` then `return loss,
                    # None`): the working original says it is a Python flag.
                    continue
                yield _violation(node, _assuming(outcome, assumed))
        yield from self._traced_lambdas(ctx, sites, tf, imports, reported)

    def _traced_lambdas(
        self,
        ctx: RuleContext,
        sites: dict[tuple[int, bool], CondSite],
        tf: str,
        imports: tuple[ImportRequest, ...],
        reported: set[int],
    ) -> Iterator[Violation]:
        """Conditional expressions on the parameters of a lambda that runs
        traced (`compile(loss=lambda y_true, y_pred: ...)`, `ds.map(lambda x:
        ...)`). Keras 3 runs a compiled loss without AutoGraph, so such a
        condition fails in `fit`. Reported without a fix."""
        from tfrewrite.facts.traced_lambdas import traced_lambda_scopes

        for lam, scope in traced_lambda_scopes(ctx):
            for node in iter_nodes(lam.body):
                if not isinstance(node, cst.IfExp):
                    continue
                if id(node) in reported:
                    continue  # reported with the traced function around it
                site = self._site(ctx, scope, False, sites, tf, imports)
                assumed = ""
                if not site.translator.translate(node.test, node).tensor:
                    likely = self._site(ctx, scope, True, sites, tf, imports)
                    if likely.facts is site.facts:
                        continue
                    if not likely.translator.translate(node.test, node).tensor:
                        continue
                    names = site.facts.assumptions(node.test)
                    listed = ", ".join(f"`{n}`" for n in names) or "its parameters"
                    verb = "is a tensor" if len(names) == 1 else "are tensors"
                    assumed = f" (when {listed} {verb})"
                yield Violation(
                    node,
                    f"Python conditional expression on a tensor needs AutoGraph{assumed}: this "
                    f"lambda runs traced ({scope.runs_traced.reason}); write it with "
                    "`tf.cond` (no automatic fix inside a lambda)",
                )

    def _while(
        self,
        ctx: RuleContext,
        node: cst.While,
        ancestors: Sequence[cst.CSTNode],
        sites: dict[tuple[int, bool], CondSite],
        tf: str,
        imports: tuple[ImportRequest, ...],
    ) -> Iterator[Violation]:
        """A `while` on a tensor: reported without a fix. AutoGraph turns it
        into a `tf.while_loop`; written by hand, that needs loop variables
        that keep their dtype and shape on every iteration (a Python counter
        becomes an int32 tensor, a growing list is refused), which this
        rule cannot prove."""
        function = next((a for a in reversed(ancestors) if isinstance(a, cst.FunctionDef)), None)
        scope = ctx.scope_of(function) if function is not None else None
        if scope is None:
            return
        site = self._site(ctx, scope, False, sites, tf, imports)
        assumed = ""
        if not site.translator.translate(node.test, node).tensor:
            likely = self._site(ctx, scope, True, sites, tf, imports)
            if likely.facts is site.facts:
                return
            if not likely.translator.translate(node.test, node).tensor:
                return
            names = site.facts.assumptions(node.test)
            listed = ", ".join(f"`{n}`" for n in names) or "its parameters"
            assumed = f" (when {listed} {'is a tensor' if len(names) == 1 else 'are tensors'})"
        yield Violation(
            node,
            f"Python `while` on a tensor needs AutoGraph{assumed}, and has no automatic fix: "
            "write it as `tf.while_loop`, whose loop variables must keep their dtype and shape "
            "on every iteration",
        )

    @staticmethod
    def _site(
        ctx: RuleContext,
        scope: FunctionScope,
        likely: bool,
        sites: dict[tuple[int, bool], CondSite],
        tf: str,
        imports: tuple[ImportRequest, ...],
    ) -> CondSite:
        """One site per function and strength of evidence: with `likely`,
        parameters of the traced function with no evidence either way count
        as tensors (of unknown rank: the condition is assumed scalar)."""
        key = (id(scope.node), likely)
        if key not in sites:
            facts = ctx.tensors(scope)
            sites[key] = CondSite(
                ctx, scope, facts.likely if likely else facts, tf, imports, assume_scalar=likely
            )
        return sites[key]

    def _outcome(
        self,
        conditional: CondSite,
        node: cst.If | cst.IfExp,
        ancestors: Sequence[cst.CSTNode],
        memo: dict[int, _Outcome],
    ) -> _Outcome:
        if id(node) in memo:
            return memo[id(node)]
        nested = conditional.nested_tensor_conditionals(node)
        # Inner conditionals first: a refused one blocks this one for good. The
        # reason names the innermost refusal once, however deep the nesting.
        for inner, between in nested:
            inner_outcome = self._outcome(
                conditional,
                inner,  # type: ignore[arg-type]
                (*ancestors, node, *between),
                memo,
            )
            if inner_outcome.reason:
                reason = inner_outcome.reason
                if not inner_outcome.inner:
                    what = "conditional expression" if isinstance(inner, cst.IfExp) else "`if`"
                    reason = f"a tensor {what} inside it cannot be rewritten: {reason}"
                outcome = _Outcome(reason=reason, inner=True)
                memo[id(node)] = outcome
                return outcome
        if isinstance(node, cst.IfExp):
            outcome = _ifexp(conditional, node, ancestors, bool(nested))
        else:
            outcome = _if_statement(conditional, node, ancestors, bool(nested))
        memo[id(node)] = outcome
        return outcome


def _presence_test(scope: FunctionScope, test: cst.BaseExpression) -> bool:
    """`if labels:` on a parameter that defaults to `None`: a test of
    whether it was given (a dict of labels a dataset may or may not
    yield), unless it is known to be a scalar tensor: the truth of a tensor
    of more elements raises eagerly too, so code that runs does not test
    one so."""
    if not isinstance(test, cst.Name) or scope.runs_traced is None:
        return False
    for param in all_params(scope.node.params):
        if param.name.value == test.value:
            default = param.default
            return (
                isinstance(default, cst.Name)
                and default.value == "None"
                and test.value not in scope.runs_traced.scalar_params
            )
    return False


def _enclosing_function(
    node: cst.If | cst.IfExp, ancestors: Sequence[cst.CSTNode]
) -> cst.FunctionDef | None:
    """The function whose code `node` is, or None when it sits in a class
    body, or in a lambda whose parameters its condition reads (the tensor
    facts of the function would not apply to them)."""
    for ancestor in reversed(ancestors):
        if isinstance(ancestor, cst.FunctionDef):
            return ancestor
        if isinstance(ancestor, cst.ClassDef):
            return None
        if isinstance(ancestor, cst.Lambda):
            params = ancestor.params
            names = {p.name.value for p in [*params.posonly_params, *params.params]}
            names |= {p.name.value for p in params.kwonly_params}
            if isinstance(node, cst.If) or names & reads(node.test):
                return None
    return None


def _namespace(ctx: RuleContext) -> tuple[str, tuple[ImportRequest, ...]]:
    """What generated code calls `cond` on, and the import it needs: a file
    that uses `keras.ops` and does not import TensorFlow gets `keras.ops`
    (`ops.cond`), so a Keras 3 loss keeps running on every backend."""
    tf, imports = ctx.tensorflow()
    if not imports:
        return tf, imports
    ops = ctx.names.alias_for("keras.ops")
    if ops is not None:
        return ops, ()
    keras = ctx.names.alias_for("keras")
    if keras is not None and "keras.ops" in _qualified_names(ctx):
        return f"{keras}.ops", ()
    return tf, imports


def _qualified_names(ctx: RuleContext) -> set[str]:
    """The `keras.ops` functions the file calls (module prefix only)."""
    found: set[str] = set()
    for node in iter_nodes(ctx.module):
        if isinstance(node, cst.Attribute):
            qualified = ctx.names.qualified_name(node)
            if qualified is not None and qualified.startswith("keras.ops."):
                found.add("keras.ops")
                return found
    return found


def _assuming(outcome: _Outcome, names: Sequence[str]) -> _Outcome:
    """An outcome resting on likely tensors (parameters of a traced function
    with no evidence either way): its fix is unsafe and says so."""
    listed = ", ".join(f"`{n}`" for n in names) or "its parameters"
    verb = "is a tensor argument" if len(names) == 1 else "are tensor arguments"
    assumption = f"the fix assumes {listed} {verb}, and the condition a scalar"
    fix = outcome.fix
    if fix is not None:
        fix = replace(fix, applicability=Applicability.UNSAFE)
    return replace(
        outcome, fix=fix, unsafe=(assumption, *outcome.unsafe), assumed=f"{listed} {verb}"
    )


def _violation(node: cst.If | cst.IfExp, outcome: _Outcome) -> Violation:
    message = _IFEXP_MESSAGE if isinstance(node, cst.IfExp) else _MESSAGE
    if outcome.rank is not None:
        return Violation(
            node, f"Python `if` on a tensor needs AutoGraph: {outcome.rank}", outcome.fix
        )
    if outcome.reason:
        what = "conditional expression" if isinstance(node, cst.IfExp) else "`if`"
        # Resting on likely tensors, the finding says so.
        when = f" (if {outcome.assumed})" if outcome.assumed else ""
        return Violation(
            node,
            f"Python {what} on a tensor{when} needs AutoGraph, and cannot be rewritten as "
            f"`tf.cond`: {outcome.reason}",
        )
    if outcome.waiting:
        return Violation(node, f"{message} (after the tensor conditionals inside it)")
    if outcome.unsafe:
        message = f"{message} (unsafe fix: {'; '.join(outcome.unsafe)})"
    return Violation(node, message, outcome.fix)


RULES = (TensorIf,)
