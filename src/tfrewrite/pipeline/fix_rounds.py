"""Fix rounds: find, fix, re-parse and find again until nothing changes, and
what `check` says of them.

A fix can enable another (a `np.random` call fixed in a branch lets the tensor
`if` around it become a `tf.cond` in the next round), and a chain is
converted inside out, one level a round. Two promises rest on running the
rounds to the end:

- `check`'s "N fixable" is what `fix` then fixes (see `fix_outcome`): when
  fixes nest or overlap other findings, or a fix decorates a train step or
  removes a loss's decorator, `check` runs the rounds in memory and reports
  what they would do;
- a function is never left half rewritten: when the tensor `if` around
  conditionals that the rounds converted turns out to be refused (for a
  reason only the converted code shows, or one no other fix removes), the
  rounds run again without converting any tensor conditional of that
  function (it needs AutoGraph all the same), each refused with that reason.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import libcst as cst

from tfrewrite.findings import Applicability
from tfrewrite.pipeline.cache import PROJECT_FACT_FIELDS
from tfrewrite.pipeline.decoration_gate import Found, find_violations, gate_decorations
from tfrewrite.pipeline.fix_outcome import (
    Spot,
    counterparts,
    fixes_interact,
    original_lines,
    resolved,
)
from tfrewrite.pipeline.parsing import parse_module
from tfrewrite.pipeline.run_options import FileJob, RunOptions
from tfrewrite.pipeline.suppression import NoqaMap
from tfrewrite.rewrite.fixes import CstFix
from tfrewrite.workspace.line_names import line_name

if TYPE_CHECKING:
    from collections.abc import Callable

    from tfrewrite.facts.context import RuleContext
    from tfrewrite.facts.index import ModuleIndex
    from tfrewrite.facts.traced_function import TracedFunction
    from tfrewrite.rules.base import Rule

    # The rules of the run that can fire in a file, given its index and
    # traced functions (`rule_pass.applicable_rules`): asked again after
    # every round, since a fix can make code traced that no rule looked at
    # before.
    RulesFor = Callable[[str, ModuleIndex, dict[str, TracedFunction], RunOptions], list[Rule]]

# Most files settle in one to three rounds; a deeply nested `if`/`elif`
# ladder converts one level per round, so leave room for it.
MAX_FIX_ROUNDS = 32
TENSOR_IF = "TFR101"
# How a tensor `if` waiting for the conditionals inside it says so.
WAITING = "(after the tensor conditionals inside it)"
# How often the rounds restart to leave one more enclosing `if` whole: each
# restart withholds every conditional inside the refused ones found so far.
MAX_RESTARTS = 4


@dataclass
class Settled:
    """Fix rounds run to their end: the findings of the first round (the file
    as given), which of them the rounds resolved, and the last round's
    module, text and findings."""

    first: list[Found]
    held: set[int]
    first_module: cst.Module
    module: cst.Module
    code: str
    final: list[Found]
    resolved: list[int] = field(default_factory=list)
    error: str | None = None


@dataclass(frozen=True)
class _Withheld:
    """A refused tensor `if` around conditionals the rounds converted (its
    lines in the file as given), its refusal, and the lines of the function
    around it: no conditional of that function is converted, since the
    function keeps needing AutoGraph for this one."""

    first_line: int
    last_line: int
    message: str
    function_first: int
    function_last: int


def settle(
    path: str,
    module: cst.Module,
    code: str,
    index: ModuleIndex,
    traced: dict[str, TracedFunction],
    rules: Sequence[Rule],
    options: RunOptions,
    rules_for: RulesFor,
) -> Settled:
    """Find, and with `options.fix` apply fixes round after round until
    nothing changes; restart without the conversions that would leave a
    function half rewritten. `rules_for` chooses the rules of each round
    after the first."""
    withheld: list[_Withheld] = []
    for _restart in range(MAX_RESTARTS + 1):
        settled = _rounds(path, module, code, index, traced, rules, options, rules_for, withheld)
        if settled.error is not None or not options.fix:
            return settled
        more = _half_rewritten(code, settled)
        if not more:
            break
        withheld += more
    return settled


def _rounds(
    path: str,
    module: cst.Module,
    code: str,
    index: ModuleIndex,
    traced: dict[str, TracedFunction],
    rules: Sequence[Rule],
    options: RunOptions,
    rules_for: RulesFor,
    withheld: Sequence[_Withheld],
) -> Settled:
    """The rounds themselves. Traced context is re-derived every round
    (`_reindex`), and with it the rules that can fire (`rules_for`):
    a step decorated or extracted in the last round makes its callees
    traced, and steps still undecorated are checked as the traced code they
    will be."""
    original = code
    settled: Settled | None = None
    own_fix_applied: set[int] = set()
    for _round in range(MAX_FIX_ROUNDS + 1):
        ctx, raw = _found_in(path, module, code, index, traced, rules, options)
        found, held = gate_decorations(raw, ctx, options)
        if withheld:
            found = _withhold(found, withheld, original, code)
        if settled is None:
            settled = Settled(found, held, module, module, code, found)
        settled.module, settled.code, settled.final = module, code, found
        positions = [
            i
            for i, f in enumerate(found)
            if f.violation.fix is not None
            and options.allows(f.violation.fix.applicability)
            and id(f) not in held
        ]
        fixable = [found[i].violation.fix for i in positions]
        if not options.fix or not fixable or _round == MAX_FIX_ROUNDS:
            break  # the last round only reports what is left
        # LibCST's codemod machinery is slow to import: only when fixing.
        from tfrewrite.pipeline.fixer import apply_fixes

        new_module, applied = apply_fixes(module, fixable)  # type: ignore[arg-type]
        if not applied:
            break
        if _round == 0:
            own_fix_applied = {positions[i] for i in applied}
        new_code = new_module.code
        try:
            module = parse_module(new_code)
        except cst.ParserSyntaxError as err:
            settled.error = (
                "internal error: the fixes produced code that does not parse "
                f"({err.message}); file left unchanged"
            )
            return settled
        code = new_code
        index, traced = _reindex(new_code, index, traced)
        # The fixes may have made code traced (a step extracted or
        # decorated): rules that could not fire before may now.
        rules = rules_for(path, index, traced, options)
    assert settled is not None
    # Fixed: a finding whose own fix was applied (what is found there
    # afterwards is a new finding), or one that is gone, whichever fix did it.
    vanished = resolved(
        original, [spot(f) for f in settled.first], settled.code, [spot(f) for f in settled.final]
    )
    settled.resolved = sorted(own_fix_applied | set(vanished))
    return settled


def _reindex(
    code: str, previous: ModuleIndex, traced: dict[str, TracedFunction]
) -> tuple[ModuleIndex, dict[str, TracedFunction]]:
    """Index a file again after a fix round. Facts only the whole project
    could derive (a loss decorated in another module, a loop elsewhere that
    calls a step) are carried over from the previous round; those the file
    alone gives are derived again: a fix may make functions traced (a
    decorated or extracted train step, and its callees), or stop one from
    running traced (a loss whose `@tf.function` was removed, and what only it
    made traced)."""
    from tfrewrite.facts.index import build_index
    from tfrewrite.facts.project import compute_facts

    # A notebook's cells keep the starts they had before the round: what
    # names a line in a fact only (findings are placed in the fixed cells).
    index = build_index(
        code, previous.path, previous.module, previous.star_names, previous.cell_starts
    )
    # The loops of other modules that call this one's methods, which the
    # facts of this module alone are derived with below.
    index.loop_method_names = dict(previous.loop_method_names)
    if previous.pruned is not None:
        # The code is a pruned check's (`rule_pass._relevant_code`): the
        # functions left out keep their facts.
        from tfrewrite.pipeline.relevant_code import merge_carried

        pruned = previous.pruned
        merge_carried(index, pruned.carried_index(), pruned.pruned)
        index.pruned = pruned
    # A function whose own `@tf.function` the round removed (a loss, TFR301)
    # keeps every other context it runs traced in, and so does what it calls.
    local = compute_facts([index]).for_path(previous.path)
    undecorated = [
        rest
        for qualname, known in traced.items()
        if known.has_own_decorator
        and qualname in index.functions
        and not (qualname in local and local[qualname].has_own_decorator)
        and (rest := known.without_own_decorator()) is not None
    ]
    # A function traced for reasons of other modules (a layer's `call` there
    # calls it) passes that on to what it calls and to the functions nested
    # in it, among them the branch functions a round just extracted.
    foreign = [
        known
        for qualname, known in traced.items()
        if not known.local_reasons_only and qualname in index.functions and qualname not in local
    ]
    if undecorated or foreign:
        carried = [(index, rest) for rest in [*undecorated, *foreign]]
        local = compute_facts([index], carried).for_path(previous.path)
    # What only the whole project could tell (`cache.PROJECT_FACT_FIELDS`)
    # stays as the project found it, beside what this round found.
    for name in PROJECT_FACT_FIELDS:
        before, now = getattr(previous, name), getattr(index, name)
        if name == "custom_schedules":
            # Another module's schedules stay as the project found them; this
            # one's are as the round left them (a `tf.cond` rewrite removes
            # its branch).
            merged_value: object = [
                *(s for s in before if s[0] != previous.path),
                *(s for s in now if s[0] == previous.path),
            ]
        elif isinstance(before, dict):
            merged_value = {**before, **now}
        elif isinstance(before, (set, frozenset)):
            merged_value = before | now
        else:
            merged_value = before or now
        setattr(index, name, merged_value)
    merged = dict(local)
    for rest in undecorated:
        merged[rest.qualname] = rest
    kept = {rest.qualname for rest in undecorated}
    for qualname, known in traced.items():
        if qualname not in index.functions or qualname in kept:
            continue
        now = local.get(qualname)
        if now is None and known.local_reasons_only:
            continue  # its own module traced it, and no longer does
        if now is None or (known.pending and now.pending):
            merged[qualname] = known  # what only other modules could tell
        elif not known.pending:
            merged[qualname] = dataclasses.replace(known, is_loss=known.is_loss or now.is_loss)
        # else: pending before, traced for real now (a decorated step)
    return index, merged


# The file states the rules last ran on, and what they found. `check` runs
# the rounds up to three times from the same parsed module (its own
# findings, then what `fix` and `fix --unsafe-fixes` would do): the first
# round of each sees the same module, index and traced facts, so it is found
# once. Keys hold the objects themselves, so their ids cannot be reused.
_ROUNDS_KEPT = 4
_recent_rounds: list[tuple[tuple[object, ...], RuleContext, list[Found]]] = []


def forget_rounds() -> None:
    """Drop the kept file states and walks: a worker holds no tree after its
    file."""
    from tfrewrite.facts.walk import forget_walks

    _recent_rounds.clear()
    forget_walks()


def _found_in(
    path: str,
    module: cst.Module,
    code: str,
    index: ModuleIndex,
    traced: dict[str, TracedFunction],
    rules: Sequence[Rule],
    options: RunOptions,
) -> tuple[RuleContext, list[Found]]:
    """The rules' findings in `module`, before the decoration gate (which
    depends on the fixes `options` allow), with the context they ran in."""
    from tfrewrite.facts.context import RuleContext

    key = (module, index, traced, options.rule_settings, *rules)
    for known, ctx, found in _recent_rounds:
        if len(known) == len(key) and all(a is b for a, b in zip(known, key, strict=True)):
            return ctx, list(found)
    ctx = RuleContext(path, module, index, traced, dict(options.rule_settings))
    found = find_violations(rules, ctx, NoqaMap(code))
    _recent_rounds.insert(0, (key, ctx, found))
    del _recent_rounds[_ROUNDS_KEPT:]
    return ctx, list(found)


def spot(found: Found) -> Spot:
    return Spot(found.rule.code, found.start.line, found.end.line)


def _is_conditional(found: Found) -> bool:
    return found.rule.code == TENSOR_IF and isinstance(found.violation.node, (cst.If, cst.IfExp))


def _half_rewritten(original: str, settled: Settled) -> list[_Withheld]:
    """The refused tensor `if`s of the last round around conditionals the
    rounds converted, as lines of the file as given."""
    if settled.code == original:
        return []
    before = [spot(f) for f in settled.first]
    after = [spot(f) for f in settled.final]
    pairs = counterparts(original, before, settled.code, after)
    converted = [
        before[i]
        for i in set(range(len(before))) - set(pairs.values())
        if _is_conditional(settled.first[i])
    ]
    found = []
    functions: list[tuple[int, int]] | None = None
    for position, first in pairs.items():
        refused = settled.final[position]
        if not _is_conditional(refused) or refused.violation.fix is not None:
            continue
        outer = before[first]
        if any(
            outer.first_line < inner.first_line and inner.last_line <= outer.last_line
            for inner in converted
        ):
            if functions is None:
                functions = _function_lines(settled.first_module)
            around = [f for f in functions if f[0] <= outer.first_line and outer.last_line <= f[1]]
            start, end = max(around) if around else (outer.first_line, outer.last_line)
            found.append(
                _Withheld(outer.first_line, outer.last_line, _as_given(refused), start, end)
            )
    return found


def _function_lines(module: cst.Module) -> list[tuple[int, int]]:
    """First and last line of every function in `module`."""
    from tfrewrite.facts.walk import iter_nodes
    from tfrewrite.workspace.positions import node_ranges

    functions = [n for n in iter_nodes(module) if isinstance(n, cst.FunctionDef)]
    return [(r.start.line, r.end.line) for r in node_ranges(module, functions)]


def _as_given(refused: Found) -> str:
    """The refusal of an `if` whose inner conditionals stay as written. A
    dtype mismatch is one the conversion made (a `tf.cond` turns Python
    numbers into tensors): say so, since the code as written shows none."""
    message = refused.violation.message
    if "dtype" in message:
        message += " (once the conditionals inside it are rewritten)"
    return message


def _root_reason(message: str) -> str:
    """The reason in a refusal, without the "a tensor `if` inside it cannot be
    rewritten" a nesting level adds: the message stays one size at any depth."""
    reason = message.split("cannot be rewritten as `tf.cond`: ", 1)[-1]
    for what in ("`if`", "conditional expression"):
        reason = reason.removeprefix(f"a tensor {what} inside it cannot be rewritten: ")
    return reason


def _withhold(
    found: list[Found], withheld: Sequence[_Withheld], original: str, code: str
) -> list[Found]:
    """Refuse the tensor conditionals of the function around a withheld
    `if`: the `if` itself with the refusal the rounds found for it, the
    others with that reason (said once, however deep the nesting)."""
    ranges = original_lines(original, code) if code != original else None
    result = []
    for f in found:
        # A conditional refused for a reason of its own keeps it.
        convertible = f.violation.fix is not None or f.violation.message.endswith(WAITING)
        if _is_conditional(f) and convertible:
            line = f.start.line
            low, high = ranges[min(line, len(ranges) - 1)] if ranges else (line, line)
            around = [w for w in withheld if w.function_first <= low and high <= w.function_last]
            if around:
                inside = [w for w in around if w.first_line <= low and high <= w.last_line]
                outer = max(inside or around, key=lambda w: w.first_line)
                what = (
                    "conditional expression" if isinstance(f.violation.node, cst.IfExp) else "`if`"
                )
                if low == high == outer.first_line:
                    message = outer.message
                elif inside:
                    message = (
                        f"Python {what} on a tensor needs AutoGraph, and cannot be rewritten as "
                        "`tf.cond` on its own: the tensor `if` around it cannot be "
                        f"({_root_reason(outer.message)})"
                    )
                else:
                    message = (
                        f"Python {what} on a tensor needs AutoGraph, and is not rewritten as "
                        "`tf.cond` on its own: the function needs AutoGraph all the same for "
                        f"the tensor `if` on {line_name(outer.first_line)}, which cannot be "
                        f"rewritten ({_root_reason(outer.message)})"
                    )
                f = dataclasses.replace(
                    f, violation=dataclasses.replace(f.violation, message=message, fix=None)
                )
        result.append(f)
    return result


def _with_fix(found: Found, fix: CstFix | None) -> Found:
    return dataclasses.replace(found, violation=dataclasses.replace(found.violation, fix=fix))


def as_fix_would_do(
    path: str,
    module: cst.Module,
    code: str,
    job: FileJob,
    rules: Sequence[Rule],
    found: list[Found],
    held: set[int],
    rules_for: RulesFor,
) -> list[Found]:
    """`check`'s findings, each fixable exactly when `fix` would fix it, so
    "N fixable" is what `fix` then fixes. Disjoint fixes resolve their own
    findings; when fixes nest or overlap other findings, or a fix decorates a
    train step or removes a decorator, the fix rounds run here (nothing is
    written) and decide: a
    finding another fix resolves becomes fixable ("fixed along with the fix on
    line N"), a fix that would not resolve its finding is not offered. Without
    `--unsafe-fixes`, the unsafe fixes are decided the same way, so "N more
    with `--unsafe-fixes`" is what `fix --unsafe-fixes` then fixes besides."""
    options = job.options
    found, fixed = _offer(path, module, code, job, rules, found, held, options, rules_for, None)
    if options.unsafe_fixes:
        return found
    unsafe = dataclasses.replace(options, unsafe_fixes=True)
    undecided = {
        i
        for i, f in enumerate(found)
        if i not in fixed
        and (f.violation.fix is None or f.violation.fix.applicability is Applicability.UNSAFE)
    }
    if not _unsafe_fixes_interact(found, undecided):
        return found  # each unsafe fix resolves its own finding, and nothing else
    return _offer(path, module, code, job, rules, found, set(), unsafe, rules_for, undecided)[0]


def _unsafe_fixes_interact(found: list[Found], undecided: set[int]) -> bool:
    """Whether the unsafe fixes may do more or less than resolve their own
    findings, so only the rounds tell what `fix --unsafe-fixes` does
    besides the safe fixes (whose rounds `as_fix_would_do` has run): a
    finding the safe fixes leave has no fix of its own (an unsafe one may
    resolve it), an unsafe fix changes what runs traced or is a tensor
    conditional's, or it interacts with another finding as `fixes_interact`
    judges. Otherwise each applies in the first round and resolves its own
    finding alone."""
    if any(
        found[i].violation.fix is None or _is_conditional(found[i]) or _changes_tracing(found[i])
        for i in undecided
    ):
        return True
    return fixes_interact(
        [spot(f) for f in found],
        [i in undecided for i in range(len(found))],
        [_is_conditional(f) for f in found],
    )


def _changes_tracing(found: Found) -> bool:
    """Whether a finding's fix decorates a train step or removes a
    decorator: it changes what runs traced, and so which findings stay."""
    from tfrewrite.rewrite.step_violation import StepViolation

    if found.rule.may_untrace:
        return True
    return isinstance(found.violation, StepViolation) and bool(found.violation.steps)


def _offer(
    path: str,
    module: cst.Module,
    code: str,
    job: FileJob,
    rules: Sequence[Rule],
    found: list[Found],
    held: set[int],
    options: RunOptions,
    rules_for: RulesFor,
    only: set[int] | None,
) -> tuple[list[Found], set[int]]:
    """`as_fix_would_do` for the fixes `options` allow, changing only the
    findings at positions `only` (all when None); also returns the positions
    of the findings offered as fixable."""

    def fixable_of(findings: list[Found], waiting: set[int]) -> list[bool]:
        return [
            f.violation.fix is not None
            and options.allows(f.violation.fix.applicability)
            and id(f) not in waiting
            for f in findings
        ]

    fixable = fixable_of(found, held)
    # A fix that decorates a step, or removes a decorator, changes what runs
    # traced, and so which findings stay: only the rounds tell.
    decorating = any(a and _changes_tracing(f) for f, a in zip(found, fixable, strict=True))
    # A finding whose fix a later round offers, once another's fix lands.
    waiting = any(f.violation.waits_for is not None for f in found)
    spots = [spot(f) for f in found]
    fixed: set[int] | None = None
    conditional = [_is_conditional(f) for f in found]
    if any(fixable) and (decorating or waiting or fixes_interact(spots, fixable, conditional)):
        simulated = settle(
            path,
            module,
            code,
            job.index,
            job.traced,
            rules,
            dataclasses.replace(options, fix=True),
            rules_for,
        )
        if simulated.error is None:
            found = [
                simulated.first[i] if only is None or i in only else f for i, f in enumerate(found)
            ]
            held = simulated.held
            fixable = fixable_of(found, held)
            fixed = set(simulated.resolved)
    if held:
        # A fix waiting for a decoration that is not allowed applies only
        # together with it: offered as that decoration is.
        found = [
            _with_fix(f, dataclasses.replace(f.violation.fix, applicability=Applicability.UNSAFE))
            if id(f) in held and f.violation.fix is not None
            else f
            for f in found
        ]
    if fixed is None:
        return found, {i for i, a in enumerate(fixable) if a}
    carriers = [i for i in range(len(found)) if fixable[i]]
    result = []
    for i, f in enumerate(found):
        if only is not None and i not in only:
            pass
        elif i in fixed and not fixable[i] and carriers:
            # The fix that resolves it: an enclosing or enclosed one, else the nearest.
            carrier = found[
                min(
                    carriers,
                    key=lambda j: (
                        spots[j].last_line < spots[i].first_line
                        or spots[i].last_line < spots[j].first_line,
                        abs(spots[j].first_line - spots[i].first_line),
                    ),
                )
            ]
            fix = carrier.violation.fix
            assert fix is not None
            line = carrier.start.line
            message = f.violation.message
            if not message.endswith(WAITING):
                message += f" (until the fix on {line_name(line)} is applied)"
            via = CstFix(
                f"Fixed along with the fix on {line_name(line)}", (), (), fix.applicability
            )
            f = dataclasses.replace(
                f, violation=dataclasses.replace(f.violation, message=message, fix=via)
            )
        elif i not in fixed and fixable[i]:
            f = _with_fix(f, None)
        if only is not None and i in only and i in fixed:
            f = _unsafe_only(f)
        result.append(f)
    return result, fixed


def _unsafe_only(found: Found) -> Found:
    """A finding the safe fixes leave, fixed once the unsafe ones apply (a
    tensor `if` rewritable after the `print` in its branch is): its fix is
    unsafe, whatever its own applicability."""
    fix = found.violation.fix
    if fix is None or fix.applicability is not Applicability.SAFE:
        return found
    message = f"{fix.message} (unsafe: it applies only together with unsafe fixes)"
    return _with_fix(
        found, dataclasses.replace(fix, message=message, applicability=Applicability.UNSAFE)
    )
