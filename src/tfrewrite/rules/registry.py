"""The registry entry of one rule: what the pipeline must know of it before
(and without) importing it.

Each family package (`rules/<family>/__init__.py`) declares
`RULES = (RuleSpec(...), ...)`, one entry per rule, and `rules/__init__.py`
collects them; every list of codes (the fix order, selection, the forkserver
preload, the pre-parse checks, what `check`'s pruned parse keeps) is derived
from these entries. The rule classes themselves import LibCST; an entry holds
only pass-1 facts (`ast`, `ModuleIndex`), so the main process can decide which
rules can fire in a file, and settle it, without loading LibCST.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tfrewrite.facts.index import ModuleIndex
    from tfrewrite.facts.rule_scopes import Scope, TracedFacts


@dataclass(frozen=True)
class Relevance:
    """What `check`'s pruned parse (`pipeline/relevant_code.py`) must keep
    for a rule besides what it keeps for every rule (traced code, what opens
    a tape or hands code to a tracer, `global` writers, seeding calls, and
    what kept code names).

    Every field errs towards keeping: a rule that reads callers, or any
    field left at its default, keeps at least as much as today's rules do.
    """

    # Whether the rule reads the code that calls kept code (a loop calling a
    # decorated function: TFR203; a loop calling a train step: TFR302).
    # False for a rule that looks only inside traced code and what it calls,
    # learning what callers pass from pass-1 facts.
    reads_callers: bool = True
    # Keep functions that write items of a module name or attributes of an
    # import or of a class of the file (TFR201 reads such writes anywhere).
    state_writes: bool = False
    # Keep functions that average or divide beside a loop, or divide a
    # `sum(...)` (where TFR306 may see per-batch values).
    averages: bool = False
    # Keep functions that name `keras` or `keras.ops` (TFR101's fix writes
    # `keras.ops` when the file uses it).
    keras_ops: bool = False
    # Keep functions that assign a model, a lambda or a batched dataset, and
    # follow assignments of names kept code reads: the tape and loop rules
    # (TFR302 to TFR306) look such values up by name anywhere in the file.
    inputs_by_name: bool = False
    # Keep the methods of a class whose traced methods keep attributes on
    # `self` that they read (TFR202: an eager method reading a tensor a
    # trace kept).
    kept_attributes: bool = False

    @staticmethod
    def combined(relevances: Iterable[Relevance]) -> Relevance:
        """What the pruned parse must keep for all of `relevances` at once
        (for none: only what every rule needs, and no caller)."""
        items = list(relevances)
        return Relevance(
            reads_callers=any(r.reads_callers for r in items),
            state_writes=any(r.state_writes for r in items),
            averages=any(r.averages for r in items),
            keras_ops=any(r.keras_ops for r in items),
            inputs_by_name=any(r.inputs_by_name for r in items),
            kept_attributes=any(r.kept_attributes for r in items),
        )


# A rule that looks only inside traced code and what it calls.
TRACED_CODE_ONLY = Relevance(reads_callers=False)
# A rule that also reads the code calling kept code, and nothing more.
WITH_CALLERS = Relevance(reads_callers=True)


@dataclass(frozen=True)
class RuleSpec:
    """The registry entry of one rule.

    `code`: the rule's code (`TFR101`); it must equal its class's `code`.
    `module`: the name of the module in the family folder that defines the
    rule class (listed in that module's `RULES`).
    `scope`: the pre-parse check, `(ModuleIndex, TracedFacts) -> bool`, in
    the family's `scopes.py`: may the rule report anything in this file? None
    runs the rule on every file (always parsed).
    `relevance`: what `check`'s pruned parse must keep for the rule; None
    (the safe default for a new rule) keeps the whole file whenever the rule
    is selected.
    `family`: the family package's name, filled in by the registry when it
    collects the entries (a family need not repeat it).
    """

    code: str
    module: str
    scope: Scope | None
    relevance: Relevance | None = None
    family: str = ""

    def can_fire(self, index: ModuleIndex, traced: TracedFacts) -> bool:
        """Whether the rule may report anything in the file `index` describes,
        given its traced functions: always, without a scope."""
        return True if self.scope is None else self.scope(index, traced)
