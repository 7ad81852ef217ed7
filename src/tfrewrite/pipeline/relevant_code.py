"""Check mode's parse of only the code the rules can look at.

LibCST builds a tree that costs about a hundred times the source's size in
memory (a 450 kB test file of a hundred test methods: 350 MB) and most of a
check's time, yet in most files the selected rules can report, or need as
context, only a few functions: the traced ones, those that open a gradient
tape, those that call a traced function, and what these call. `check` (not
`fix`, nor anything that shows edits) parses a *pruned* copy of the source:
every top-level function and every method directly in a top-level class that
pass-1 facts prove *inert* is replaced by blank lines (a class left with no
statement gets `pass`), so every line and column of the code that is kept is
what it was, and so are the positions of the findings.

A function is kept when it may matter to one of the selected rules
(`relevance` says why, for the tests and for debugging):

- it is, or holds, a traced function (pending train steps included), a
  `@tf.function`, a `GradientTape`, a traced call site or lambda (pass 1's
  `traced_sites`, `traced_lambdas`, `tape_losses`), a `global`/`nonlocal`, a
  `run_functions_eagerly` switch (TFR307);
- it calls one of those by name (a loop calling a decorated function is
  TFR203's case, also another module's, `agent.update(x, step)`; a loop
  calling a train step, TFR302's), unless no selected
  rule reads callers (`Relevance.reads_callers`: the rules that look only at
  traced code and what it calls learn what callers pass from pass-1 facts);
- it writes state a rule reads across functions (items of a module name, an
  attribute of an imported module or of a class of the file:
  `Relevance.state_writes`, TFR201);
- it averages or divides where a rule may see per-batch values (a mean or a
  division beside a loop or a comprehension, or `sum(...) / n`:
  `Relevance.averages`, TFR306);
- for the rules that look values up by name (`Relevance.inputs_by_name`, the
  tape and loop rules TFR302 to TFR306): it assigns a model, a lambda or a
  batched dataset, or a name kept code reads from another name or from a
  call of one of the file's functions (what `value_sources` and
  `_model_names` look up by name anywhere in the file);
- it names `keras` or `keras.ops` where a selected rule's fix writes
  `keras.ops` when the file uses it (`Relevance.keras_ops`, TFR101); it
  calls a seed function (random fixes look for seeding anywhere; kept
  whatever the rules). (A name a fix gives a new function or list is one
  the whole file spells nowhere: pass 1's `ModuleIndex.used_names`.)
- a kept function names it (the rules read callees' bodies and returns), or
  it shares its name with a kept top-level function (sections of a script);
- it is `__init__` or writes a `self` attribute in a class with a kept method
  (what `self` holds is read from every method of the class), calls a kept
  method of its class, or names a method that `__init__` of such a class
  calls on `self` (set up once only if nothing else calls it); every method
  of a class named by kept code stays.

Module-level statements, class headers and class-level statements always
stay. What each rule needs is its registry entry's `relevance`
(`rules.registry.Relevance`); a selected rule without one (a new rule, or a
code the registry does not hold) keeps the whole file.

After a simulated fix round, `check` indexes the fixed (pruned) code again;
`Pruned.carried_index` indexes the pruned functions on their own (with every
import of the file) so `fix_rounds._reindex` can merge their facts back.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tfrewrite.facts.prefilters import MUTATING_METHODS
from tfrewrite.facts.vocabulary import SETUP_METHODS
from tfrewrite.rules.registry import Relevance
from tfrewrite.workspace.line_names import CellStarts

if TYPE_CHECKING:
    from tfrewrite.facts.index import FunctionInfo, ModuleIndex
    from tfrewrite.facts.traced_function import TracedFunction

# Last components of the averaging calls TFR306 starts from.
_AVERAGES = frozenset({"mean", "average", "fmean", "reduce_mean"})
_MODEL_FACTORIES = frozenset({"Sequential", "Model", "Functional", "load_model", "clone_model"})
_BATCHING = frozenset({"batch", "padded_batch"})
# Line breaks as Python's tokenizer counts them (not `str.splitlines`, which
# also breaks at form feeds and other separators).
# Characters `str.splitlines` breaks at besides line breaks and form feeds:
# a file holding one (in a string) is parsed whole, so that every line keeps
# its number for the lookup of noqa comments.
_OTHER_BREAKS = ("\v", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")
_SEED_FUNCTIONS = frozenset({"seed", "set_seed", "set_random_seed"})
# Identifier-like words (Python identifiers may hold any letter).
_WORD = re.compile(r"[^\W\d]\w*")
# Words that may assign what the loop rules look up by name: a model, a
# lambda, a batched dataset (with the file's class names).
_INPUT_WORDS = _MODEL_FACTORIES | _BATCHING | {"lambda", "applications"}
# A method called on `self`: `self.reset_noise(...)`.
_SELF_CALL = re.compile(r"\bself\s*\.\s*([^\W\d]\w*)\s*\(")
# The last word of what is called: `seed` of `np.random.seed(0)`.
_CALLED = re.compile(r"([^\W\d]\w*)\s*\(")
# `name = other` or `name = function(...)` on a line of its own: an
# assignment `value_sources` follows to what `other` holds or `function`
# returns (target, source, and "(" for a call).
_ALIASING = re.compile(
    r"^[ \t]*([^\W\d]\w*)[ \t]*=[ \t]*([^\W\d]\w*)[ \t]*(\(|#|\r?$)", re.MULTILINE
)
# `class Name` and `def Name`: a definition, not a use, of the name.
_DEFINED = re.compile(r"\b(?:class|def)\s+[^\W\d]\w*")
# A `self` attribute beside a comma or a bracket: maybe in a tuple target.
_TUPLE_SELF = re.compile(r"\bself\.\w+\s*[,)\]]|[,(\[]\s*\*?\s*self\.\w+")


@dataclass
class _Unit:
    """A top-level function or a method directly in a top-level class, with
    its lines (decorators included) as pass 1 recorded them."""

    qualname: str
    name: str
    class_name: str | None
    first: int
    last: int
    column: int
    text: str
    words: set[str]  # every identifier-like word of its text (strings and comments too)
    reason: str | None = None  # why it is kept; None while inert
    _facts: _Facts | None = None

    def facts(
        self, module_names: set[str], owners: set[str], inputs: set[str], averages: set[str]
    ) -> _Facts | None:
        """What its code holds, from a parse of its own text (only the few
        units a cheap test on words cannot clear ask); None when the text
        does not parse alone."""
        if self._facts is None:
            text = self.text if self.column == 0 else "if 1:\n" + self.text
            try:
                tree = ast.parse(text)
            except (SyntaxError, ValueError, RecursionError):
                return None
            self._facts = _facts(tree, module_names, owners, inputs, averages)
        return self._facts


class WholeFileNeeded(Exception):
    """The pruned code cannot stand for the file (`Pruned.carried_index`)."""


@dataclass
class Pruned:
    """A source with its inert functions blanked out."""

    code: str
    source: str
    path: str
    module: str
    pruned: tuple[str, ...]  # qualnames of the blanked functions
    star_names: dict[str, str] = field(default_factory=dict)  # `ModuleIndex.star_names`
    cell_starts: CellStarts = ()  # `ModuleIndex.cell_starts`
    _carried: ModuleIndex | None = field(default=None, repr=False)

    def carried_index(self) -> ModuleIndex:
        """The index of the blanked functions alone, with every import of
        the file (so their names resolve as in the whole file), the headers
        of the top-level classes and a stub for every kept top-level
        function: what `fix_rounds._reindex` merges into the index of the fixed,
        pruned code. Built on first use (only a check that simulates fix
        rounds needs it)."""
        if self._carried is None:
            from tfrewrite.facts.index import build_index

            code = _complement(self.source, set(self.pruned))
            carried = build_index(code, self.path, self.module, self.star_names, self.cell_starts)
            if carried.syntax_error is not None or not set(self.pruned) <= set(carried.functions):
                # A function left out from inside a block (`if`, `try`)
                # cannot be indexed alone: the caller checks the whole file.
                raise WholeFileNeeded(self.path)
            self._carried = carried
        return self._carried


def prune(
    source: str,
    index: ModuleIndex,
    traced: dict[str, TracedFunction],
    rule_codes: Iterable[str],
) -> Pruned | None:
    """`source` with the functions no rule in `rule_codes` can need blanked
    out; None when nothing can be left out (or a rule's needs are not known)."""
    needs = needs_of(rule_codes)
    if needs is None or any(c in source for c in _OTHER_BREAKS):
        return None
    lines = _LINE.findall(source)
    units = _decide(lines, index, traced, needs)
    inert = [u for u in units if u.reason is None]
    if not inert:
        return None
    blanked: dict[str, list[_Unit]] = {}
    for unit in inert:
        for number in range(unit.first, unit.last + 1):
            lines[number - 1] = _blank(lines[number - 1])
        if unit.class_name is not None:
            blanked.setdefault(unit.class_name, []).append(unit)
    for class_name, methods in blanked.items():
        info = index.classes.get(class_name)
        if info is not None and len(methods) == len(info.methods):
            # Every method gone: `pass` keeps the body a body (harmless
            # beside class-level statements, if there are any).
            first = min(methods, key=lambda u: u.first)
            indent = first.text[: first.column]
            lines[first.first - 1] = indent + "pass" + lines[first.first - 1]
    return Pruned(
        "".join(lines),
        source,
        index.path,
        index.module,
        tuple(u.qualname for u in inert),
        dict(index.star_names),
        index.cell_starts,
    )


def relevance(
    source: str,
    index: ModuleIndex,
    traced: dict[str, TracedFunction],
    rule_codes: Iterable[str],
) -> dict[str, str | None]:
    """Each top-level function and method: why it is kept, None when inert."""
    lines = _LINE.findall(source)
    needs = needs_of(rule_codes)
    if needs is None:
        return {u.qualname: _WHOLE_FILE for u in _units(lines, index)}
    units = _decide(lines, index, traced, needs)
    return {u.qualname: u.reason for u in units}


# Why every function is kept when a selected rule's needs are not known.
_WHOLE_FILE = "a selected rule keeps the whole file"


def needs_of(rule_codes: Iterable[str]) -> Relevance | None:
    """What the pruned parse must keep for the rules `rule_codes`, from their
    registry entries; None when a code has no entry or its entry no
    `relevance` (the whole file is then parsed)."""
    from tfrewrite.rules import specs_by_code

    specs = specs_by_code()
    relevances = []
    for code in dict.fromkeys(rule_codes):
        spec = specs.get(code)
        if spec is None or spec.relevance is None:
            return None
        relevances.append(spec.relevance)
    return Relevance.combined(relevances)


def _kept_attributes(index: ModuleIndex, traced: dict[str, TracedFunction]) -> dict[str, set[str]]:
    """Per class, the attributes its traced methods keep on `self` that the
    module reads somewhere (`FunctionInfo.assigned_self_attrs`)."""
    kept: dict[str, set[str]] = {}
    for qualname in traced:
        info = index.functions.get(qualname)
        if info is None or info.class_name is None:
            continue
        read = info.assigned_self_attrs & index.attribute_reads
        if read:
            kept.setdefault(info.class_name, set()).update(read)
    return kept


def _blank(line: str) -> str:
    """A line's break alone, after its form feeds: `str.splitlines` (which
    the `# noqa` lookup counts lines with) breaks at those too."""
    stripped = line.rstrip("\r\n")
    return "\f" * stripped.count("\f") + line[len(stripped) :]


def _units(lines: list[str], index: ModuleIndex) -> list[_Unit]:
    """The functions pass 1 saw at the top level or directly in a top-level
    class, with their lines (a function whose name another one of its scope
    reuses is not among them: the index keeps only the last)."""
    units = []
    for qualname, info in index.functions.items():
        owner = info.class_name
        if owner is None:
            if "." in qualname:
                continue
        elif "." in owner or qualname != f"{owner}.{qualname.rpartition('.')[2]}":
            continue
        if not 0 < info.first_lineno <= info.lineno <= info.end_lineno <= len(lines):
            continue
        name = qualname.rpartition(".")[2]
        if not re.search(rf"\bdef\s+{re.escape(name)}\b", lines[info.lineno - 1]):
            return []  # the lines are not counted as pass 1 counted them
        text = "".join(lines[info.first_lineno - 1 : info.end_lineno])
        column = len(text) - len(text.lstrip(" \t"))
        units.append(
            _Unit(
                qualname,
                name,
                owner,
                info.first_lineno,
                info.end_lineno,
                column,
                text,
                # Its own `def` line and those of what it nests define names,
                # they use none.
                set(_WORD.findall(_DEFINED.sub(" ", text))),
            )
        )
    units.sort(key=lambda u: u.first)
    # Two units on the same lines (a redefinition pass 1 recorded twice)
    # would be blanked twice: keep such files whole.
    for before, after in zip(units, units[1:], strict=False):
        if after.first <= before.last:
            return []
    return units


@dataclass
class _Facts:
    """What one function's code holds, as the relevance tests ask."""

    writes_self: bool = False
    averages: bool = False  # a mean-like call or a division
    loops: bool = False  # a `for` statement or a comprehension
    divides_sum: bool = False
    writes_state: bool = False  # items of a module name, attributes of an import or class
    defines_inputs: bool = False  # a model, a lambda or a batched dataset assigned


def _facts(
    node: ast.AST,
    module_names: set[str],
    owners: set[str],
    inputs: set[str],
    averages: set[str],
) -> _Facts:
    """`inputs`: the last words of the calls that make a model, and the
    file's classes; `averages`: those of averaging calls (aliases included)."""
    from tfrewrite.facts.index import dotted

    facts = _Facts()
    for inner in ast.walk(node):
        kind = inner.__class__
        if kind is ast.Attribute:
            if isinstance(inner.ctx, (ast.Store, ast.Del)):  # type: ignore[attr-defined]
                base = inner.value  # type: ignore[attr-defined]
                if isinstance(base, ast.Name):
                    if base.id == "self":
                        facts.writes_self = True
                    elif base.id in owners or base.id == "cls":
                        facts.writes_state = True
        elif kind is ast.Subscript:
            if isinstance(inner.ctx, (ast.Store, ast.Del)):  # type: ignore[attr-defined]
                base = inner.value  # type: ignore[attr-defined]
                if isinstance(base, ast.Name) and base.id in module_names:
                    facts.writes_state = True
        elif kind in (ast.For, ast.AsyncFor, ast.While, ast.ListComp, ast.SetComp, ast.DictComp):
            facts.loops = True
        elif kind is ast.GeneratorExp:
            facts.loops = True
        elif kind is ast.BinOp:
            if isinstance(inner.op, ast.Div):  # type: ignore[attr-defined]
                facts.averages = True
                left = inner.left  # type: ignore[attr-defined]
                if (
                    isinstance(left, ast.Call)
                    and isinstance(left.func, ast.Name)
                    and left.func.id == "sum"
                ):
                    facts.divides_sum = True
        elif kind is ast.AugAssign:
            if isinstance(inner.op, ast.Div):  # type: ignore[attr-defined]
                facts.averages = True
        elif kind is ast.Call:
            func = inner.func  # type: ignore[attr-defined]
            if (
                isinstance(func, ast.Attribute)
                and func.attr in MUTATING_METHODS
                and isinstance(func.value, ast.Name)
                and func.value.id in module_names
            ):
                facts.writes_state = True  # `cfg.update(...)`: items changed in place
            leaf = _leaf(func)
            if leaf in averages:
                facts.averages = True
            if leaf in _BATCHING:
                facts.defines_inputs = True
        elif kind in (ast.Assign, ast.AnnAssign):
            value = inner.value  # type: ignore[attr-defined]
            if isinstance(value, ast.Lambda):
                facts.defines_inputs = True
            elif isinstance(value, ast.Call):
                spelled = dotted(value.func) or ""
                if _leaf(value.func) in inputs or ".applications." in f".{spelled}.":
                    facts.defines_inputs = True
    return facts


def _leaf(node: ast.AST) -> str:
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return ""


def _within(qualname: str, unit: str) -> bool:
    return qualname == unit or qualname.startswith(unit + ".")


def _decide(
    lines: list[str],
    index: ModuleIndex,
    traced: dict[str, TracedFunction],
    needs: Relevance,
) -> list[_Unit]:
    """Every unit, with why it is kept (`reason`), or None when inert, for
    rules that together need `needs`. Cheap tests on pass-1 facts and on the
    words of a unit's text decide most units; a unit whose words leave a
    question open is parsed alone."""
    from tfrewrite.facts.index import TF_FUNCTION_NAMES

    units = _units(lines, index)
    if not units:
        return units
    classes = {name.rpartition(".")[2] for name in index.classes}
    owners = set(index.imports) | {name for name in index.classes if "." not in name}
    loop_rules = needs.inputs_by_name
    # Random fixes look for seeding anywhere (`rules/randomness/seeds.py`).
    seeding = _with_aliases(_SEED_FUNCTIONS, index)
    tapes = _with_aliases({"GradientTape"}, index)
    switches = _with_aliases({"run_functions_eagerly", "run_eagerly"}, index)
    # Project functions that average a parameter average what is handed there.
    helpers = {callee.rpartition(".")[2] for callee in index.callee_averaged_params}
    averages = _with_aliases(_AVERAGES | helpers, index)
    input_words = _with_aliases(_INPUT_WORDS, index) | classes
    keras_names = {
        alias
        for alias, target in index.imports.items()
        if target == "keras" or target.startswith("keras.ops")
    }
    sites = sorted(
        {s.lineno for s in index.traced_sites}
        | {lam.lineno for lam in index.traced_lambdas}
        | {t.lineno for t in index.tape_losses}
    )
    decorated = [
        qualname
        for qualname, info in index.functions.items()
        if any(d in TF_FUNCTION_NAMES or d.endswith(".function") for d in info.decorators)
    ]
    infos = _by_unit(index)
    traced_units = _unit_keys(traced)
    kept_by_class = _kept_attributes(index, traced) if needs.kept_attributes else {}
    decorated_units = _unit_keys(decorated)

    def facts(unit: _Unit) -> _Facts | None:
        return unit.facts(index.module_names, owners, input_words, averages)

    core: set[str] = set()  # names of units others are kept for calling
    for unit in units:
        own = infos.get(unit.qualname, [])
        words = unit.words
        reason = None
        if unit.qualname in traced_units:
            reason = "runs traced"
        elif unit.qualname in decorated_units:
            reason = "decorated with tf.function"
        elif not tapes.isdisjoint(words) or any(i.opens_gradient_tape for i in own):
            reason = "opens a GradientTape"
        elif any(unit.first <= line <= unit.last for line in sites):
            reason = "hands code to a tracer"
        elif ("global" in words or "nonlocal" in words) and any(i.writes_state for i in own):
            reason = "declares global or nonlocal names"
        elif not switches.isdisjoint(words):
            reason = "switches tf.function off"
        if reason is not None:
            core.add(unit.name)
        elif (
            needs.state_writes
            and any(i.writes_state for i in own)
            and _holds(facts(unit), "writes_state")
        ):
            reason = "writes module or class state"
        elif (
            needs.averages
            and ("/" in unit.text or not averages.isdisjoint(words))
            and ("for" in words or "while" in words or "sum" in words)
            and _averages(facts(unit))
        ):
            reason = _AVERAGING
        elif (
            loop_rules
            and not input_words.isdisjoint(words)
            and _holds(facts(unit), "defines_inputs")
        ):
            reason = "assigns a model, a lambda or a batched dataset"
        elif needs.keras_ops and not keras_names.isdisjoint(words):
            reason = "names keras.ops"
        elif unit.class_name in kept_by_class and not kept_by_class[unit.class_name].isdisjoint(
            words
        ):
            reason = "reads what a traced method keeps on self"
        elif not seeding.isdisjoint(_CALLED.findall(unit.text)):
            reason = "calls a seed function"
        unit.reason = reason
    if needs.reads_callers:
        # Another module's `tf.function` called as written here (`agent.update`).
        foreign = {written.rpartition(".")[2] for written in index.foreign_tf_functions}
        for unit in units:
            if unit.reason is None and not core.isdisjoint(unit.words):
                called = sorted(core & unit.words)[0]
                unit.reason = f"calls `{called}`"
            elif unit.reason is None and not foreign.isdisjoint(unit.words):
                unit.reason = "calls another module's tf.function"
    _spread(lines, units, infos, facts, loop_rules)
    return units


# Why a unit that averages per-batch values is kept (TFR306).
_AVERAGING = "averages beside a loop"


def _with_aliases(names: Iterable[str], index: ModuleIndex) -> set[str]:
    """`names` and the names the file imports them as (`from numpy import
    mean as avg`: `avg`)."""
    found = set(names)
    imports = index.imports.items()
    return found | {alias for alias, target in imports if target.rpartition(".")[2] in found}


def _unit_prefixes(qualname: str) -> tuple[str, str]:
    """The qualnames of the units that may hold `qualname`: a top-level
    function (`f` of `f.inner`) or a method (`A.m` of `A.m.inner`)."""
    parts = qualname.split(".", 2)
    return parts[0], ".".join(parts[:2])


def _unit_keys(qualnames: Iterable[str]) -> set[str]:
    """Qualnames of the units holding any of `qualnames`."""
    return {key for qualname in qualnames for key in _unit_prefixes(qualname)}


def _by_unit(index: ModuleIndex) -> dict[str, list[FunctionInfo]]:
    """The functions pass 1 recorded, under the qualname of each unit that
    may hold them (itself and what is nested in it)."""
    found: dict[str, list[FunctionInfo]] = {}
    for qualname, info in index.functions.items():
        for key in set(_unit_prefixes(qualname)):
            found.setdefault(key, []).append(info)
    return found


def _holds(found: _Facts | None, fact: str) -> bool:
    """A fact of a unit's parse; true when its text would not parse alone."""
    return found is None or bool(getattr(found, fact))


def _averages(found: _Facts | None) -> bool:
    return found is None or found.divides_sum or (found.averages and found.loops)


def _writes_self(unit: _Unit, info_writes: bool, facts) -> bool:  # noqa: ANN001
    """Whether a method assigns a `self` attribute: pass 1 records plain
    targets; a tuple target (`self.a, self.b = ...`) needs a parse."""
    if info_writes:
        return True
    if not _TUPLE_SELF.search(unit.text):
        return False
    found = facts(unit)
    return found is None or found.writes_self


def _spread(
    lines: list[str],
    units: list[_Unit],
    infos: dict[str, list[FunctionInfo]],
    facts,  # noqa: ANN001
    follow_assignments: bool,
) -> None:
    """Keep what kept code needs: the units it names (and whole classes it
    names), the units sharing a kept top-level function's name, and in a
    class with a kept method, `__init__`, the methods writing `self`
    attributes and those calling a kept method. With `follow_assignments`
    (the loop rules, whose `value_sources` follows a name to every
    assignment of it in the file, then a name or a call of a module
    function to what it holds or returns), also the units that assign a name
    kept code reads from a name or from a call of one of the file's
    functions (`ds = make_dataset()`)."""
    by_name: dict[str, list[_Unit]] = {}
    by_class: dict[str, list[_Unit]] = {}
    for unit in units:
        by_name.setdefault(unit.name, []).append(unit)
        if unit.class_name is not None:
            by_class.setdefault(unit.class_name, []).append(unit)
    writes_self: dict[str, bool] = {}
    whole: set[str] = set()  # classes every method of which stays
    outside = _outside_words(lines, units)
    pending: list[tuple[set[str], str]] = [(outside, "module-level code")]
    pending += [(u.words, u.qualname) for u in units if u.reason is not None]
    read: set[str] = set(outside)  # every word of kept code
    functions = {u.name for u in units if u.class_name is None}
    assigned: dict[str, set[str]] = {}
    if follow_assignments:
        for unit in units:
            found = {
                target
                for target, source, after in _ALIASING.findall(unit.text)
                if after != "(" or source in functions
            }
            if found:
                assigned[unit.qualname] = found

    def keep(unit: _Unit, reason: str) -> None:
        if unit.reason is None:
            unit.reason = reason
            pending.append((unit.words, unit.qualname))

    while pending:
        names, holder = pending.pop()
        read |= names
        for name in names:
            for unit in by_name.get(name, ()):
                keep(unit, f"named by `{holder}`")
            if name in by_class and name not in whole:
                whole.add(name)
                for unit in by_class[name]:
                    keep(unit, f"its class is named by `{holder}`")
        if pending:
            continue  # settle the names first: the checks below are per class
        for unit in units:
            targets = assigned.get(unit.qualname)
            if unit.reason is None and targets and not targets.isdisjoint(read):
                name = sorted(targets & read)[0]
                keep(unit, f"assigns `{name}`, which kept code reads")
        kept_top = {u.name for u in units if u.reason is not None and u.class_name is None}
        for unit in units:
            if unit.class_name is None and unit.name in kept_top:
                keep(unit, "shares its name with a kept function")
        if follow_assignments:
            # A loop over a parameter iterates what the callers pass
            # (`evaluate(model, test_ds)`): `dataset_batches` reads them.
            averaging = {u.name for u in units if u.reason == _AVERAGING and u.class_name is None}
            for unit in units:
                if unit.reason is None and not averaging.isdisjoint(unit.words):
                    name = sorted(averaging & unit.words)[0]
                    keep(unit, f"passes the values `{name}` averages")
        for class_name, methods in by_class.items():
            kept = {m.name for m in methods if m.reason is not None}
            if not kept:
                continue
            # What `__init__` (or `build`) calls on `self` is set up once
            # only while no other code names it (`state.setup_only_methods`).
            for init in (m for m in methods if m.name in SETUP_METHODS):
                called = set(_SELF_CALL.findall(init.text))
                for unit in units:
                    if unit is not init and not called.isdisjoint(unit.words):
                        keep(unit, f"names a method `{class_name}.{init.name}` calls")
            for method in methods:
                if method.reason is not None:
                    continue
                if method.qualname not in writes_self:
                    recorded = any(i.self_writes for i in infos.get(method.qualname, ()))
                    writes_self[method.qualname] = _writes_self(method, recorded, facts)
                if method.name == "__init__" or writes_self[method.qualname]:
                    keep(method, f"sets up `self` for kept methods of `{class_name}`")
                elif not kept.isdisjoint(method.words):
                    keep(method, f"calls a kept method of `{class_name}`")


def _outside_words(lines: list[str], units: list[_Unit]) -> set[str]:
    """The words of every line outside the units: module-level statements,
    class headers and class-level statements, which always stay."""
    inside = [False] * (len(lines) + 1)
    for unit in units:
        for number in range(unit.first, unit.last + 1):
            inside[number] = True
    text = "".join(line for number, line in enumerate(lines, start=1) if not inside[number])
    # A class's header names the class itself: that is no use of it.
    return set(_WORD.findall(_DEFINED.sub(" ", text)))


# -- the pruned functions on their own, for the index of a fix round ----------------


def _complement(source: str, pruned: set[str]) -> str:
    """`source` with only its pruned functions left in place, every other
    statement blanked, top-level classes reduced to their headers (`pass`
    where nothing of theirs stays), a stub `def` for each kept top-level
    function (so names still resolve to the module's), and every import of
    the file appended at the end, in order."""
    from tfrewrite.facts.index import _statements

    tree = ast.parse(source)
    lines = _LINE.findall(source)
    if lines and not lines[-1].endswith(("\n", "\r")):
        lines[-1] += "\n"
    keep = [False] * (len(lines) + 1)
    replaced: dict[int, str] = {}
    for statement in tree.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if statement.name in pruned:
                _mark(keep, _first_line(statement), statement.end_lineno)
            else:
                replaced[statement.lineno] = " " * statement.col_offset + (
                    f"def {statement.name}(): pass"
                )
        elif isinstance(statement, ast.ClassDef):
            body_start = statement.body[0].lineno
            if body_start == statement.lineno:
                continue  # a one-line class: no method to carry
            _mark(keep, statement.lineno, body_start - 1)
            left = [
                s
                for s in statement.body
                if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))
                and f"{statement.name}.{s.name}" in pruned
            ]
            for method in left:
                _mark(keep, _first_line(method), method.end_lineno)
            if not left:
                first = statement.body[0]
                replaced[first.lineno] = " " * first.col_offset + "pass"
    out = []
    for number, line in enumerate(lines, start=1):
        if number in replaced:
            out.append(replaced[number] + _blank(line) or "\n")
        elif keep[number]:
            out.append(line)
        else:
            out.append(_blank(line))
    imports = [
        ast.unparse(node)
        for node in _statements(tree.body)
        if isinstance(node, (ast.Import, ast.ImportFrom))
    ]
    return "".join(out) + "".join(f"{line}\n" for line in imports)


def _first_line(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    return min([node.lineno, *(d.lineno for d in node.decorator_list)])


def _mark(keep: list[bool], first: int, last: int | None) -> None:
    for number in range(first, (last or first) + 1):
        keep[number] = True


def merge_carried(index: ModuleIndex, carried: ModuleIndex, pruned: Sequence[str]) -> None:
    """Add to `index` (of fixed, pruned code) the facts of the pruned
    functions (`carried`, from `Pruned.carried_index`): their functions,
    their imports, calls, writes and call sites, the methods they add to
    their classes. `carried` holds no module-level statement but imports,
    so every fact it has comes from the pruned functions."""
    for qualname, info in carried.functions.items():
        if any(_within(qualname, unit) for unit in pruned):
            index.functions.setdefault(qualname, info)
    for name, info in carried.classes.items():
        own = index.classes.get(name)
        if own is None:
            if any(_within(name, unit) for unit in pruned):
                index.classes[name] = info
            continue
        own.methods = [*own.methods, *(m for m in info.methods if m not in own.methods)]
        own.updated_attrs = {**info.updated_attrs, **own.updated_attrs}
        own.held_objects = {**info.held_objects, **own.held_objects}
    index.imports = {**carried.imports, **index.imports}
    for attribute in (
        "called_names",
        "default_calls",
        "averaged_callees",
        "foreign_writes",
        "module_attribute_reads",
        "named_attribute_writes",
        "item_writes",
        "used_names",
    ):
        setattr(index, attribute, getattr(index, attribute) | getattr(carried, attribute))
    for attribute in (
        "switches_tracing_off",
        "opens_gradient_tape",
        "accumulates_in_loop",
        "divides_sum",
        "divides_running_sum",
    ):
        if getattr(carried, attribute):
            setattr(index, attribute, True)
    for attribute in ("traced_sites", "traced_lambdas", "tape_losses", "call_sites"):
        setattr(index, attribute, [*getattr(index, attribute), *getattr(carried, attribute)])
    index.loop_calls = {
        callee: index.loop_calls.get(callee, False) or carried.loop_calls.get(callee, False)
        for callee in {*index.loop_calls, *carried.loop_calls}
    }
    index.rebound_module_names = {**carried.rebound_module_names, **index.rebound_module_names}
