"""The rule registry. The order of `ALL_RULES` is the order fixes apply in:
structural rewrites of control flow first, then call-level rewrites, then the
training-loop rules that move decorators."""

from __future__ import annotations

from collections.abc import Iterable

from tfrewrite.rules.base import Rule

_RULE_MODULES = (
    "tfrewrite.rules.tensor_if",  # TFR101
    "tfrewrite.rules.numpy_random",  # TFR102
    "tfrewrite.rules.python_print",  # TFR103
    "tfrewrite.rules.python_random",  # TFR106
    "tfrewrite.rules.training_loop",  # TFR3xx
)


def _load() -> list[Rule]:
    import importlib

    rules: list[Rule] = []
    for name in _RULE_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as err:
            if err.name == name:
                continue  # a rule module not written yet
            raise
        rules.extend(cls() for cls in getattr(module, "RULES", ()))
    return rules


ALL_RULES: list[Rule] = _load()
RULES_BY_CODE: dict[str, Rule] = {rule.code: rule for rule in ALL_RULES}


class UnknownRuleError(ValueError):
    pass


def _matches(code: str, selector: str) -> bool:
    return selector == "ALL" or code.startswith(selector)


def validate_selectors(selectors: Iterable[str]) -> None:
    for selector in selectors:
        if selector != "ALL" and not any(_matches(r.code, selector) for r in ALL_RULES):
            raise UnknownRuleError(f"unknown rule selector `{selector}`")


def select_rules(select: Iterable[str], ignore: Iterable[str]) -> list[Rule]:
    """Rules chosen by code prefixes (`TFR1`, `TFR102`, `ALL`), in fix order.
    The more specific of a matching select and ignore wins, as in Ruff."""
    select = list(select)
    ignore = list(ignore)
    chosen = []
    for rule in ALL_RULES:
        best_select = max((len(s) for s in select if _matches(rule.code, s)), default=-1)
        best_ignore = max((len(s) for s in ignore if _matches(rule.code, s)), default=-1)
        if best_select >= 0 and best_select > best_ignore:
            chosen.append(rule)
    return chosen
