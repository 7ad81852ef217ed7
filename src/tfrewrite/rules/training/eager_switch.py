"""TFR307: `tf.config.run_functions_eagerly(True)` left on outside tests."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from tfrewrite.facts.context import RuleContext
from tfrewrite.facts.module_constants import module_literals
from tfrewrite.facts.walk import iter_with_ancestors
from tfrewrite.findings import Applicability
from tfrewrite.rewrite.fixes import CstFix, NodeEdit, Violation
from tfrewrite.rules.base import Invalid, Rule, Valid
from tfrewrite.rules.training.statements import remove_statement_edits

SWITCHES = frozenset(
    {
        "tensorflow.config.run_functions_eagerly",
        "tensorflow.config.experimental_run_functions_eagerly",
        "tensorflow.compat.v2.config.run_functions_eagerly",
    }
)


def _is_true(value: cst.BaseExpression, true_flags: frozenset[str]) -> bool:
    """The literal `True`, or a module flag bound once to it (`DEBUG = True`)."""
    return isinstance(value, cst.Name) and (value.value == "True" or value.value in true_flags)


def _turns_on(call: cst.Call, true_flags: frozenset[str]) -> bool:
    """`run_functions_eagerly(True)`, or of a module flag bound once to `True`
    (`DEBUG = True` ... `run_functions_eagerly(DEBUG)`)."""
    return len(call.args) == 1 and _is_true(call.args[0].value, true_flags)


def _module_true_flags(ctx: RuleContext) -> frozenset[str]:
    """Module names every binding of which is the literal `True` and that
    nothing rebinds elsewhere (pass 1's rebound names: `global` assignments,
    other modules): a constant switch, as good as the literal."""
    constants = module_literals(ctx.module).constants()
    rebound = ctx.index.rebound_module_names
    return frozenset(
        name for name, value in constants.items() if value == "True" and name not in rebound
    )


def _without_argument(call: cst.Call, argument: cst.Arg) -> cst.Call:
    """`call` without `argument`; a removed last argument leaves its comma
    (a trailing comma or none) to the argument before it."""
    kept = [a for a in call.args if a is not argument]
    if kept and call.args[-1] is argument:
        kept[-1] = kept[-1].with_changes(comma=argument.comma)
    return call.with_changes(args=kept)


def _scope(ancestors: tuple[cst.CSTNode, ...]) -> cst.CSTNode | None:
    """The innermost function around a call (None at module level)."""
    return next((a for a in reversed(ancestors) if isinstance(a, cst.FunctionDef)), None)


class EagerSwitchLeftOn(Rule):
    code = "TFR307"
    name = "run-functions-eagerly-left-on"
    summary = (
        "`tf.config.run_functions_eagerly(True)` or `compile(run_eagerly=True)` in non-test "
        "code turns tracing off"
    )
    fix_applicability = Applicability.UNSAFE
    needs_traced_code = False
    explanation = """
        ## What it does
        Finds `tf.config.run_functions_eagerly(True)` left in a program
        outside its tests, and removes it; and `model.compile(...,
        run_eagerly=True)`, the same switch for one model, and removes the
        keyword.

        ## Why is this bad?
        `tf.config.run_functions_eagerly(True)` makes every `tf.function` run its
        Python eagerly: a debugging switch. Left in a training script it silently
        removes every graph (and the speed-up of every decorated step), and it
        hides the tracing behaviour the code will have once it is removed.
        `compile(run_eagerly=True)` does the same to one model: `fit` runs its
        `train_step` and `call` op by op, and tfrewrite checks them as eager
        code (what tracing would change in them is not reported until the
        keyword goes).

        ## When it is reported
        Reported outside test files (`test_*.py`, `*_test.py`, `conftest.py`,
        `tests/`), when called at statement level with a literal `True` or a
        module flag bound once to `True` (`DEBUG = True`, never rebound), also in
        the script's `if __name__ == "__main__":` block, which runs as surely as
        its top level: a call under another `if` (`if args.debug:`) is a
        deliberate switch and is left alone, and so is a function that switches
        it back itself (a context manager that restores the previous setting).

        ## Fix safety
        The fix removes the call. Always unsafe (applied with
        `--unsafe-fixes`): the program then runs traced, which is the point,
        but Python side effects in traced code change (they run once, at trace
        time). The fix does not look at what the program's `tf.function`s do:
        review them, or run `tfrewrite check` on the result.
    """
    examples = (
        Invalid(
            """
            import tensorflow as tf

            tf.config.run_functions_eagerly(True)
            model = build_model()
            """,
            """
            model = build_model()
            """,
            unsafe=True,
        ),
        Invalid(
            """
            from tensorflow import config

            def main():
                config.run_functions_eagerly(True)
            """,
            """
            def main():
                pass
            """,
            unsafe=True,
        ),
        Invalid(
            """
            import tensorflow as tf

            DEBUG = True
            tf.config.run_functions_eagerly(DEBUG)
            """,
            """
            DEBUG = True
            """,
            unsafe=True,
        ),
        Valid(
            """
            import tensorflow as tf

            DEBUG = False
            tf.config.run_functions_eagerly(DEBUG)
            """,
        ),
        Valid(
            """
            import tensorflow as tf

            DEBUG = True
            if __name__ == "__main__":
                DEBUG = parse_args().debug
            tf.config.run_functions_eagerly(DEBUG)
            """,
            note="the flag is rebound: its value is not known",
        ),
        Valid(
            """
            import tensorflow as tf

            if args.debug:
                tf.config.run_functions_eagerly(True)
            """,
        ),
        Valid(
            """
            import tensorflow as tf

            tf.config.run_functions_eagerly(False)
            """,
        ),
        Invalid(
            """
            import keras

            model = keras.Sequential([keras.layers.Dense(1)])
            model.compile(
                optimizer="adam",
                loss="mse",
                run_eagerly=True,
            )
            """,
            """
            import keras

            model = keras.Sequential([keras.layers.Dense(1)])
            model.compile(
                optimizer="adam",
                loss="mse",
            )
            """,
            unsafe=True,
        ),
        Valid(
            """
            import keras

            model = keras.Sequential([keras.layers.Dense(1)])
            model.compile(optimizer="adam", loss="mse", run_eagerly=args.debug)
            """,
            note="a choice made at run time",
        ),
        Valid(
            """
            import contextlib
            import tensorflow as tf

            @contextlib.contextmanager
            def eagerly():
                previous = tf.config.functions_run_eagerly()
                tf.config.run_functions_eagerly(True)
                yield
                tf.config.run_functions_eagerly(previous)
            """,
            note="switched back in the same function: a deliberate, bounded use",
        ),
    )

    def check(self, ctx: RuleContext) -> Iterator[Violation]:
        yield from self._switches(ctx)
        yield from self._eager_compiles(ctx)

    def _eager_compiles(self, ctx: RuleContext) -> Iterator[Violation]:
        """`model.compile(..., run_eagerly=True)`: `fit` then runs this
        model's `train_step` and `call` eagerly, the switch scoped to one
        model (a keyword under an `if` or given a variable is a deliberate
        choice, and left alone)."""
        true_flags: frozenset[str] | None = None
        for node, ancestors in iter_with_ancestors(ctx.module):
            if not (
                isinstance(node, cst.Call)
                and isinstance(node.func, cst.Attribute)
                and node.func.attr.value == "compile"
            ):
                continue
            flag = next(
                (
                    a
                    for a in node.args
                    if a.keyword is not None and a.keyword.value == "run_eagerly"
                ),
                None,
            )
            if flag is None or any(isinstance(a, (cst.If, cst.IfExp, cst.Try)) for a in ancestors):
                continue
            if true_flags is None:
                true_flags = _module_true_flags(ctx)
            if not _is_true(flag.value, true_flags):
                continue
            yield Violation(
                flag,
                "`run_eagerly=True` left on: `fit`, `evaluate` and `predict` run this model's "
                "`train_step` and `call` eagerly, op by op, without their graph or its speed-up",
                CstFix(
                    "Remove `run_eagerly=True`",
                    (NodeEdit(node, _without_argument(node, flag)),),
                    applicability=Applicability.UNSAFE,
                ),
            )

    def _switches(self, ctx: RuleContext) -> Iterator[Violation]:
        switches = [
            (node, ancestors)
            for node, ancestors in iter_with_ancestors(ctx.module)
            if isinstance(node, cst.Call) and ctx.names.qualified_name(node.func) in SWITCHES
        ]
        # A scope that also switches back (`run_functions_eagerly(previous)` in
        # a `finally`) uses the switch on purpose, for a bounded stretch.
        true_flags = _module_true_flags(ctx) if switches else frozenset()
        restoring = {id(_scope(a)) for node, a in switches if not _turns_on(node, true_flags)}
        for node, ancestors in switches:
            if not _turns_on(node, true_flags) or id(_scope(ancestors)) in restoring:
                continue
            if any(
                isinstance(a, (cst.If, cst.IfExp, cst.Try)) and not _is_main_guard(a)
                for a in ancestors
            ):
                continue  # a choice (`if args.debug:`), not the script's own run
            if len(ancestors) < 2 or not isinstance(ancestors[-1], cst.Expr):
                continue
            line = ancestors[-2]
            if not isinstance(line, cst.SimpleStatementLine):
                continue
            block = ancestors[-3] if len(ancestors) >= 3 else None
            if len(line.body) > 1:
                edits: tuple[NodeEdit, ...] = (NodeEdit(ancestors[-1], cst.RemovalSentinel.REMOVE),)
            else:
                edits = remove_statement_edits(block, line)
            yield Violation(
                node,
                "`run_functions_eagerly(True)` left on: every `tf.function` runs eagerly, "
                "without its graph or its speed-up",
                CstFix(
                    "Remove the `run_functions_eagerly(True)` call",
                    edits,
                    applicability=Applicability.UNSAFE,
                ),
            )


def _is_main_guard(node: cst.CSTNode) -> bool:
    """`if __name__ == "__main__":` (either way round): the block a script
    runs, as unconditionally as its top level."""
    if not (isinstance(node, cst.If) and isinstance(node.test, cst.Comparison)):
        return False
    test = node.test
    if len(test.comparisons) != 1 or not isinstance(test.comparisons[0].operator, cst.Equal):
        return False
    sides = (test.left, test.comparisons[0].comparator)
    names = {side.value for side in sides if isinstance(side, cst.Name)}
    strings = {side.evaluated_value for side in sides if isinstance(side, cst.SimpleString)}
    return names == {"__name__"} and strings == {"__main__"}


RULES = (EagerSwitchLeftOn,)
