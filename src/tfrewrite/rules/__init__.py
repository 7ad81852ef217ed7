"""The rule registry. The order of `ALL_RULES` is the order fixes apply in:
structural rewrites of control flow first, then call-level rewrites, then the
training-loop rules that move decorators."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tfrewrite.rules.base import Rule

RULE_MODULES = (
    "tfrewrite.rules.tensor_conditions.tensor_if",  # TFR101
    "tfrewrite.rules.randomness.numpy_random",  # TFR102
    "tfrewrite.rules.host_values.python_print",  # TFR103
    "tfrewrite.rules.numpy_math.numpy_math",  # TFR104
    "tfrewrite.rules.host_values.numpy_call",  # TFR105
    "tfrewrite.rules.randomness.python_random",  # TFR106
    "tfrewrite.rules.static_shapes.static_shape",  # TFR107
    "tfrewrite.rules.python_state.module_state",  # TFR201
    "tfrewrite.rules.python_state.python_side_effects",  # TFR202
    "tfrewrite.rules.python_state.retracing",  # TFR203
    "tfrewrite.rules.python_state.variable_creation",  # TFR204
    "tfrewrite.rules.host_values.python_logging",  # TFR205
    "tfrewrite.rules.training.loss_decorator",  # TFR301
    "tfrewrite.rules.training.train_step",  # TFR302
    "tfrewrite.rules.training.inline_loop",  # TFR303
    "tfrewrite.rules.training.tape_checks",  # TFR304, TFR305
    "tfrewrite.rules.training.metric_averaging",  # TFR306
    "tfrewrite.rules.training.eager_switch",  # TFR307
)


# Every rule's code, in fix order, known without importing the rules (which
# import LibCST): a `check` answered from the cache never needs them. A test
# keeps this list equal to the registry.
RULE_CODES = (
    "TFR101",
    "TFR102",
    "TFR103",
    "TFR104",
    "TFR105",
    "TFR106",
    "TFR107",
    "TFR201",
    "TFR202",
    "TFR203",
    "TFR204",
    "TFR205",
    "TFR301",
    "TFR302",
    "TFR303",
    "TFR304",
    "TFR305",
    "TFR306",
    "TFR307",
)


def _load() -> list[Rule]:
    import importlib

    rules: list[Rule] = []
    for name in RULE_MODULES:
        module = importlib.import_module(name)
        rules.extend(cls() for cls in module.RULES)
    return rules


_registry: tuple[list[Rule], dict[str, Rule]] | None = None


def _rules() -> tuple[list[Rule], dict[str, Rule]]:
    global _registry
    if _registry is None:
        rules = _load()
        _registry = (rules, {rule.code: rule for rule in rules})
    return _registry


def __getattr__(name: str):  # noqa: ANN202 - PEP 562 lazy registry
    """`ALL_RULES` and `RULES_BY_CODE` load the rule modules on first use, so
    rule modules can import the shared analysis (which imports `rules.base`)."""
    if name == "ALL_RULES":
        return _rules()[0]
    if name == "RULES_BY_CODE":
        return _rules()[1]
    raise AttributeError(name)


class UnknownRuleError(ValueError):
    pass


def _matches(code: str, selector: str) -> bool:
    return selector == "ALL" or code.startswith(selector)


def _codes() -> tuple[str, ...]:
    """Rule codes in fix order: from the registry once it is loaded (it is
    the authority, and may hold rules registered at run time), else the
    static list."""
    if _registry is not None:
        return tuple(rule.code for rule in _registry[0])
    return RULE_CODES


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
