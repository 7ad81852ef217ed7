"""What the rules found in one file, and the gate on fixes that decorate a
train step: such a fix applies only together with fixes for everything the
step (and what it calls) would then do differently; otherwise the step
stays eager and the finding lists every blocker with its line.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tfrewrite.facts.eager_callables import within
from tfrewrite.findings import Applicability, Position
from tfrewrite.pipeline.suppression import NoqaMap
from tfrewrite.workspace.line_names import line_name, line_names

if TYPE_CHECKING:
    import libcst as cst

    from tfrewrite.facts.context import RuleContext
    from tfrewrite.pipeline.run_options import RunOptions
    from tfrewrite.rewrite.fixes import Violation
    from tfrewrite.rules.base import Rule


def _positions(ctx: RuleContext, nodes: Sequence[cst.CSTNode]) -> list[tuple[Position, Position]]:
    return [
        (
            Position(r.start.line, r.start.column + 1),
            Position(r.end.line, r.end.column + 1),
        )
        for r in ctx.ranges(nodes)
    ]


@dataclass(frozen=True)
class Found:
    """A rule's violation with its place in the file."""

    rule: Rule
    violation: Violation
    start: Position
    end: Position


def find_violations(rules: Sequence[Rule], ctx: RuleContext, noqa: NoqaMap) -> list[Found]:
    """Run the rules; drop what `# noqa` suppresses, and findings about
    traced code inside a lambda handed to `tf.py_function` (it runs
    eagerly). Positions are computed only when something was found."""
    pairs = [(rule, v) for rule in rules for v in rule.check(ctx)]
    if not pairs:
        return []
    spans = _positions(ctx, [v.node for _, v in pairs])
    eager = ctx.index.eager_spans
    return [
        Found(rule, v, start, end)
        for (rule, v), (start, end) in zip(pairs, spans, strict=True)
        if not noqa.suppresses(start.line, rule.code)
        and not (eager and rule.needs_traced_code and within(eager, start.line, start.column))
    ]


def first_clause(message: str) -> str:
    """A finding's message up to its first sentence or colon break."""
    cut = min((i for i in (message.find(". "), message.find(": ")) if i > 0), default=-1)
    return message if cut < 0 else message[:cut]


def gate_decorations(
    found: list[Found], ctx: RuleContext, options: RunOptions
) -> tuple[list[Found], set[int]]:
    """A fix that decorates a train step applies only together with fixes for
    everything the step, and what it calls, then does differently: the
    findings of rules on traced code inside them (they check a step about to
    be decorated, and its callees, as traced: `FunctionScope.pending`) and the
    blockers the decorating rule found
    itself. When one cannot be fixed, the decorating fix is withdrawn, the
    finding lists every blocker with its line; the findings inside the step
    (which stays eager) are not reported on their own, except in code that
    runs traced today, where they stay findings without their fixes. Returns the
    findings and the ids of those whose fixes must wait because the
    decoration does not apply yet (unsafe, not allowed: they would change
    eager code). Fixes in code that runs traced only once a step is
    decorated wait too when no rule of the run decorates steps: alone, they
    would change eager code that the full run leaves as it is."""
    from tfrewrite.rewrite.step_violation import StepViolation

    found = [_unfixed_steps_withheld(f, ctx) for f in found]
    # Each fix that decorates or extracts steps, with the contexts the
    # project facts give what those steps reach.
    gated = [(f, contexts) for f in found if (contexts := _step_contexts(f, ctx)) is not None]
    # With no rule of the run decorating steps (one rule selected alone),
    # nothing will: fixes in code that runs traced only once a step is
    # decorated would change eager code. Otherwise the step's decoration,
    # here or in the file of the step, brings them.
    decorating = any(rule.decorates_steps for rule in options.rules())
    waiting = set() if decorating else _pending_only(_fixable_in_traced_code(found), ctx)
    if not gated:
        return found, waiting
    callees = ctx.lines([f.node for f in ctx.functions if f.pending is not None])
    held: set[int] = set()
    covered: set[int] = set()
    dropped: set[int] = set()
    replaced: dict[int, Found] = {}
    for gate, contexts in gated:
        violation = gate.violation
        assert violation.fix is not None
        steps = violation.steps if isinstance(violation, StepViolation) else ()
        spans = ctx.lines(steps) + callees if steps else []
        inside = [
            f
            for f in found
            if f.rule.needs_traced_code
            and f.rule.blocks_decoration
            and any(a <= f.start.line <= b for a, b in spans)
        ]
        covered.update(id(f) for f in inside)
        problems = {
            (f.start.line, f"{f.rule.code} {first_clause(f.violation.message)}")
            for f in inside
            if f.violation.fix is None and not _autograph_converts(f)
        }
        # What the step reaches that runs traced already (a Keras model's
        # `call`): its findings hold once the step is traced too.
        reached = _reached(found, ctx, contexts, inside)
        problems |= {
            (f.start.line, f"in `{where}`: {f.rule.code} {first_clause(f.violation.message)}")
            for f, where in reached
            if f.violation.fix is None and not _autograph_converts(f)
        }
        foreign = sorted(
            {
                blocker
                for step in steps
                if (scope := ctx.scope_of(step)) is not None and scope.pending is not None
                for blocker in scope.pending.foreign_blockers
            }
        )
        reported = {line for line, _ in problems}
        intents: set[tuple[int, str]] = set()  # the author's choices against tracing
        blockers = violation.blockers if isinstance(violation, StepViolation) else ()
        for blocker in blockers:
            if blocker.first_line in reported:
                continue  # a finding of its own already names it
            if blocker.intent:
                intents.add((blocker.first_line, blocker.what))
            elif not any(
                f.violation.fix is not None
                and blocker.first_line <= f.start.line <= blocker.last_line
                for f in inside
            ):
                problems.add((blocker.first_line, blocker.what))
        if problems or intents or foreign:
            names = ", ".join(f"`{step.name.value}`" for step in steps)
            fallback = violation.fallback if isinstance(violation, StepViolation) else None
            verdict = f"{names} stays eager" if fallback is not None else "no fix"
            reasons = []
            if problems:
                reasons.append(
                    "under tracing it would change meaning and cannot be rewritten: "
                    + _listing(_distinct(problems))
                )
            if foreign:
                reasons.append(
                    "it would trace code of other modules that would change meaning and"
                    " cannot be rewritten: " + "; ".join(foreign)
                )
            if intents:
                reasons.append(_listing(_distinct(intents)))
            message = f"{violation.message} ({verdict}: {'; and '.join(reasons)})"
            withheld = _qualnames(ctx, steps)
            new = dataclasses.replace(violation, message=message, fix=fallback)
            if withheld:
                new = dataclasses.replace(new, withheld=withheld)
            # What the step would do once traced is no hazard while it runs
            # eagerly: those findings are this one's blockers, not findings
            # of their own. Code that runs traced today keeps its findings.
            eager_only = _pending_only(inside, ctx)
            dropped |= eager_only
            for f in inside:
                if id(f) in replaced or id(f) in eager_only:
                    continue
                if f.violation.fix is not None:
                    note = f"not fixed while {names} stays eager"
                else:
                    # It speaks of the step as traced: say that it is not, yet.
                    note = f"once traced; {names} stays eager"
                kept = dataclasses.replace(
                    f.violation,
                    message=f"{f.violation.message} ({note}: see {gate.rule.code} on "
                    f"{line_name(gate.start.line)})",
                    fix=None,
                )
                replaced[id(f)] = dataclasses.replace(f, violation=kept)
        else:
            fix = violation.fix
            if any(
                f.violation.fix is not None
                and f.violation.fix.applicability is Applicability.UNSAFE
                for f in [*inside, *(f for f, _ in reached)]
            ):
                fix = dataclasses.replace(fix, applicability=Applicability.UNSAFE)
            new = dataclasses.replace(violation, fix=fix)
            if not options.allows(fix.applicability):
                held |= {id(f) for f in inside}
            # Code that runs eagerly today: its findings are what the
            # decoration brings, and say so.
            names = ", ".join(f"`{step.name.value}`" for step in steps)
            eager_only = _pending_only(inside, ctx)
            for f in inside:
                if id(f) in replaced or id(f) not in eager_only:
                    continue
                note = (
                    f"once `@tf.function` decorates {names}: see {gate.rule.code} on "
                    f"{line_name(gate.start.line)}"
                )
                kept = dataclasses.replace(f.violation, message=f"{f.violation.message} ({note})")
                replaced[id(f)] = dataclasses.replace(f, violation=kept)
        replaced[id(gate)] = dataclasses.replace(gate, violation=new)
    held |= waiting - covered
    kept = [f for f in found if id(f) not in dropped]
    result = [replaced.get(id(f), f) for f in kept]
    held_ids = {id(r) for f, r in zip(kept, result, strict=True) if id(f) in held}
    return result, held_ids


def _unfixed_steps_withheld(found: Found, ctx: RuleContext) -> Found:
    """A finding on train steps that its rule left without a fix: the steps
    stay eager, which other files learn (`StepViolation.withheld`)."""
    from tfrewrite.rewrite.step_violation import StepViolation

    violation = found.violation
    if not isinstance(violation, StepViolation) or violation.fix is not None:
        return found
    withheld = _qualnames(ctx, violation.steps)
    if not withheld or withheld == violation.withheld:
        return found
    return dataclasses.replace(found, violation=dataclasses.replace(violation, withheld=withheld))


def _qualnames(ctx: RuleContext, steps: Sequence[cst.FunctionDef]) -> tuple[str, ...]:
    """The qualnames of the steps a finding decorates, as its file names them."""
    return tuple(scope.qualname for step in steps if (scope := ctx.scope_of(step)) is not None)


def blocks_a_decoration(found: Found) -> bool:
    """Whether a finding keeps a step that would trace its code from being
    decorated: a rule on traced code that blocks decorations, and no fix
    rewrites it nor does AutoGraph convert it."""
    return (
        found.rule.needs_traced_code
        and found.rule.blocks_decoration
        and found.violation.fix is None
        and not _autograph_converts(found)
    )


def _autograph_converts(found: Found) -> bool:
    """Whether AutoGraph converts what a finding is about as it is written
    (`Rule.autograph_converts`, `Violation.autograph_converts`): a step
    decorated with it runs that as the original did."""
    return found.rule.autograph_converts or found.violation.autograph_converts


def _step_contexts(gate: Found, ctx: RuleContext) -> frozenset[str] | None:
    """The contexts the project facts give what a decorating fix's steps
    reach (`project.step_contexts`, `project.tape_block_context`): the
    steps a `StepViolation` decorates, or the tape block TFR303 extracts
    (the finding of a step-decorating rule on a `with`). None for any
    other finding, or one without a fix."""
    import libcst as cst

    from tfrewrite.facts.traced_function import step_contexts, tape_block_context
    from tfrewrite.rewrite.step_violation import StepViolation

    violation = gate.violation
    if violation.fix is None or not gate.rule.decorates_steps:
        return None
    if isinstance(violation, StepViolation):
        if not violation.steps:
            return None
        contexts: frozenset[str] = frozenset()
        for step in violation.steps:
            scope = ctx.scope_of(step)
            if scope is not None:
                contexts |= step_contexts(scope.qualname)
        return contexts
    if not isinstance(violation.node, cst.With):
        return None
    line = gate.start.line
    function = ctx.index.innermost_function(line)
    if function is None:
        return frozenset({tape_block_context(ctx.index, line)})
    return step_contexts(function)


def _reached(
    found: list[Found], ctx: RuleContext, contexts: frozenset[str], inside: list[Found]
) -> list[tuple[Found, str]]:
    """The findings of rules on traced code in the functions a step
    reaches that run traced already (`TracedFunction.contexts` names the
    step), with the qualname of the innermost such function: a Keras
    model's `call` runs eagerly when an eager loop calls the model, and
    traced in the step. A function with a `@tf.function` of its own runs
    traced either way: the step changes nothing there."""
    if not contexts:
        return []
    either_way = _traced_either_way(ctx)
    scopes = [
        scope
        for scope in ctx.functions
        if scope.traced is not None
        and scope.qualname not in either_way
        and not contexts.isdisjoint(scope.traced.contexts)
    ]
    if not scopes:
        return []
    spans = ctx.lines([scope.node for scope in scopes])
    skipped = {id(f) for f in inside}
    result = []
    for f in found:
        if id(f) in skipped or not (f.rule.needs_traced_code and f.rule.blocks_decoration):
            continue
        around = [
            (last - first, scope)
            for scope, (first, last) in zip(scopes, spans, strict=True)
            if first <= f.start.line <= last
        ]
        if around:
            result.append((f, min(around, key=lambda pair: pair[0])[1].qualname))
    return result


def _traced_either_way(ctx: RuleContext) -> set[str]:
    """Functions of this file that run traced whether or not a step is:
    those with a `@tf.function` of their own, and what such a function
    calls (`loss_fn` decorated calls `helper`). A fix may remove that
    decorator (TFR301), and a file checked afresh then sees no reason to
    trace the callee but the step: counting its findings against the step
    would refuse the step in one run and not in the next."""
    traced = {s.qualname: s.traced for s in ctx.functions if s.traced is not None}
    either_way = {q for q, t in traced.items() if t.has_own_decorator}
    changed = True
    while changed:
        changed = False
        for qualname, known in traced.items():
            if qualname not in either_way and any(
                caller in either_way for caller in known.traced_callers
            ):
                either_way.add(qualname)
                changed = True
    return either_way


def _fixable_in_traced_code(found: list[Found]) -> list[Found]:
    """The findings with a fix, of rules on traced code."""
    return [f for f in found if f.rule.needs_traced_code and f.violation.fix is not None]


def _pending_only(candidates: list[Found], ctx: RuleContext) -> set[int]:
    """Ids of the `candidates` whose innermost function runs traced only
    once a pending fix decorates a step (`FunctionScope.pending`), not
    today."""
    pending = [s for s in ctx.functions if s.pending is not None or s.traced is not None]
    if not candidates or not any(s.pending is not None for s in pending):
        return set()
    spans = ctx.lines([s.node for s in pending])
    result = set()
    for f in candidates:
        line = f.start.line
        around = [
            (last - first, scope)
            for scope, (first, last) in zip(pending, spans, strict=True)
            if first <= line <= last
        ]
        if around:
            innermost = min(around, key=lambda pair: pair[0])[1]
            if innermost.pending is not None and innermost.traced is None:
                result.add(id(f))
    return result


def _listing(problems: list[tuple[int, str]]) -> str:
    """Blockers in line order, one entry per kind: "line 9 calls Python
    `float()`", or, for a kind on several lines, "calls Python `print()`
    (lines 231-238, 240)": a debugging step that prints on thirty lines
    reads as one blocker, not thirty."""
    lines_of_kind: dict[str, list[int]] = {}
    for line, what in problems:
        lines_of_kind.setdefault(what, []).append(line)
    entries = []
    for what, lines in lines_of_kind.items():
        if len(lines) == 1:
            entries.append(f"{line_name(lines[0])} {what}")
        else:
            entries.append(f"{what} ({line_names(lines)})")
    return "; ".join(entries)


def _distinct(problems: set[tuple[int, str]]) -> list[tuple[int, str]]:
    """The blockers in line order, without an entry that a longer one on the
    same line spells out ("calls `logging.info`" beside "calls `logging.info`:
    Python logging runs once, ...")."""
    ordered = sorted(problems)
    return [
        (line, what)
        for line, what in ordered
        if not any(
            other_line == line and other != what and other.startswith(what)
            for other_line, other in ordered
        )
    ]
