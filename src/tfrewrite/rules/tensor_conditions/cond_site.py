"""One tensor conditional being rewritten, and what its rewrites share.

A `CondSite` holds the function around the conditional and its facts (tensor
facts, the names declared `global`/`nonlocal`, the nested functions and what
they read), checks that a branch can move into a function or lambda, and
names and parameterises branch functions. The statement rewrites
(`cond_returns`, `cond_assign`) work through it.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property

import libcst as cst

from tfrewrite.facts.block_exits import Statement
from tfrewrite.facts.context import FunctionScope, RuleContext
from tfrewrite.facts.import_requests import ImportRequest
from tfrewrite.facts.tensors import TensorFacts
from tfrewrite.facts.walk import child_nodes, iter_nodes
from tfrewrite.rules.tensor_conditions.cond_codegen import Refusal
from tfrewrite.rules.tensor_conditions.cond_condition import ConditionTranslator
from tfrewrite.rules.tensor_conditions.cond_flow import (
    Placement,
    assigned_in_order,
    assigned_names,
    closure_reads,
    defined_before,
    definitely_assigned,
    live_after,
    named_closures,
    read_before_assigned,
    reads,
    rebinding_closures,
    scope_declarations,
    statement_flow,
)
from tfrewrite.rules.tensor_conditions.cond_shapes import ShapeGuards
from tfrewrite.rules.tensor_conditions.cond_uses import StatementUses, statement_uses

# Functions that call the branch functions given to them before they return.
COND_FUNCTIONS = frozenset({"tensorflow.cond", "keras.ops.cond", "tensorflow.keras.ops.cond"})


class CondSite:
    """The function around a tensor conditional, with the facts its rewrite needs."""

    def __init__(
        self,
        rule_ctx: RuleContext,
        scope: FunctionScope,
        facts: TensorFacts,
        tf: str,
        imports: tuple[ImportRequest, ...],
        assume_scalar: bool = False,
    ) -> None:
        self.ctx = rule_ctx
        self.scope = scope
        self.facts = facts
        self.tf = tf
        self.imports = imports
        self.translator = ConditionTranslator(facts, tf, rule_ctx.code, assume_scalar)
        self.current: cst.If | None = None
        # `statement_uses` per statement of the function (held with its node).
        self._uses: dict[int, tuple[cst.CSTNode, StatementUses]] = {}
        self._flows: dict[int, tuple[cst.CSTNode, tuple[frozenset[str], frozenset[str]]]] = {}
        # Why the rewrite being built cannot be a safe fix (reset per conditional).
        self.unsafe: list[str] = []

    def note_unsafe(self, reason: str | None) -> None:
        """Record why the rewrite being built is not proven (None: nothing)."""
        if reason is not None and reason not in self.unsafe:
            self.unsafe.append(reason)

    @cached_property
    def shape_guards(self) -> ShapeGuards:
        """What conditions of the function test of values' shapes (once per
        function: it gathers the bindings of the function's names)."""
        return ShapeGuards(self.scope.node, self.ctx.names, self.ctx.code)

    @cached_property
    def declarations(self) -> set[str]:
        return scope_declarations(self.scope.node)

    @cached_property
    def closure_reads(self) -> set[str]:
        names = self.ctx.names
        return closure_reads(
            self.scope.node, lambda call: names.qualified_name(call.func) in COND_FUNCTIONS
        )

    @cached_property
    def named_closures(self) -> dict[str, set[str]]:
        return named_closures(self.scope.node)

    def uses_of(self, statement: cst.CSTNode) -> StatementUses:
        """`statement_uses(statement)`, gathered once per statement."""
        known = self._uses.get(id(statement))
        if known is None:
            known = self._uses[id(statement)] = (statement, statement_uses(statement))
        return known[1]

    def flow_of(self, statement: Statement) -> tuple[frozenset[str], frozenset[str]]:
        """`statement_flow(statement)`, gathered once per statement."""
        known = self._flows.get(id(statement))
        if known is None:
            known = self._flows[id(statement)] = (statement, statement_flow(statement))
        return known[1]

    def live_after(self, place: Placement) -> set[str]:
        return live_after(place, self.flow_of)

    def defined_before(self, place: Placement) -> set[str]:
        return defined_before(place, self.flow_of)

    @cached_property
    def rebinding_closures(self) -> dict[str, set[str]]:
        """Once per function, not once per branch: a function with many
        conditionals would be walked once for each."""
        return rebinding_closures(self.scope.node)

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
        rebinding = self.rebinding_closures
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

    def nested_tensor_conditionals(
        self, node: cst.CSTNode
    ) -> list[tuple[cst.CSTNode, tuple[cst.CSTNode, ...]]]:
        """Tensor conditionals inside `node` in the same scope (those in a
        nested function or lambda are rewritten, or refused, on their own),
        each with the nodes between `node` and it (outermost first): where a
        conditional sits decides how it is replaced (an `elif` cannot become
        several statements)."""
        found: list[tuple[cst.CSTNode, tuple[cst.CSTNode, ...]]] = []
        stack: list[tuple[cst.CSTNode, tuple[cst.CSTNode, ...]]] = [
            (child, ()) for child in child_nodes(node)
        ]
        while stack:
            current, between = stack.pop()
            if isinstance(current, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
                continue
            if (
                isinstance(current, (cst.If, cst.IfExp))
                and self.translator.translate(current.test, current).tensor
            ):
                found.append((current, between))
            inner = (*between, current)
            stack.extend((child, inner) for child in child_nodes(current))
        return found

    def indent_of(self, place: Placement) -> int:
        """Roughly how deep the new statements sit (for line lengths): one
        level per enclosing class or function, one per block."""
        return 4 * (self.scope.qualname.count(".") + len(place.blocks))

    def params(
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

    def function_name(self, side: str, outputs: list[str], place: Placement) -> str:
        """`_loss_if_true` for one output, else `_true_fn`; a name the code
        around already uses for something live gets a number. (Branch
        functions are used right where they are defined, so two `tf.cond`s
        may each define their own `_true_fn`.)"""
        base = f"_{outputs[0].lstrip('_')}_if_{side}" if len(outputs) == 1 else f"_{side}_fn"
        assert self.current is not None
        taken = self.live_after(place) | reads(self.current) | assigned_names(self.current)
        name, n = base, 2
        while name in taken:
            name = f"{base}_{n}"
            n += 1
        return name


def assignment_order(statements: Sequence[Statement]) -> list[str]:
    """Names assigned in `statements`, in the order of their first assignment."""
    return assigned_in_order(cst.Module(body=list(statements)))


def _order_key(statements: Sequence[Statement], outputs: list[str]):  # type: ignore[no-untyped-def]
    order = [*outputs, *assignment_order(statements)]

    def key(name: str) -> int:
        return order.index(name) if name in order else len(order)

    return key
