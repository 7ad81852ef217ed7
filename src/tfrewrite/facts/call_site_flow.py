"""What call sites tell a function about its arguments: each call of a
project function hands the evidence it has (tensor, scalar, Python value)
to the parameters it fills, and forwarding functions pass it on, round
after round, until nothing new is learned.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tfrewrite.facts.call_evidence import SPLAT
from tfrewrite.facts.index_records import CallSite, FunctionInfo, ModuleIndex
from tfrewrite.facts.project_lookup import ProjectLookup
from tfrewrite.facts.traced_function import TraceMarks
from tfrewrite.workspace.line_names import path_line


@dataclass
class _Passed:
    """What one call site passes one target: per parameter, the site's own
    evidence (`given`), and the parameters it forwards from its caller
    (parameter -> (caller's key, caller's parameter))."""

    target: tuple[str, str]
    given: dict[str, str]
    where: str
    forwarded: dict[str, tuple[tuple[str, str], str]]
    # Per parameter filled with a list or tuple display: its elements' evidence.
    elements: dict[str, str] = field(default_factory=dict)
    # The function the call is in (None at module level).
    caller: tuple[str, str] | None = None

    def evidence(self, known: dict[tuple[str, str], dict[str, str]]) -> dict[str, str]:
        """`given`, with a forwarded parameter's evidence what the project
        knows its caller receives there, when it knows."""
        if not self.forwarded:
            return self.given
        given = dict(self.given)
        for name, (caller, param) in self.forwarded.items():
            found = known.get(caller, {}).get(param)
            if found is not None:
                given[name] = found
        return given


_FORWARDING_ROUNDS = 8


def site_targets(
    index: ModuleIndex, site: CallSite, lookup: ProjectLookup
) -> list[tuple[ModuleIndex, str]]:
    nested = _nested_callee(index, site)
    if nested:
        return [(index, nested)]
    targets = lookup.find(site.callee, index)
    if not targets and site.via_attribute:
        targets = lookup.held_callee(site.callee)
    return targets


def self_offset(site: CallSite, params: list[str]) -> int:
    """1 when the call binds the callee's first parameter (`self.step(x)`,
    a held object's method), else 0."""
    return 1 if site.via_attribute and params[:1] in (["self"], ["cls"]) else 0


def filled_parameter(argument: str, params: list[str], offset: int) -> str:
    """The parameter a site's argument fills: by position (a decimal
    string, after a bound `self`), else the keyword itself."""
    position = int(argument) + offset if argument.isdigit() else -1
    return params[position] if 0 <= position < len(params) else argument


def _passed(index: ModuleIndex, site: CallSite, target_index: ModuleIndex, target: str) -> _Passed:
    """Which parameter of `target` each argument of `site` fills."""
    params = target_index.functions[target].params
    offset = self_offset(site, params)
    given = dict(site.keywords)
    splat = given.pop(SPLAT, None)
    for i, evidence in enumerate(site.args):
        if i + offset < len(params):
            given.setdefault(params[i + offset], evidence)
    if splat is not None:  # `**self.config.kl` fills the rest
        for name in params[offset:]:
            given.setdefault(name, splat)
    forwarded: dict[str, tuple[tuple[str, str], str]] = {}
    for argument, param, owner in site.forwarded:
        name = filled_parameter(argument, params, offset)
        if name in given:
            forwarded[name] = ((index.path, owner), param)
    elements: dict[str, str] = {}
    for argument, codes in site.structures:
        elements[filled_parameter(argument, params, offset)] = codes
    where = path_line(index.path, site.lineno, index.cell_starts)
    caller = (index.path, site.caller) if site.caller else None
    return _Passed((target_index.path, target), given, where, forwarded, elements, caller)


def _received(
    info: FunctionInfo,
    passed: list[dict[str, str]],
    known: TraceMarks | None,
    single: bool = False,
) -> dict[str, str]:
    """What the project knows a function receives, per parameter: `t`/`s`
    when its tracer or every call site passes a tensor (a scalar), `p` when
    every site passes a Python value (a parameter a site leaves out has its
    default: a Python value, unless `FunctionInfo.tensor_defaults` says it is
    a tensor). With `single`, what a tracer's contract alone says (Keras
    hands `call` a tensor or a tuple of them) is left out: a tensor is one
    the sites, or an `input_signature`, give (`TraceMarks.single`)."""
    received: dict[str, str] = {}
    for name in info.caller_params:
        evidence = {site.get(name, info.default_evidence(name)) for site in passed}
        if evidence and evidence <= {"t", "s"}:
            received[name] = "s" if evidence == {"s"} else "t"
        elif evidence == {"p"}:
            received[name] = "p"
    if known is not None and single:
        received.update((name, "t") for name in known.single)
    elif known is not None:
        received.update((name, "t") for name in known.tensor - known.scalar)
        received.update((name, "s") for name in known.scalar & known.tensor)
    return received


def _forwarded_knowledge(
    passes: list[_Passed],
    by_path: dict[str, ModuleIndex],
    marks: dict[tuple[str, str], TraceMarks],
    single: bool = False,
) -> dict[tuple[str, str], dict[str, str]]:
    """What each function that forwards a parameter receives there, to a
    fixed point: `call(self, x, step)` forwards `step` to `scaled_noise`,
    and receives a tensor from `net(xb, counter)`; so does `scaled_noise`.
    Bounded rounds: a recursion (`f(x)` calling `f(x)`) ends unknown."""
    callers = {caller for p in passes for caller, _ in p.forwarded.values()}
    if not callers:
        return {}
    into: dict[tuple[str, str], list[_Passed]] = {caller: [] for caller in callers}
    for p in passes:
        if p.target in into:
            into[p.target].append(p)
    known: dict[tuple[str, str], dict[str, str]] = {}
    for _round in range(_FORWARDING_ROUNDS):
        updated = {}
        for caller in callers:
            info = by_path[caller[0]].functions.get(caller[1])
            if info is not None:
                given = [p.evidence(known) for p in into[caller]]
                updated[caller] = _received(info, given, marks.get(caller), single)
        if updated == known:
            break
        known = updated
    return known


def apply_call_sites(
    indexes: list[ModuleIndex], lookup: ProjectLookup, marks: dict[tuple[str, str], TraceMarks]
) -> None:
    """What call sites pass to traced functions: a parameter every call site
    passes a tensor is a tensor (a scalar when every one passes a scalar); one
    some site passes a tensor is likely one; one some site passes a Python
    value is a Python value. A site that passes on its caller's own parameter
    passes what the caller receives there (`_forwarded_knowledge`)."""
    # What a traced function is passed, and what a function whose parameter
    # a site forwards (its own, or a closure's) is: the other targets' sites
    # say nothing needed.
    needed = {
        (index.path, owner)
        for index in indexes
        for site in index.call_sites
        for _, _, owner in site.forwarded
    }
    passes: list[_Passed] = []
    for index in indexes:
        for site in index.call_sites:
            for target_index, target in site_targets(index, site, lookup):
                key = (target_index.path, target)
                if (key in marks or key in needed) and target in target_index.functions:
                    passes.append(_passed(index, site, target_index, target))
    by_path = {index.path: index for index in indexes}
    knowledge = _forwarded_knowledge(passes, by_path, marks)
    # The same, counting only tensors the sites themselves give.
    single_knowledge = _forwarded_knowledge(passes, by_path, marks, single=True)
    singles: dict[tuple[str, str], list[dict[str, str]]] = {}
    seen: dict[tuple[str, str], list[tuple[dict[str, str], str]]] = {}
    structures: dict[tuple[str, str], list[dict[str, str]]] = {}
    _mark_fed_inside(passes, marks)
    for p in passes:
        if p.target in marks:
            seen.setdefault(p.target, []).append((p.evidence(knowledge), p.where))
            singles.setdefault(p.target, []).append(p.evidence(single_knowledge))
            structures.setdefault(p.target, []).append(p.elements)
    for key, located in seen.items():
        known = marks[key]
        info = by_path[key[0]].functions[key[1]]
        sites = [given for given, _ in located]
        known.elements.update(_element_evidence(info.caller_params, structures[key]))
        for name in info.caller_params:
            python_at = [where for given, where in located if given.get(name) == "p"]
            tensor_at = [where for given, where in located if given.get(name, "") in ("t", "s")]
            if python_at and tensor_at:
                known.mixed[name] = (python_at[0], tensor_at[0])
            evidence = [site.get(name, info.default_evidence(name)) for site in sites]
            if all(e in "ts" for e in evidence):
                known.tensor.add(name)
                single = [site.get(name, info.default_evidence(name)) for site in singles[key]]
                if all(e in "ts" for e in single):
                    known.single.add(name)
                if all(e == "s" for e in evidence):
                    known.scalar.add(name)
            elif any(e in "ts" for e in evidence) and "p" not in evidence:
                known.likely.add(name)
            if any(site.get(name) == "p" for site in sites):
                known.python.add(name)


def _mark_fed_inside(passes: list[_Passed], marks: dict[tuple[str, str], TraceMarks]) -> None:
    """`TraceMarks.fed_inside`, to a fixed point: a traced caller fills the
    parameter with what it computes, or with a parameter of its own that
    is fed inside. Eager callers feed nothing inside."""
    changed = True
    while changed:  # the sets only grow, bounded by the parameters
        changed = False
        for p in passes:
            known = marks.get(p.target)
            if known is None or p.caller is None or p.caller not in marks:
                continue
            for name in p.given:
                if name in known.fed_inside:
                    continue
                forwarded = p.forwarded.get(name)
                if (
                    forwarded is None
                    or forwarded[1] in marks.get(forwarded[0], _NO_MARKS).fed_inside
                ):
                    known.fed_inside.add(name)
                    changed = True


_NO_MARKS = TraceMarks("")


def _element_evidence(params: list[str], sites: list[dict[str, str]]) -> dict[str, str]:
    """Per parameter every call site fills with a list or tuple display,
    what each element is (see `TracedFunction.elements`); parameters some
    site fills otherwise are left out."""
    found: dict[str, str] = {}
    for name in params:
        given = [site.get(name) for site in sites]
        if not given or any(codes is None for codes in given):
            continue
        size = max(len(codes) for codes in given if codes is not None)
        combined = ""
        for position in range(size):
            at = [codes[position] if position < len(codes) else "?" for codes in given if codes]
            if all(code in "ts" for code in at):
                combined += "s" if all(code == "s" for code in at) else "t"
            elif "p" not in at:
                combined += "l"
            else:
                combined += "?"
        if combined.strip("?"):
            found[name] = combined
    return found


def _nested_callee(index: ModuleIndex, site: CallSite) -> str | None:
    """The function a plain-name call reaches when the calling function, or
    one it is nested in, defines it (`_nms(class_id)` inside
    `Post._per_class` calls `Post._per_class._nms`): the nearest such
    definition shadows the module's names. Only functions enclose names: a
    method's plain-name call never reaches another method of its class."""
    if site.via_attribute or "." in site.callee or not site.caller:
        return None
    scope = site.caller
    while scope in index.functions:
        candidate = f"{scope}.{site.callee}"
        if candidate in index.functions:
            return candidate
        scope = scope.rpartition(".")[0]
    return None
