"""Pass 1 (on `ast`) and the rules' facts (on LibCST) answer the same
questions about every function: does it open a gradient tape, apply
gradients, call Python logging, carry `@tf.function`. Each question is
defined once (`facts.vocabulary`) and asked on both trees; a disagreement
means one side extracts different strings from its node, and a rule's
pre-parse check and its finding would then disagree about the same code."""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import libcst as cst
import pytest

from tfrewrite.api import check_source
from tfrewrite.facts.context import FunctionScope, RuleContext
from tfrewrite.facts.index import TF_FUNCTION_NAMES, build_index
from tfrewrite.facts.index_records import FunctionInfo
from tfrewrite.facts.logging_calls import logger_names, logging_calls
from tfrewrite.facts.project import compute_facts
from tfrewrite.facts.tf_function import tf_function_decorator
from tfrewrite.facts.training import applies_gradients, tape_blocks
from tfrewrite.rules import ALL_RULES
from tfrewrite.rules.base import Invalid

ROOT = Path(__file__).resolve().parent.parent
CORPORA = (ROOT / "examples", ROOT / "tests" / "data" / "adversarial")


def _sources() -> Iterator[tuple[str, str]]:
    """(name, source) of every Python file of the corpora and every rule example."""
    for corpus in CORPORA:
        for path in sorted(corpus.rglob("*.py")):
            yield str(path.relative_to(ROOT)), path.read_text()
    for rule in ALL_RULES:
        for number, example in enumerate(rule.examples):
            code = example.before if isinstance(example, Invalid) else example.code
            yield f"{rule.code}-example-{number}", textwrap.dedent(code)
            after = example.after if isinstance(example, Invalid) else None
            if after:
                yield f"{rule.code}-example-{number}-fixed", textwrap.dedent(after)


SOURCES = dict(_sources())

# Each shared fact: (pass-1 answer, LibCST answer), per function.
Fact = tuple[Callable[[FunctionInfo], bool], Callable[[RuleContext, FunctionScope], bool]]
FACTS: dict[str, Fact] = {
    "opens a gradient tape": (
        lambda info: info.opens_gradient_tape,
        lambda ctx, f: any(True for _ in tape_blocks(ctx, f.node.body)),
    ),
    "applies gradients": (
        lambda info: info.applies_gradients,
        lambda ctx, f: applies_gradients(f.node.body),
    ),
    "calls Python logging": (
        lambda info: info.calls_python_logging,
        lambda ctx, f: any(True for _ in logging_calls(ctx, f.node.body, logger_names(ctx))),
    ),
    "is decorated with tf.function": (
        lambda info: any(d in TF_FUNCTION_NAMES for d in info.decorators),
        lambda ctx, f: tf_function_decorator(ctx, f.node) is not None,
    ),
}


def _disagreements(name: str, source: str) -> list[str]:
    path = name if name.endswith(".py") else f"{name}.py"
    index = build_index(source, path, Path(path).stem)
    assert index.syntax_error is None, index.syntax_error
    traced = compute_facts([index]).for_path(path)
    ctx = RuleContext(path, cst.parse_module(source), index, traced)
    found = []
    for function in ctx.functions:
        info = index.functions.get(function.qualname)
        assert info is not None, f"pass 1 does not know `{function.qualname}`"
        for fact, (pass_one, pass_two) in FACTS.items():
            first, second = pass_one(info), pass_two(ctx, function)
            if first != second:
                found.append(
                    f"`{function.qualname}` {fact}: pass 1 says {first}, LibCST says {second}"
                )
    return found


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_pass_one_and_libcst_agree_on_every_shared_fact(name: str) -> None:
    assert _disagreements(name, SOURCES[name]) == []


def test_the_corpora_exercise_every_fact() -> None:
    """The agreement above means something only if each fact holds somewhere."""
    held: set[str] = set()
    for name, source in SOURCES.items():
        path = name if name.endswith(".py") else f"{name}.py"
        index = build_index(source, path, Path(path).stem)
        for info in index.functions.values():
            held.update(fact for fact, (pass_one, _) in FACTS.items() if pass_one(info))
    assert held == set(FACTS)


# Spellings both sides must read the same way, beyond what the corpora hold.
SPELLINGS = {
    "tape from an import": """
        from tensorflow import GradientTape

        def step(x):
            with GradientTape() as tape:
                y = x * x
            return tape.gradient(y, x)
    """,
    "Keras 3 apply, and assign_sub": """
        def step(optimizer, grads, variables, w, lr, dw, counter):
            optimizer.apply(grads, variables)
            w.assign_sub(lr * dw)
            counter.assign_sub(1)

        def not_a_step(self, opt, fn, w):
            fn.apply(w)
            opt.apply(grads=w)
            w.assign_sub(value=1)
    """,
    "keyword descent": """
        def step(w, g):
            w.assign_sub(value=g)
    """,
    "logging spellings": """
        import logging

        import tensorflow as tf
        from absl import logging as absl_logging

        logger = logging.getLogger(__name__)

        def a(x):
            logging.info("x %s", x)

        def b(x):
            tf.get_logger().warning("x %s", x)

        def c(x):
            logger.debug("x %s", x)

        def d(x):
            absl_logging.info("x %s", x)

        def e(x):
            tf.compat.v1.logging.info("x %s", x)

        def not_logging(x, log):
            log.info(x)
            logging.getLogger(__name__)
    """,
}


@pytest.mark.parametrize("name", sorted(SPELLINGS))
def test_pass_one_and_libcst_agree_on_spellings(name: str) -> None:
    assert _disagreements(name.replace(" ", "_"), textwrap.dedent(SPELLINGS[name])) == []


def test_spellings_are_read_as_meant() -> None:
    source = textwrap.dedent(SPELLINGS["logging spellings"])
    index = build_index(source, "logs.py", "logs")
    logging_functions = {q for q, info in index.functions.items() if info.calls_python_logging}
    assert logging_functions == {"a", "b", "c", "d", "e"}
    source = textwrap.dedent(SPELLINGS["Keras 3 apply, and assign_sub"])
    index = build_index(source, "steps.py", "steps")
    assert index.functions["step"].applies_gradients
    assert not index.functions["not_a_step"].applies_gradients
    source = textwrap.dedent(SPELLINGS["tape from an import"])
    assert build_index(source, "tape.py", "tape").functions["step"].opens_gradient_tape


def test_logging_through_tf_compat_v1_is_not_skipped_before_the_parse() -> None:
    """The pre-parse check of TFR205 asks pass 1's `calls_python_logging`,
    so a file that logs only through `tf.compat.v1.logging` (no `import
    logging`, no `tf.get_logger()`) is parsed and reported."""
    source = textwrap.dedent(
        """
        import tensorflow as tf

        @tf.function
        def train_step(x):
            loss = tf.reduce_mean(x)
            tf.compat.v1.logging.info("loss %s", loss)
            return loss
        """
    )
    assert [f.code for f in check_source(source, select=["TFR205"])] == ["TFR205"]
