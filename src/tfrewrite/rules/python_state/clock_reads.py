"""Python's clocks read in traced code (TFR202): `time.time()` runs while
tracing, so every call of the traced function gets the time of its trace,
and a duration measured with two readings is a constant of the graph.
`tf.timestamp()` is the op that reads the clock each time it runs."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator

    from tfrewrite.facts.context import FunctionScope, RuleContext
    from tfrewrite.rewrite.fixes import Violation

# The pre-parse check (`scopes.side_effects`) asks the table before any
# LibCST parse, so this module imports LibCST only where it reads a tree.
# Python's clocks: each call reads the host's time. Called while tracing,
# the reading is a constant of the graph.
HOST_CLOCKS = frozenset(
    {
        *(
            f"time.{name}{suffix}"
            for name in ("time", "perf_counter", "monotonic", "process_time", "thread_time")
            for suffix in ("", "_ns")
        ),
        "datetime.datetime.now",
        "datetime.datetime.utcnow",
        "datetime.datetime.today",
        "datetime.date.today",
        "timeit.default_timer",
    }
)


def clock_reads(function: FunctionScope, ctx: RuleContext, local: set[str]) -> Iterator[Violation]:
    """`time.time()` and Python's other clocks: read once, while tracing, so
    every call gets the time of its trace (a duration measured with them
    is a constant of the graph)."""
    import libcst as cst

    from tfrewrite.facts.walk import iter_nodes
    from tfrewrite.rewrite.fixes import Violation

    nodes = list(iter_nodes(function.node.body, into_functions=False))
    # A seed picks the sequence; the traced op still draws afresh per call.
    seeding = {
        id(inner)
        for arg in nodes
        if isinstance(arg, cst.Arg) and arg.keyword is not None and arg.keyword.value == "seed"
        for inner in iter_nodes(arg.value)
    }
    for node in nodes:
        if not isinstance(node, cst.Call) or id(node) in seeding:
            continue
        head = node.func
        while isinstance(head, cst.Attribute):
            head = head.value
        if isinstance(head, cst.Name) and head.value in local:
            continue  # a local name, not the module
        if ctx.names.qualified_name(node.func) not in HOST_CLOCKS:
            continue
        yield Violation(
            node,
            f"`{ctx.code(node)}` in traced `{function.qualname}` reads the host clock once, "
            "while tracing: every call gets the time of its trace, and a duration measured "
            "with it is a constant of the graph; use `tf.timestamp()`, which reads the clock "
            "each time the op runs, or time the call from eager code",
        )
