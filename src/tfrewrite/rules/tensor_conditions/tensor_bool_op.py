"""TFR109: Python `and`/`or`/`not` testing a tensor, in traced code, outside
an `if`, `while` or conditional expression (those are TFR101's).

Python calls `bool()` on every operand of `and`/`or` but the last, and on the
operand of `not`. On a symbolic tensor `bool()` raises
`OperatorNotAllowedInGraphError`; only AutoGraph's rewrite of the operator
(`ag__.and_`) keeps such code running when traced. So it fails under
`tf.function(autograph=False)`, and in a Keras 3 layer's or model's `call`,
which Keras runs without AutoGraph even inside an AutoGraph function. The
graph form is `tf.logical_and`/`tf.logical_or`/`tf.logical_not`, which the
condition translator of the `if` rewrite writes (lazily, in a `tf.cond`,
where evaluating the right operand anyway could fail).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import libcst as cst

from tfrewrite.facts.context import FunctionScope, RuleContext
from tfrewrite.facts.tensors import TensorFacts
from tfrewrite.facts.walk import enclosing_statement_line, iter_with_ancestors
from tfrewrite.findings import Applicability
from tfrewrite.rewrite.fixes import CstFix, NodeEdit, Violation
from tfrewrite.rules.base import Invalid, Rule, Valid
from tfrewrite.rules.tensor_conditions.cond_condition import ConditionTranslator


def _is_not(node: cst.CSTNode) -> bool:
    return isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not)


def _tested_operands(node: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The operands whose truth Python tests: every operand of an `and`/`or`
    chain but the last, and the operand of `not` (recursively)."""
    if isinstance(node, cst.BooleanOperation):
        return [*_all_operands(node.left), *_tested_operands(node.right)]
    if _is_not(node):
        return _all_operands(node.expression)  # type: ignore[attr-defined]
    return []


def _all_operands(node: cst.BaseExpression) -> list[cst.BaseExpression]:
    """Every leaf operand of an `and`/`or`/`not` expression (all of them
    tested when the expression is itself tested)."""
    if isinstance(node, cst.BooleanOperation):
        return [*_all_operands(node.left), *_all_operands(node.right)]
    if _is_not(node):
        return _all_operands(node.expression)  # type: ignore[attr-defined]
    return [node]


def _in_a_test(node: cst.CSTNode, ancestors: Sequence[cst.CSTNode]) -> bool:
    """Whether `node` is (inside) the test of an `if`, `while`, conditional
    expression, `assert` or comprehension filter: TFR101 and AutoGraph's
    own conversions own those."""
    below: cst.CSTNode = node
    for parent in reversed(ancestors):
        if isinstance(parent, (cst.If, cst.While, cst.IfExp, cst.Assert)):
            if parent.test is below:
                return True
        if isinstance(parent, cst.CompIf):
            return True
        if isinstance(parent, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            return False
        below = parent
    return False


def _enclosing_function(ancestors: Sequence[cst.CSTNode]) -> cst.FunctionDef | None:
    """The function the expression is code of (None inside a lambda, whose
    parameters the function's facts do not describe, or a class body)."""
    for ancestor in reversed(ancestors):
        if isinstance(ancestor, cst.FunctionDef):
            return ancestor
        if isinstance(ancestor, (cst.Lambda, cst.ClassDef)):
            return None
    return None


class TensorBooleanOperator(Rule):
    code = "TFR109"
    name = "tensor-boolean-operator"
    summary = (
        "Python `and`/`or`/`not` testing a tensor in traced code needs AutoGraph: "
        "use `tf.logical_and`/`tf.logical_or`/`tf.logical_not`"
    )
    fix_applicability = Applicability.SAFE
    explanation = """
    ## What it does
    Finds `and`, `or` and `not` whose operand is a tensor in code that runs
    traced, outside the test of an `if`, `while` or conditional expression
    (TFR101 rewrites those), and writes `tf.logical_and`, `tf.logical_or` and
    `tf.logical_not` in their place: the condition of a `tf.while_loop`
    (`return i < n and not tf.reduce_all(done)`), a mask, a flag returned or
    assigned.

    ## Why is this bad?
    Python calls `bool()` on every operand of `and`/`or` but the last, and on
    the operand of `not`. On a symbolic tensor that raises
    `OperatorNotAllowedInGraphError: using a tf.Tensor as a Python bool is
    not allowed`. Eagerly a scalar tensor has a truth value, so the code runs;
    traced, only AutoGraph's rewrite of the operator keeps it running. It
    fails under `tf.function(autograph=False)`, and in a Keras 3 layer's or
    model's `call`, which Keras runs without AutoGraph. A tensor that is only
    the last operand (`flag and mask`, `flag` a Python bool) is never tested:
    not reported.

    ## The fix
    `tf.logical_and(a, b)` where `a and b` was. Python skips the right operand
    once the left decides; where evaluating it anyway could fail or have an
    effect (it indexes, divides integers, calls anything but TensorFlow math),
    it stays lazy: `tf.cond(a, lambda: b, lambda: False)`, as AutoGraph's own
    `and` does.

    ## Fix safety
    Safe when every operand is a boolean tensor the analysis proves
    (a comparison of tensors, `tf.reduce_all`, `tf.logical_*`, `tf.equal`):
    then Python's `and`, which returns one of its operands, and
    `tf.logical_and` give the same boolean. Operands that are not known to be
    boolean are reported without a fix: Python's `x and y` of numbers returns
    `y` or `x`, `tf.logical_and` a boolean. Unsafe when a tensor operand is
    only likely (a parameter of a traced function with no evidence either
    way).
    """
    examples = (
        Invalid(
            """
            import tensorflow as tf

            @tf.function(autograph=False)
            def decode(tokens):
                done = tf.zeros([4], tf.bool)

                def keep_going(t, d):
                    return tf.shape(t)[1] < 20 and not tf.reduce_all(d)

                def step(tokens, done):
                    return tf.concat([tokens, tokens[:, -1:]], axis=1), done

                return tf.while_loop(keep_going, step, (tokens, done))
            """,
            """
            import tensorflow as tf

            @tf.function(autograph=False)
            def decode(tokens):
                done = tf.zeros([4], tf.bool)

                def keep_going(t, d):
                    return tf.logical_and(tf.shape(t)[1] < 20, tf.logical_not(tf.reduce_all(d)))

                def step(tokens, done):
                    return tf.concat([tokens, tokens[:, -1:]], axis=1), done

                return tf.while_loop(keep_going, step, (tokens, done))
            """,
        ),
        Valid(
            """
            import tensorflow as tf

            @tf.function
            def masked(x, use_mask):
                return use_mask and x > 0
            """,
            note="the tensor is only the last operand: Python never tests it",
        ),
        Valid(
            """
            import tensorflow as tf

            @tf.function
            def clipped(x):
                if tf.reduce_max(x) > 1.0 and tf.reduce_min(x) < 0.0:
                    x = tf.clip_by_value(x, 0.0, 1.0)
                return x
            """,
            note="the test of an `if`: TFR101's",
        ),
    )

    def check(self, ctx: RuleContext) -> Iterator[Violation]:
        tf, imports = ctx.tensorflow()
        seen: set[int] = set()
        for traced in ctx.traced_functions():
            for node, ancestors in iter_with_ancestors(traced.node):
                if not (isinstance(node, cst.BooleanOperation) or _is_not(node)):
                    continue
                if id(node) in seen or (ancestors and self._operator(ancestors[-1])):
                    continue  # the outermost operator speaks for the chain
                seen.add(id(node))
                if _in_a_test(node, ancestors):
                    continue
                function = _enclosing_function(ancestors)
                line = enclosing_statement_line(ancestors)
                scope = ctx.scope_of(function) if function is not None else None
                if scope is None or line is None:
                    continue
                violation = self._judge(ctx, scope, node, line, tf, imports)  # type: ignore[arg-type]
                if violation is not None:
                    yield violation

    @staticmethod
    def _operator(node: cst.CSTNode) -> bool:
        return isinstance(node, cst.BooleanOperation) or _is_not(node)

    def _judge(
        self,
        ctx: RuleContext,
        scope: FunctionScope,
        node: cst.BaseExpression,
        line: cst.SimpleStatementLine,
        tf: str,
        imports: tuple,  # type: ignore[type-arg]
    ) -> Violation | None:
        facts = ctx.tensors(scope)
        strength = _tested_strength(facts, _tested_operands(node), line)
        if strength is None:
            return None
        word = self._word(node)
        what = f"Python `{word}` on a tensor needs AutoGraph"
        leaves = _all_operands(node)
        # Safe when the function's facts prove every operand a boolean
        # tensor; unsafe when its likely facts (parameters taken for
        # tensors) do.
        proven = strength == "proven" and _all_boolean(facts, leaves, line)
        used = facts if proven else facts.likely
        not_boolean = [leaf for leaf in leaves if not used.kind_at(leaf, line).boolean]
        if not_boolean:
            return Violation(
                node,
                f"{what} (no fix: `{ctx.code(not_boolean[0])}` is not known to be a boolean "
                f"tensor, and Python's `{word}` returns one of its operands where "
                f"`tf.logical_{word}` returns a boolean)",
            )
        translator = ConditionTranslator(used, tf, ctx.code, assume_scalar=not proven)
        condition = translator.translate(node, line)
        if not condition.tensor:
            return None
        if condition.reason:
            return Violation(node, f"{what} (no fix: {condition.reason})")
        replacement = cst.parse_expression(condition.code)
        applicability = Applicability.SAFE if proven else Applicability.UNSAFE
        message = f"{what}; use `tf.logical_{word}`"
        if not proven:
            message += f" (unsafe fix: {facts.assumption_note(node)})"
        fix = CstFix(
            f"Use `{tf}.logical_{word}`",
            (NodeEdit(node, replacement),),
            imports,
            applicability,
        )
        return Violation(node, message, fix)

    @staticmethod
    def _word(node: cst.BaseExpression) -> str:
        if isinstance(node, cst.BooleanOperation):
            return "and" if isinstance(node.operator, cst.And) else "or"
        return "not"


def _all_boolean(
    facts: TensorFacts, leaves: list[cst.BaseExpression], line: cst.SimpleStatementLine
) -> bool:
    return all(facts.kind_at(leaf, line).boolean for leaf in leaves)


def _tested_strength(
    facts: TensorFacts, operands: list[cst.BaseExpression], line: cst.SimpleStatementLine
) -> str | None:
    """ "proven" when an operand Python tests is a tensor by the function's
    facts, "likely" when only by its likely facts, None when none is."""
    if any(facts.kind_at(op, line).tensor for op in operands):
        return "proven"
    if facts.likely is not facts and any(facts.likely.kind_at(op, line).tensor for op in operands):
        return "likely"
    return None


RULES = (TensorBooleanOperator,)
