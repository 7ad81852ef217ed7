"""The rule registry, collected from the family packages.

Each folder here is a hazard family; its `__init__.py` declares
`RULES = (RuleSpec(...), ...)` (`rules.registry`), one entry per rule. This
package finds the families itself (no list to keep), and every list of codes
derives from their entries, ordered by code: that order is the order fixes
apply in (structural rewrites of control flow first, then call-level
rewrites, then the training-loop rules that move decorators).

Collecting the entries imports the family packages and their `scopes.py`,
never a rule module: those import LibCST, which a `check` answered from pass-1
facts or from the cache never needs. `ALL_RULES` and `RULES_BY_CODE` load the
rule modules on first use.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from tfrewrite.rules.registry import RuleSpec

if TYPE_CHECKING:
    from tfrewrite.facts.index import ModuleIndex
    from tfrewrite.facts.rule_scopes import TracedFacts
    from tfrewrite.rules.base import Rule


class UnknownRuleError(ValueError):
    pass


class RegistryError(RuntimeError):
    """The family declarations and the rule modules disagree (a rule class
    without an entry, an entry whose module has no such rule, a code twice)."""


def _code_order(spec: RuleSpec) -> tuple[int, str]:
    """Fix order: by code, shorter codes first (`TFR99` before `TFR100`)."""
    return len(spec.code), spec.code


def _discover() -> tuple[RuleSpec, ...]:
    """Every family package's entries, each told its family, in code order."""
    import dataclasses
    import importlib
    import pkgutil

    found: dict[str, RuleSpec] = {}
    for module in pkgutil.iter_modules(__path__):
        if not module.ispkg:
            continue
        package = importlib.import_module(f"{__name__}.{module.name}")
        for spec in getattr(package, "RULES", ()):
            if not isinstance(spec, RuleSpec):
                raise RegistryError(f"{package.__name__}.RULES holds {spec!r}, not a RuleSpec")
            if spec.code in found:
                other = found[spec.code].family
                raise RegistryError(f"{spec.code} is declared by `{other}` and `{module.name}`")
            found[spec.code] = dataclasses.replace(spec, family=module.name)
    return tuple(sorted(found.values(), key=_code_order))


_specs: tuple[RuleSpec, ...] | None = None
_specs_by_code: dict[str, RuleSpec] | None = None


def rule_specs() -> tuple[RuleSpec, ...]:
    """The registry: every rule's entry, in fix order."""
    global _specs
    if _specs is None:
        _specs = _discover()
    return _specs


def specs_by_code() -> dict[str, RuleSpec]:
    """The registry's entries by code."""
    global _specs_by_code
    if _specs_by_code is None:
        _specs_by_code = {spec.code: spec for spec in rule_specs()}
    return _specs_by_code


def rule_module(spec: RuleSpec) -> str:
    """The dotted name of the module that defines the rule of `spec`."""
    return f"{__name__}.{spec.family}.{spec.module}"


def _load() -> list[Rule]:
    """One instance of each registered rule class, in fix order; checks that
    each class the rule modules list has an entry and the reverse."""
    import importlib

    specs = rule_specs()
    classes: dict[str, type[Rule]] = {}
    for name in dict.fromkeys(rule_module(spec) for spec in specs):
        for cls in importlib.import_module(name).RULES:
            if cls.code in classes:
                raise RegistryError(f"two rule classes have the code {cls.code}")
            classes[cls.code] = cls
            spec = specs_by_code().get(cls.code)
            if spec is None or rule_module(spec) != name:
                raise RegistryError(
                    f"{cls.__name__} ({cls.code}) of {name} has no RuleSpec naming its module "
                    "in its family's `__init__.py`"
                )
    missing = [spec.code for spec in specs if spec.code not in classes]
    if missing:
        raise RegistryError(f"no rule class for {', '.join(missing)} in the module its entry names")
    return [classes[spec.code](spec) for spec in specs]


_registry: tuple[list[Rule], dict[str, Rule]] | None = None


def _rules() -> tuple[list[Rule], dict[str, Rule]]:
    global _registry
    if _registry is None:
        rules = _load()
        _registry = (rules, {rule.code: rule for rule in rules})
    return _registry


def __getattr__(name: str):  # noqa: ANN202 - PEP 562 lazy registry
    """The registry's derived lists, computed on first use: `RULE_CODES` and
    `RULE_MODULES` from the family entries alone (no rule module loaded);
    `ALL_RULES` and `RULES_BY_CODE` load the rule modules (lazily, so rule
    modules can import the shared facts, which import `rules.base`)."""
    if name == "RULE_CODES":
        return tuple(spec.code for spec in rule_specs())
    if name == "RULE_MODULES":
        # The modules defining the rules, in fix order, each once.
        return tuple(dict.fromkeys(rule_module(spec) for spec in rule_specs()))
    if name == "ALL_RULES":
        return _rules()[0]
    if name == "RULES_BY_CODE":
        return _rules()[1]
    raise AttributeError(name)


def can_fire(code: str, index: ModuleIndex, traced: TracedFacts) -> bool:
    """Whether the rule `code` can report anything in this file, from its
    entry's pre-parse check. A code without an entry or without a check is
    always run."""
    spec = specs_by_code().get(code)
    return True if spec is None else spec.can_fire(index, traced)


def codes_that_can_fire(codes: Iterable[str], index: ModuleIndex, traced: TracedFacts) -> list[str]:
    """The codes, in order, whose rule can report anything in this file."""
    return [code for code in codes if can_fire(code, index, traced)]


def _matches(code: str, selector: str) -> bool:
    return selector == "ALL" or code.startswith(selector)


def _codes() -> tuple[str, ...]:
    """Rule codes in fix order: those of the loaded rules once they are
    loaded (a program may register a rule of its own in `ALL_RULES` at run
    time), else those of the families' entries (no rule module loaded)."""
    if _registry is not None:
        return tuple(rule.code for rule in _registry[0])
    return tuple(spec.code for spec in rule_specs())


def validate_selectors(selectors: Iterable[str]) -> None:
    codes = _codes()
    for selector in selectors:
        if selector != "ALL" and not any(_matches(code, selector) for code in codes):
            raise UnknownRuleError(f"unknown rule selector `{selector}`")


def select_codes(select: Iterable[str], ignore: Iterable[str]) -> list[str]:
    """Codes chosen by prefixes (`TFR1`, `TFR102`, `ALL`), in fix order. The
    more specific of a matching select and ignore wins, as in Ruff."""
    select = list(select)
    ignore = list(ignore)
    chosen = []
    for code in _codes():
        best_select = max((len(s) for s in select if _matches(code, s)), default=-1)
        best_ignore = max((len(s) for s in ignore if _matches(code, s)), default=-1)
        if best_select >= 0 and best_select > best_ignore:
            chosen.append(code)
    return chosen


def select_rules(select: Iterable[str], ignore: Iterable[str]) -> list[Rule]:
    """The rules `select_codes` chooses."""
    by_code = _rules()[1]
    return [by_code[code] for code in select_codes(select, ignore)]
