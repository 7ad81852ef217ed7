"""Pre-parse checks of the randomness rules, on pass-1 facts alone (no
LibCST): see `facts.rule_scopes`."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tfrewrite.facts.index import ModuleIndex
    from tfrewrite.facts.rule_scopes import Scope, TracedFacts


def calls_into(prefix: str) -> Scope:
    """Traced code (nested functions included) calls a function of the
    module `prefix` names (`numpy.random`, `random`)."""
    dotted = prefix + "."

    def scope(index: ModuleIndex, traced: TracedFacts) -> bool:
        from tfrewrite.facts.prefilters import traced_callees

        if any(name.startswith(dotted) for name in traced_callees(index, traced)):
            return True
        # A lambda run traced (`ds.map(lambda x: x + np.random.rand())`) in a
        # module that imports the random module, or a package holding it.
        return bool(index.traced_lambdas) and any(
            dotted.startswith(name + ".") or name.startswith(dotted)
            for name in index.imports.values()
        )

    return scope


_CALLS_NUMPY_RANDOM = calls_into("numpy.random")

# TFR106: traced code calls Python's `random` module.
python_random = calls_into("random")


def numpy_random(index: ModuleIndex, traced: TracedFacts) -> bool:
    """TFR102: traced code calls `numpy.random`, or there is traced code and
    a NumPy generator created anywhere (a draw from it is a method call,
    which pass 1 does not resolve)."""
    from tfrewrite.facts.vocabulary import NUMPY_GENERATORS

    if _CALLS_NUMPY_RANDOM(index, traced):
        return True
    return bool(traced) and not NUMPY_GENERATORS.isdisjoint(
        (*index.called_names, *index.default_calls)
    )
