"""What every rule's pre-parse check is given, and the pieces they share.

Most files of a project have nothing any rule could report, and parsing
them with LibCST is the cost of a run. Each rule's registry entry
(`rules.registry.RuleSpec.scope`) carries a cheap test on the file's
`ModuleIndex` and its traced functions: a file for which no selected rule's
test passes is settled without a parse. The tests live in each family's
`scopes.py`, apart from the rules (which import LibCST), so that the main
process can settle a file (in a run where only that file changed, the
whole run) without loading LibCST at all. A test may say yes where the rule
then finds nothing; it must never say no where the rule would report.

This module holds only what the tests of several families use. It, and the
families' `scopes.py`, import the fact modules inside the tests, not at the
top: every run reads the registry (to select rules), and a run answered from
the cache never needs the facts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tfrewrite.facts.index_records import FunctionInfo, ModuleIndex
    from tfrewrite.facts.traced_function import TracedFunction

# A file's traced functions by qualname, with what the project knows of each
# (pass-1 facts): what the tests decide from. Iterating it gives the qualnames.
TracedFacts = Mapping[str, "TracedFunction"]

# A rule's pre-parse check: can the rule report anything in this file?
Scope = Callable[["ModuleIndex", TracedFacts], bool]


def traced_infos(index: ModuleIndex, traced: TracedFacts) -> Iterator[FunctionInfo]:
    """Pass 1's facts of each traced function the file defines (a traced
    qualname the index does not hold, such as a lambda's, is skipped)."""
    for qualname in traced:
        info = index.functions.get(qualname)
        if info is not None:
            yield info
