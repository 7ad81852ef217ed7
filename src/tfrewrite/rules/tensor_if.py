"""TFR101: a Python `if` (or `A if c else B`) on a tensor, in traced code.

The rule converts only conditions the shared tensor analysis proves to be
tensors; everything else (static shapes, `is None`, `isinstance`, dtype
checks, Python flags such as `training`, `self.*`) stays a Python `if` and
produces no finding. A tensor `if` that cannot be rewritten safely is still a
finding, with the reason and no fix.

Nested conditionals are rewritten inside out: an `if` whose branches still
hold a tensor conditional waits for the next fix round, when the inner one
has become a `tf.cond`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property

import libcst as cst

from tfrewrite.analysis.index import ModuleIndex
from tfrewrite.analysis.tensors import TensorFacts
from tfrewrite.analysis.walk import child_nodes, iter_nodes, iter_with_ancestors
from tfrewrite.context import FunctionScope, RuleContext
from tfrewrite.findings import Applicability
from tfrewrite.rules.base import CstFix, Invalid, NodeEdit, Rule, Valid, Violation
from tfrewrite.rules.cond_analysis import (
    Placement,
    Statement,
    always_returns,
    assigned_in_order,
    assigned_names,
    block_statements,
    bound_by_definition,
    branch_problem,
    closure_reads,
    contains_return,
    defined_before,
    definitely_assigned,
    is_generator,
    is_pass,
    live_after,
    named_closures,
    placement,
    read_before_assigned,
    reads,
    rebinding_closures,
    returns_in,
    scope_declarations,
)
from tfrewrite.rules.cond_codegen import (
    Branch,
    Refusal,
    ReturnNormalizer,
    assemble,
    cond_call,
    function_branch,
    has_comment,
    lambda_branch,
)
from tfrewrite.rules.cond_condition import (
    UNKNOWN,
    ConditionTranslator,
    ValueKind,
    as_float_literal,
    reconcile,
    value_kind,
)

FIX_MESSAGE = "Rewrite as `tf.cond`"
_MESSAGE = "Python `if` on a tensor needs AutoGraph; rewrite it as `tf.cond`"
_IFEXP_MESSAGE = "`A if c else B` on a tensor needs AutoGraph; rewrite it as `tf.cond`"

_AUG_TO_BINARY = {
    cst.AddAssign: cst.Add,
    cst.SubtractAssign: cst.Subtract,
    cst.MultiplyAssign: cst.Multiply,
    cst.DivideAssign: cst.Divide,
    cst.FloorDivideAssign: cst.FloorDivide,
    cst.ModuloAssign: cst.Modulo,
    cst.PowerAssign: cst.Power,
    cst.MatrixMultiplyAssign: cst.MatrixMultiply,
}
# Binding strength of binary operators, for parenthesising `a op= b` as `a op (b)`.
_PRECEDENCE = {
    cst.Add: 1,
    cst.Subtract: 1,
    cst.Multiply: 2,
    cst.Divide: 2,
    cst.FloorDivide: 2,
    cst.Modulo: 2,
    cst.MatrixMultiply: 2,
    cst.Power: 3,
}


@dataclass(frozen=True)
class _Outcome:
    """What the rule concludes about one conditional."""

    fix: CstFix | None = None
    reason: str | None = None  # refused: why
    waiting: bool = False  # convertible once the conditionals inside it are


class _Conditional:
    """The analysis of one `if` statement or conditional expression."""

    def __init__(
        self,
        rule_ctx: RuleContext,
        scope: FunctionScope,
        facts: TensorFacts,
        tf: str,
        imports: tuple,
    ) -> None:
        self.ctx = rule_ctx
        self.scope = scope
        self.facts = facts
        self.tf = tf
        self.imports = imports
        self.translator = ConditionTranslator(facts, tf, rule_ctx.code)
        self.current: cst.If | None = None

    # -- shared ------------------------------------------------------------------
    @cached_property
    def declarations(self) -> set[str]:
        return scope_declarations(self.scope.node)

    @cached_property
    def closure_reads(self) -> set[str]:
        return closure_reads(self.scope.node)

    @cached_property
    def named_closures(self) -> dict[str, set[str]]:
        return named_closures(self.scope.node)

    def branch_scope_problem(self, side: str, statements: Sequence[Statement]) -> str | None:
        """Why a branch cannot move into a nested function or lambda: a
        zero-argument `super()` there has no class or instance to work from;
        a closure the branch uses after assigning a name it reads would still
        see the old value (the assignment becomes local to the branch); a
        closure rebinding names with `nonlocal` is an effect both traced
        branches would run."""
        block = cst.Module(body=list(statements))
        for node in iter_nodes(block, into_functions=False):
            if (
                isinstance(node, cst.Call)
                and isinstance(node.func, cst.Name)
                and node.func.value == "super"
                and not node.args
            ):
                params = self.scope.node.params.params
                instance = params[0].name.value if params else "self"
                explicit = f"super({self.scope.class_name or 'ClassName'}, {instance})"
                return (
                    f"the {side} branch calls `super()` without arguments, which fails inside "
                    f"a branch function: write `{explicit}`"
                )
        assigned = assigned_names(block)
        used = reads(block)
        rebinding = rebinding_closures(self.scope.node)
        for closure in sorted(used - assigned):
            reached = {closure} | self.named_closures.get(closure, set())
            writer = next((name for name in sorted(reached) if name in rebinding), None)
            if writer is not None:
                return (
                    f"the {side} branch uses `{closure}`, which rebinds "
                    f"'{sorted(rebinding[writer])[0]}' with `nonlocal`/`global`, a Python effect "
                    "tracing would run for both branches"
                )
            seen = sorted(self.named_closures.get(closure, set()) & assigned)
            if seen:
                return (
                    f"the {side} branch assigns '{seen[0]}', which the nested function "
                    f"`{closure}` reads, and uses `{closure}`: in a branch function it would "
                    "still see the old value"
                )
        return None

    def nested_tensor_conditionals(self, node: cst.CSTNode) -> list[cst.CSTNode]:
        """Tensor conditionals inside `node` in the same scope (those in a
        nested function or lambda are rewritten, or refused, on their own)."""
        found = []
        stack = list(child_nodes(node))
        while stack:
            current = stack.pop()
            if isinstance(current, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
                continue
            if (
                isinstance(current, (cst.If, cst.IfExp))
                and self.translator.translate(current.test, current).tensor
            ):
                found.append(current)
            stack.extend(child_nodes(current))
        return found

    def fix(self, edits: Sequence[NodeEdit]) -> CstFix:
        return CstFix(FIX_MESSAGE, tuple(edits), self.imports, Applicability.SAFE)

    # -- conditional expressions -----------------------------------------------------
    def ifexp(self, node: cst.IfExp, nested: bool) -> _Outcome:
        condition = self.translator.translate(node.test, node)
        if condition.reason:
            return _Outcome(reason=condition.reason)
        if nested:
            return _Outcome(waiting=True)
        for side, value in (("true", node.body), ("false", node.orelse)):
            walrus = _walrus_target(value)
            if walrus is not None:
                return _Outcome(
                    reason=(
                        f"the {side} branch binds '{walrus}' with `:=`, which in a `tf.cond` "
                        "branch would bind a local of the branch instead"
                    )
                )
            statements = [cst.SimpleStatementLine(body=[cst.Expr(value=value)])]
            problem = branch_problem(
                statements, self.ctx.names, side, allow_return=False, expression=True
            ) or self.branch_scope_problem(side, statements)
            if problem:
                return _Outcome(reason=problem)
        body, orelse = node.body, node.orelse
        reconciled = reconcile(
            "the value", value_kind(body, self.facts), value_kind(orelse, self.facts)
        )
        if reconciled.reason:
            return _Outcome(reason=reconciled.reason)
        if reconciled.convert[0]:
            body = as_float_literal(body)
        if reconciled.convert[1]:
            orelse = as_float_literal(orelse)
        code = (
            f"{self.tf}.cond({condition.code}, lambda: {_lambda_body(self.ctx, body)}, "
            f"lambda: {_lambda_body(self.ctx, orelse)})"
        )
        replacement = cst.parse_expression(code)
        return _Outcome(self.fix([NodeEdit(node, replacement)]))

    # -- if statements ------------------------------------------------------------------
    def if_statement(
        self, node: cst.If, ancestors: Sequence[cst.CSTNode], nested: bool
    ) -> _Outcome:
        condition = self.translator.translate(node.test, node)
        if condition.reason:
            return _Outcome(reason=condition.reason)
        if nested:
            return _Outcome(waiting=True)
        place = placement(self.scope.node, ancestors, node)
        self.current = node
        try:
            declared = self.declarations & assigned_names(node)
            if declared:
                raise Refusal(
                    f"'{sorted(declared)[0]}' is declared `global`/`nonlocal` and assigned in a "
                    "branch, which a branch function cannot do"
                )
            if contains_return(node):
                edits = self._returning(node, place, condition.code)
            else:
                edits = self._assigning(node, place, condition.code)
        except Refusal as refusal:
            return _Outcome(reason=str(refusal))
        return _Outcome(self.fix(edits))

    def _indent_of(self, place: Placement) -> int:
        """Roughly how deep the new statements sit (for line lengths): one
        level per enclosing class or function, one per block."""
        return 4 * (self.scope.qualname.count(".") + len(place.blocks))

    # Early returns ------------------------------------------------------------------------
    def _returning(self, node: cst.If, place: Placement, condition: str) -> list[NodeEdit]:
        for compound in place.compounds:
            if not isinstance(compound, (cst.If, cst.With)):
                kind = type(compound).__name__.lower()
                raise Refusal(
                    f"it returns from inside a `{kind}` block, so the rest of the function "
                    "cannot move into its branches"
                )
        if is_generator(self.scope.node):
            raise Refusal("the function is a generator, where `return` ends the iteration")
        function_body = self.scope.node.body
        if not isinstance(function_body, cst.IndentedBlock):
            raise Refusal("the function body is on one line")
        statements = list(function_body.body)
        anchor = place.top_level_index
        defined = defined_before(place)

        def convert(normalized: cst.If) -> list[Statement]:
            return self._returning_cond(normalized, node, place, condition, defined)

        normalizer = ReturnNormalizer(node, convert)
        new_tail = normalizer.block(statements[anchor:])
        edits = [NodeEdit(statements[anchor], cst.FlattenSentinel(new_tail))]
        edits += [NodeEdit(s, cst.RemovalSentinel.REMOVE) for s in statements[anchor + 1 :]]
        return edits

    def _returning_cond(
        self,
        normalized: cst.If,
        original: cst.If,
        place: Placement,
        condition: str,
        defined: set[str],
    ) -> list[Statement]:
        sides = {
            "true": block_statements(normalized.body),
            "false": block_statements(normalized.orelse),
        }
        for side, statements in sides.items():
            other = "false" if side == "true" else "true"
            if not always_returns(statements):
                raise Refusal(
                    f"the {other} branch returns a value but the {side} branch does not, and "
                    "nothing after the `if` returns"
                )
            for ret in _returns(statements):
                if ret.value is None:
                    raise Refusal(f"the {side} branch has a `return` without a value")
            problem = branch_problem(
                statements, self.ctx.names, side, allow_return=True
            ) or self.branch_scope_problem(side, statements)
            if problem:
                raise Refusal(problem)
            for inner in statements:
                if self.nested_tensor_conditionals(cst.Module(body=[inner])):
                    raise Refusal(
                        f"the {side} branch would hold another tensor `if` (rewrite that first)"
                    )
        sides = self._reconcile_returns(sides)
        branches = {}
        for side, statements in sides.items():
            suite = normalized.body if side == "true" else normalized.orelse
            branches[side] = self._return_branch(side, statements, suite, defined, place)
        prefix = "return "
        text = cond_call(
            self.tf, condition, branches["true"], branches["false"], prefix, self._indent_of(place)
        )
        return assemble(branches["true"], branches["false"], text, original.leading_lines)

    def _reconcile_returns(self, sides: dict[str, list[Statement]]) -> dict[str, list[Statement]]:
        """Match the dtypes of what the branches return; write an int literal
        as a float where the other branch returns a floating-point tensor."""
        values = {side: [r.value for r in _returns(s)] for side, s in sides.items()}
        convert: set[int] = set()
        for t in values["true"]:
            for f in values["false"]:
                assert t is not None and f is not None
                pairs = _element_pairs(t, f)
                if pairs is None:
                    raise Refusal("the branches return tuples of different lengths")
                for a, b in pairs:
                    result = reconcile(
                        "the value returned", value_kind(a, self.facts), value_kind(b, self.facts)
                    )
                    if result.reason:
                        raise Refusal(result.reason)
                    if result.convert[0]:
                        convert.add(id(a))
                    if result.convert[1]:
                        convert.add(id(b))
        if not convert:
            return sides
        transformer = _FloatLiterals(convert)
        return {
            side: [s.visit(transformer) for s in statements]  # type: ignore[misc]
            for side, statements in sides.items()
        }

    def _return_branch(
        self,
        side: str,
        statements: list[Statement],
        suite: cst.BaseSuite | cst.If | cst.Else | None,
        defined: set[str],
        place: Placement,
    ) -> Branch:
        only = statements[0] if len(statements) == 1 else None
        if (
            only is not None
            and isinstance(only, cst.SimpleStatementLine)
            and len(only.body) == 1
            and isinstance(only.body[0], cst.Return)
            and not has_comment(only, suite if isinstance(suite, cst.BaseSuite) else None)
            and not (isinstance(suite, cst.Else) and has_comment(suite))
        ):
            value = only.body[0].value
            assert value is not None
            code = _expression_code(self.ctx, value)
            if "\n" not in code:  # a multi-line expression reads better in a function
                return lambda_branch([code])
        params = self._params(side, statements, [], defined)
        name = self._function_name(side, [], place)
        template, leading = _template(suite)
        return function_branch(name, params, statements, None, template, leading)

    # Assignments ---------------------------------------------------------------------------
    def _assigning(self, node: cst.If, place: Placement, condition: str) -> list[NodeEdit]:
        sides = {"true": block_statements(node.body), "false": block_statements(node.orelse)}
        sides = {k: [s for s in v if not is_pass(s)] for k, v in sides.items()}
        for side, statements in sides.items():
            problem = branch_problem(
                statements, self.ctx.names, side, allow_return=False
            ) or self.branch_scope_problem(side, statements)
            if problem:
                raise Refusal(problem)
        if not any(sides.values()):
            raise Refusal("both branches are empty: delete the `if`")
        live = live_after(place) | self.closure_reads
        defined = defined_before(place)
        modified = {side: assigned_names(cst.Module(body=s)) for side, s in sides.items()}
        outputs = [n for n in _assignment_order(sides["true"] + sides["false"]) if n in live]
        surely = {side: definitely_assigned(s) for side, s in sides.items()}
        objects = bound_by_definition(sides["true"] + sides["false"])
        for name in outputs:
            if name in objects:
                raise Refusal(
                    f"'{name}' is a function, class or module defined in a branch and used after "
                    "the `if`; `tf.cond` can only return tensors"
                )
            for side, other in (("true", "false"), ("false", "true")):
                if name not in surely[side] and name not in defined:
                    if name not in modified[side]:
                        raise Refusal(
                            f"'{name}' is defined only in the {other} branch and used after the "
                            f"`if`: define it before the `if` or in the {side} branch too"
                        )
                    raise Refusal(
                        f"'{name}' is assigned only on some paths of the {side} branch and is not "
                        "defined before the `if`"
                    )
        sides = self._reconcile_outputs(sides, outputs, place)
        branches = {}
        for side, statements in sides.items():
            suite = node.body if side == "true" else node.orelse
            branches[side] = self._assign_branch(side, statements, suite, outputs, defined, place)
        if len(outputs) == 1:
            prefix = f"{outputs[0]} = "
        elif outputs:
            prefix = f"{', '.join(outputs)} = "
        else:
            prefix = ""
        text = cond_call(
            self.tf, condition, branches["true"], branches["false"], prefix, self._indent_of(place)
        )
        new = assemble(branches["true"], branches["false"], text, node.leading_lines)
        if (
            place.blocks
            and len(place.blocks[-1][0]) == 1
            and place.blocks[-1][0][0] is node
            and _is_elif(node, place)
        ):
            return [NodeEdit(node, cst.Else(body=cst.IndentedBlock(body=new)))]
        return [NodeEdit(node, cst.FlattenSentinel(new))]

    def _reconcile_outputs(
        self, sides: dict[str, list[Statement]], outputs: list[str], place: Placement
    ) -> dict[str, list[Statement]]:
        for name in outputs:
            finals = {side: _final_assignment(s, name) for side, s in sides.items()}
            kinds = {
                side: self._final_kind(name, final, place)
                if final is not None or name not in assigned_names(cst.Module(body=sides[side]))
                # bound in the branch some other way (`+=`, unpacking, a loop): its dtype
                # is not the incoming value's
                else self._augmented_kind(name, sides[side], place)
                for side, final in finals.items()
            }
            result = reconcile(f"'{name}'", kinds["true"], kinds["false"])
            if result.reason:
                raise Refusal(result.reason)
            for index, side in enumerate(("true", "false")):
                if not result.convert[index]:
                    continue
                final = finals[side]
                if final is None:
                    raise Refusal(
                        f"'{name}' is a Python int before the `if` but a floating-point tensor in "
                        "the other branch: write the number as a float"
                    )
                line, assign = final
                replaced = line.with_changes(
                    body=[assign.with_changes(value=as_float_literal(assign.value))]
                )
                sides[side] = [replaced if s is line else s for s in sides[side]]
        return sides

    def _augmented_kind(
        self, name: str, statements: Sequence[Statement], place: Placement
    ) -> ValueKind:
        """The kind of `name` after a branch that binds it once, by `name op=
        value` on its incoming value; unknown for any other binding."""
        bindings = [s for s in statements if name in assigned_names(cst.Module(body=[s]))]
        if len(bindings) != 1 or not isinstance(bindings[0], cst.SimpleStatementLine):
            return UNKNOWN
        small = bindings[0].body
        if not (
            len(small) == 1
            and isinstance(small[0], cst.AugAssign)
            and isinstance(small[0].target, cst.Name)
            and type(small[0].operator) in _AUG_TO_BINARY
        ):
            return UNKNOWN
        augmented = small[0]
        before = self._final_kind(name, None, place)
        value = value_kind(augmented.value, self.facts)
        numbers = ("int", "float")
        if before.literal in numbers and value.literal in numbers:
            if isinstance(augmented.operator, cst.PowerAssign):
                return UNKNOWN  # `2 ** -1` is a float
            floating = "float" in (before.literal, value.literal) or isinstance(
                augmented.operator, cst.DivideAssign
            )
            return ValueKind(literal="float" if floating else "int")
        for number, tensor in ((before, value), (value, before)):
            if number.literal in numbers and tensor.tensor is not None and tensor.tensor.floating:
                return tensor
        if before.tensor is not None and value.tensor is not None:
            if before.tensor.floating and value.tensor.floating:
                return before
        return UNKNOWN

    def _final_kind(
        self, name: str, final: tuple[cst.SimpleStatementLine, cst.Assign] | None, place: Placement
    ) -> ValueKind:
        if final is not None:
            return value_kind(final[1].value, self.facts)
        incoming = _incoming_value(name, place)
        if incoming is not None:
            return value_kind(incoming, self.facts)
        kind = self.facts.name_kind(name)
        return ValueKind(tensor=kind) if kind.tensor else UNKNOWN

    def _assign_branch(
        self,
        side: str,
        statements: list[Statement],
        suite: cst.BaseSuite | cst.If | cst.Else | None,
        outputs: list[str],
        defined: set[str],
        place: Placement,
    ) -> Branch:
        commented = (
            has_comment(suite) if suite is not None and not isinstance(suite, cst.If) else False
        )
        expressions = None if commented else _as_expressions(self.ctx, statements, outputs)
        if expressions is not None:
            return lambda_branch(expressions)
        if not statements and not outputs:
            return lambda_branch([])
        params = self._params(side, statements, outputs, defined)
        name = self._function_name(side, outputs, place)
        template, leading = _template(suite)
        returned = ", ".join(outputs) if outputs else None
        return function_branch(name, params, statements, returned, template, leading)

    # Branch functions ----------------------------------------------------------------------
    def _params(
        self, side: str, statements: list[Statement], outputs: list[str], defined: set[str]
    ) -> list[str]:
        """Names the branch reads (or passes through) before assigning them:
        they come in as parameters."""
        assigned = assigned_names(cst.Module(body=statements))
        needed = read_before_assigned(statements) | (set(outputs) - definitely_assigned(statements))
        params = sorted(needed & assigned, key=_order_key(statements, outputs))
        for name in params:
            if name not in defined:
                raise Refusal(
                    f"'{name}' is read in the {side} branch before it is assigned there, and it "
                    "is not defined before the `if`"
                )
        return params

    def _function_name(self, side: str, outputs: list[str], place: Placement) -> str:
        """`_loss_if_true` for one output, else `_true_fn`; a name the code
        around already uses for something live gets a number. (Branch
        functions are used right where they are defined, so two `tf.cond`s
        may each define their own `_true_fn`.)"""
        base = f"_{outputs[0].lstrip('_')}_if_{side}" if len(outputs) == 1 else f"_{side}_fn"
        assert self.current is not None
        taken = live_after(place) | reads(self.current) | assigned_names(self.current)
        name, n = base, 2
        while name in taken:
            name = f"{base}_{n}"
            n += 1
        return name


class TensorIf(Rule):
    code = "TFR101"
    name = "tensor-if"
    summary = "Python `if` on a tensor in traced code: rewrite it as `tf.cond`"
    fix_applicability = Applicability.SAFE
    explanation = """
    ## What it does
    Finds Python `if` statements and `A if c else B` expressions whose condition
    is a tensor, inside code that runs under `tf.function` (a decorated function,
    a loss or metric given to `compile`, `Loss.call`, `Layer.call`, a train step,
    and what they call), and rewrites them as explicit `tf.cond`.

    ## Why it matters under tracing
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
    - A Python `0` facing a floating-point tensor in the other branch is written
      `0.0`, since `tf.cond` needs one dtype for both branches.

    Only conditions the tensor analysis proves to be tensors are rewritten.
    Static shapes (`x.shape[-1] == 1`, `len(x.shape) == 2`), `is None`,
    `isinstance`, dtype checks, `tf.executing_eagerly()`, Python flags such as
    `training` and attributes of `self` stay Python `if`s and are not reported.

    ## Refusals (reported without a fix, with the reason)
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
    - More than a few statements after an early-return `if` that would have to
      be copied into both of its branches.
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
                    lambda: 0.0,
                )
                return err + penalty
            """,
            note="`and` on tensors; the Python 0 becomes 0.0 to match the float branch",
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
                scale = tf.cond(m > 0.5, lambda: 2.0, lambda: 1.0)
                return m * scale
            """,
            note="a conditional expression",
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

            def eager_only(x):
                if tf.reduce_sum(x) > 0:
                    return x
                return -x
            """,
            note="not traced",
        ),
    )

    def applies_to(self, index: ModuleIndex, traced_qualnames: set[str]) -> bool:
        """Only files with a branch in some traced function (a pass-1 fact)."""
        return any(
            (info := index.functions.get(q)) is not None and info.branches for q in traced_qualnames
        )

    def check(self, ctx: RuleContext) -> Iterator[Violation]:
        tf, imports = ctx.tensorflow()
        memo: dict[int, _Outcome] = {}
        conditionals: dict[int, _Conditional] = {}  # one per function
        for traced in ctx.traced_functions():
            for node, ancestors in iter_with_ancestors(traced.node):
                if not isinstance(node, (cst.If, cst.IfExp)):
                    continue
                function = _enclosing_function(node, ancestors)
                scope = ctx.scope_of(function) if function is not None else None
                if scope is None:
                    continue
                conditional = conditionals.get(id(function))
                if conditional is None:
                    conditional = _Conditional(ctx, scope, ctx.tensors(scope), tf, imports)
                    conditionals[id(function)] = conditional
                if not conditional.translator.translate(node.test, node).tensor:
                    continue
                outcome = self._outcome(conditional, node, ancestors, memo)
                yield _violation(node, outcome)

    def _outcome(
        self,
        conditional: _Conditional,
        node: cst.If | cst.IfExp,
        ancestors: Sequence[cst.CSTNode],
        memo: dict[int, _Outcome],
    ) -> _Outcome:
        if id(node) in memo:
            return memo[id(node)]
        nested = conditional.nested_tensor_conditionals(node)
        nested = [n for n in nested if n is not node]
        # Inner conditionals first: a refused one blocks this one for good.
        for inner in nested:
            inner_outcome = self._outcome(conditional, inner, (*ancestors, node), memo)  # type: ignore[arg-type]
            if inner_outcome.reason:
                outcome = _Outcome(
                    reason=(
                        "it contains a tensor conditional that cannot be rewritten "
                        f"({inner_outcome.reason})"
                    )
                )
                memo[id(node)] = outcome
                return outcome
        if isinstance(node, cst.IfExp):
            outcome = conditional.ifexp(node, bool(nested))
        else:
            outcome = conditional.if_statement(node, ancestors, bool(nested))
        memo[id(node)] = outcome
        return outcome


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


def _violation(node: cst.If | cst.IfExp, outcome: _Outcome) -> Violation:
    message = _IFEXP_MESSAGE if isinstance(node, cst.IfExp) else _MESSAGE
    if outcome.reason:
        what = "conditional expression" if isinstance(node, cst.IfExp) else "`if`"
        return Violation(
            node,
            f"Python {what} on a tensor needs AutoGraph, and cannot be rewritten as `tf.cond`: "
            f"{outcome.reason}",
        )
    if outcome.waiting:
        return Violation(node, f"{message} (after the tensor conditionals inside it)")
    return Violation(node, message, outcome.fix)


# -- helpers ------------------------------------------------------------------------------


def _returns(statements: Sequence[Statement]) -> list[cst.Return]:
    return [r for s in statements for r in returns_in(s)]


def _element_pairs(
    a: cst.BaseExpression, b: cst.BaseExpression
) -> list[tuple[cst.BaseExpression, cst.BaseExpression]] | None:
    if isinstance(a, cst.Tuple) and isinstance(b, cst.Tuple):
        if len(a.elements) != len(b.elements):
            return None
        return [(x.value, y.value) for x, y in zip(a.elements, b.elements, strict=True)]
    return [(a, b)]


class _FloatLiterals(cst.CSTTransformer):
    """Rewrite the int literals (by identity) as floats."""

    def __init__(self, targets: set[int]) -> None:
        self.targets = targets

    def on_leave(self, original_node, updated_node):  # type: ignore[override]
        if id(original_node) in self.targets and isinstance(updated_node, cst.BaseExpression):
            return as_float_literal(updated_node)
        return updated_node


def _is_elif(node: cst.If, place: Placement) -> bool:
    """An `elif` is the `orelse` of the `if` enclosing it."""
    return bool(place.compounds) and getattr(place.compounds[-1], "orelse", None) is node


def _template(
    suite: cst.BaseSuite | cst.If | cst.Else | None,
) -> tuple[cst.BaseSuite | None, list[cst.EmptyLine]]:
    if isinstance(suite, cst.Else):
        return suite.body, list(suite.leading_lines)
    if isinstance(suite, cst.BaseSuite):
        return suite, []
    return None, []


def _expression_code(ctx: RuleContext, node: cst.BaseExpression) -> str:
    code = ctx.code(node).strip()
    if isinstance(node, cst.Tuple) and not node.lpar:
        return f"({code})"
    return code


def _lambda_body(ctx: RuleContext, node: cst.BaseExpression) -> str:
    """A value as a lambda body: without redundant outer parentheses."""
    if node.lpar and not isinstance(node, (cst.Tuple, cst.GeneratorExp, cst.Lambda, cst.NamedExpr)):
        node = node.with_changes(lpar=[], rpar=[])
    return _expression_code(ctx, node)


def _augmented_expression(ctx: RuleContext, aug: cst.AugAssign) -> str:
    op = _AUG_TO_BINARY[type(aug.operator)]
    symbol = _OPERATOR_SYMBOLS[op]
    right = aug.value
    text = ctx.code(right).strip()
    atomic = isinstance(
        right,
        (
            cst.Name,
            cst.Attribute,
            cst.Call,
            cst.Subscript,
            cst.Integer,
            cst.Float,
            cst.SimpleString,
        ),
    ) or bool(right.lpar)
    if isinstance(right, cst.BinaryOperation):
        inner = _PRECEDENCE.get(type(right.operator), 0)
        atomic = atomic or inner > _PRECEDENCE.get(op, 0)
    if not atomic:
        text = f"({text})"
    return f"{ctx.code(aug.target).strip()} {symbol} {text}"


_OPERATOR_SYMBOLS = {
    cst.Add: "+",
    cst.Subtract: "-",
    cst.Multiply: "*",
    cst.Divide: "/",
    cst.FloorDivide: "//",
    cst.Modulo: "%",
    cst.Power: "**",
    cst.MatrixMultiply: "@",
}


def _as_expressions(
    ctx: RuleContext, statements: list[Statement], outputs: list[str]
) -> list[str] | None:
    """One expression per output when the branch is just `out = expr` /
    `out op= expr` lines that do not depend on each other; else None."""
    if not outputs and statements:
        return None
    values: dict[str, str] = {}
    for statement_ in statements:
        if not isinstance(statement_, cst.SimpleStatementLine) or len(statement_.body) != 1:
            return None
        small = statement_.body[0]
        if (
            isinstance(small, cst.Assign)
            and len(small.targets) == 1
            and isinstance(small.targets[0].target, cst.Name)
        ):
            name = small.targets[0].target.value
            expression = _expression_code(ctx, small.value)
            used = reads(small.value)
        elif isinstance(small, cst.AugAssign) and isinstance(small.target, cst.Name):
            name = small.target.value
            expression = _augmented_expression(ctx, small)
            used = reads(small.value) | {name}
        else:
            return None
        if _walrus_target(small) is not None:
            return None  # a lambda would bind the `:=` name locally
        if name not in outputs or name in values or used & set(values) or "\n" in expression:
            return None
        values[name] = expression
    return [values.get(name, name) for name in outputs]


def _walrus_target(node: cst.CSTNode) -> str | None:
    """The name the first `:=` in `node` binds in the enclosing scope (one
    inside a nested function or lambda binds there, and does not count)."""
    for current in iter_nodes(node, into_functions=False):
        if isinstance(current, cst.NamedExpr) and isinstance(current.target, cst.Name):
            return current.target.value
    return None


def _assignment_order(statements: Sequence[Statement]) -> list[str]:
    """Names assigned in `statements`, in the order of their first assignment."""
    return assigned_in_order(cst.Module(body=list(statements)))


def _order_key(statements: Sequence[Statement], outputs: list[str]):  # type: ignore[no-untyped-def]
    order = [*outputs, *_assignment_order(statements)]

    def key(name: str) -> int:
        return order.index(name) if name in order else len(order)

    return key


def _final_assignment(
    statements: Sequence[Statement], name: str
) -> tuple[cst.SimpleStatementLine, cst.Assign] | None:
    """The last top-level `name = value` of a branch, when it is the last
    thing that binds `name` there."""
    for statement_ in reversed(statements):
        if name not in assigned_names(cst.Module(body=[statement_])):
            continue
        if isinstance(statement_, cst.SimpleStatementLine) and len(statement_.body) == 1:
            small = statement_.body[0]
            if (
                isinstance(small, cst.Assign)
                and len(small.targets) == 1
                and isinstance(small.targets[0].target, cst.Name)
            ):
                return statement_, small
        return None
    return None


def _incoming_value(name: str, place: Placement) -> cst.BaseExpression | None:
    """The value of the last plain `name = value` that surely runs before
    the statement (None when unknown or a parameter)."""
    found: cst.BaseExpression | None = None
    for body, index in place.blocks:
        for statement_ in body[:index]:
            if name not in assigned_names(cst.Module(body=[statement_])):
                continue
            final = _final_assignment([statement_], name)
            found = final[1].value if final is not None else None
    return found


RULES = (TensorIf,)
