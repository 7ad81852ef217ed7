"""Python logging calls on LibCST nodes: the LibCST side of
`vocabulary.is_logging_call` (pass 1 asks the same question on `ast` nodes
for `FunctionInfo.calls_python_logging`).

TFR205 reports the calls that log a tensor in traced code; the decoration
gate keeps a train step eager when it logs at all, whichever rules run.
"""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from tfrewrite.facts.bindings import module_names_bound_to_calls
from tfrewrite.facts.context import RuleContext
from tfrewrite.facts.vocabulary import LOG_METHODS, is_logger_factory, is_logging_call
from tfrewrite.facts.walk import iter_nodes


def logger_names(ctx: RuleContext) -> set[str]:
    """Module-level names bound to a Python logger (`logger = logging.getLogger(...)`)."""
    return module_names_bound_to_calls(ctx.module, ctx.names, is_logger_factory)


def is_logging_call_node(ctx: RuleContext, node: cst.Call, loggers: set[str]) -> bool:
    """`logging.info(...)`, `absl.logging.warning(...)`, `tf.get_logger().info(...)`,
    or `logger.info(...)` on a name in `loggers` (`logger_names`)."""
    func = node.func
    if not isinstance(func, cst.Attribute) or func.attr.value not in LOG_METHODS:
        return False
    receiver = func.value
    logger = (
        isinstance(receiver, cst.Call)
        and is_logger_factory(ctx.names.qualified_name(receiver.func))
    ) or (isinstance(receiver, cst.Name) and receiver.value in loggers)
    return is_logging_call(func.attr.value, ctx.names.qualified_name(func), logger)


def logging_calls(ctx: RuleContext, root: cst.CSTNode, loggers: set[str]) -> Iterator[cst.Call]:
    """The Python logging calls under `root`, not inside nested definitions."""
    for node in iter_nodes(root, into_functions=False):
        if isinstance(node, cst.Call) and is_logging_call_node(ctx, node, loggers):
            yield node
