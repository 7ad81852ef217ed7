"""TFR106: Python `random` sampling in traced code -> `tf.random`.

Before/after source tests for every mapping (including `randint`'s inclusive
upper bound), the dtype choice, import spellings, and the calls that must be
left alone or refused with a reason."""

from __future__ import annotations

import textwrap

import pytest

from tfrewrite.api import check_source, fix_source, fix_source_with_findings

SELECT = ["TFR106"]

# `y_pred` is a tensor to the analysis (a loss parameter name); `x` and `n` are unknown.
TRACED = """\
import math
import random
import tensorflow as tf


@tf.function
def f(x, y_pred, n):
    return {expr}
"""

NOT_TRACED = TRACED.replace("@tf.function\n", "")


def _traced_after(expr: str) -> str:
    """`TRACED` after a fix: `import random` goes when nothing uses it any more."""
    source = TRACED.format(expr=expr)
    return (
        source
        if "random." in expr.replace("tf.random.", "")
        else source.replace("import random\n", "", 1)
    )


MAPPINGS = [
    ("random.random()", "tf.random.uniform([])"),
    ("random.uniform(0.8, 1.2)", "tf.random.uniform([], minval=0.8, maxval=1.2)"),
    ("random.uniform(a=-1, b=1)", "tf.random.uniform([], minval=-1, maxval=1)"),
    ("random.gauss(0.0, 0.1)", "tf.random.normal([], mean=0.0, stddev=0.1)"),
    ("random.gauss()", "tf.random.normal([])"),
    ("random.gauss(sigma=2.0)", "tf.random.normal([], stddev=2.0)"),
    ("random.normalvariate(1.0, 0.5)", "tf.random.normal([], mean=1.0, stddev=0.5)"),
    # randint includes b: maxval is b + 1
    ("random.randint(1, 6)", "tf.random.uniform([], minval=1, maxval=7, dtype=tf.int32)"),
    ("random.randint(-3, -1)", "tf.random.uniform([], minval=-3, maxval=0, dtype=tf.int32)"),
    ("random.randint(0, n)", "tf.random.uniform([], minval=0, maxval=n + 1, dtype=tf.int32)"),
    ("random.randint(0, n - 1)", "tf.random.uniform([], minval=0, maxval=n, dtype=tf.int32)"),
    ("random.randint(0, n - 3)", "tf.random.uniform([], minval=0, maxval=n - 2, dtype=tf.int32)"),
    (
        "random.randint(0, len(x) * 2)",
        "tf.random.uniform([], minval=0, maxval=len(x) * 2 + 1, dtype=tf.int32)",
    ),
    (
        "random.randint(0, n | 1)",
        "tf.random.uniform([], minval=0, maxval=(n | 1) + 1, dtype=tf.int32)",
    ),
    (
        "random.randint(0, (n - 1))",
        "tf.random.uniform([], minval=0, maxval=(n - 1) + 1, dtype=tf.int32)",
    ),
    (
        "random.randint(a=0, b=x.shape[0])",
        "tf.random.uniform([], minval=0, maxval=x.shape[0] + 1, dtype=tf.int32)",
    ),
    # randrange excludes stop already
    ("random.randrange(10)", "tf.random.uniform([], maxval=10, dtype=tf.int32)"),
    ("random.randrange(2, 10)", "tf.random.uniform([], minval=2, maxval=10, dtype=tf.int32)"),
    ("random.randrange(2, 10, 1)", "tf.random.uniform([], minval=2, maxval=10, dtype=tf.int32)"),
    # dtype: combined with a tensor, the tensor's dtype
    ("y_pred + random.random()", "y_pred + tf.random.uniform([], dtype=y_pred.dtype)"),
    (
        "y_pred * (1 + 0.1 * random.gauss(0, 1))",
        "y_pred * (1 + 0.1 * tf.random.normal([], mean=0, stddev=1, dtype=y_pred.dtype))",
    ),
    (
        "y_pred + random.randint(0, 2)",
        "y_pred + tf.cast(tf.random.uniform([], minval=0, maxval=3, dtype=tf.int32), y_pred.dtype)",
    ),
    # otherwise float32 / int32 (how TensorFlow converts Python numbers)
    ("x + random.random()", "x + tf.random.uniform([])"),
    (
        "y_pred[random.randint(0, 2)]",
        "y_pred[tf.random.uniform([], minval=0, maxval=3, dtype=tf.int32)]",
    ),
    (
        "y_pred[random.randrange(3) + 1]",
        "y_pred[tf.random.uniform([], maxval=3, dtype=tf.int32) + 1]",
    ),
]


@pytest.mark.parametrize(("before", "after"), MAPPINGS)
def test_mapping(before: str, after: str) -> None:
    source = TRACED.format(expr=before)
    fixed, applied, remaining = fix_source_with_findings(source, select=SELECT, unsafe_fixes=True)
    assert fixed == _traced_after(after)
    assert remaining == [] and len(applied) == 1
    assert fix_source(fixed, select=SELECT, unsafe_fixes=True) == fixed  # idempotent


@pytest.mark.parametrize(("before", "after"), MAPPINGS)
def test_same_call_outside_traced_code_is_untouched(before: str, after: str) -> None:
    source = NOT_TRACED.format(expr=before)
    assert check_source(source, select=SELECT) == []


@pytest.mark.parametrize(
    ("import_line", "call"),
    [
        ("import random", "random.uniform(0, 1)"),
        ("import random as rnd", "rnd.uniform(0, 1)"),
        ("from random import uniform", "uniform(0, 1)"),
        ("from random import uniform as jitter", "jitter(0, 1)"),
    ],
)
def test_import_spellings(import_line: str, call: str) -> None:
    source = (
        f"{import_line}\nimport tensorflow as tf\n\n\n@tf.function\ndef f(x):\n    return {call}\n"
    )
    # The fix leaves `random` unused: its import goes.
    assert fix_source(source, select=SELECT, unsafe_fixes=True) == source.replace(
        call, "tf.random.uniform([], minval=0, maxval=1)"
    ).replace(f"{import_line}\n", "")


def test_tensorflow_import_added_when_the_file_has_none() -> None:
    source = textwrap.dedent(
        """\
        import random
        import keras


        def loss(y_true, y_pred):
            return keras.ops.mean(y_pred - y_true) * random.uniform(0.9, 1.1)


        keras.Sequential().compile(loss=loss)
        """
    )
    fixed = fix_source(source, select=SELECT, unsafe_fixes=True)
    assert fixed.count("import tensorflow as tf\n") == 1
    assert "* tf.random.uniform([], minval=0.9, maxval=1.1)" in fixed


NEGATIVES = {
    "numpy's random is TFR102's": """
        from numpy import random
        import tensorflow as tf

        @tf.function
        def f(x):
            return x + random.normal()
        """,
    "a random.Random instance": """
        import random
        import tensorflow as tf

        RNG = random.Random(0)

        @tf.function
        def f(x):
            return x + RNG.random()
        """,
    "a local name random": """
        import tensorflow as tf

        @tf.function
        def f(x, random):
            return x + random.random()
        """,
    "default argument": """
        import random
        import tensorflow as tf

        @tf.function
        def f(x, p=random.random()):
            return x * p
        """,
}


@pytest.mark.parametrize("source", NEGATIVES.values(), ids=NEGATIVES.keys())
def test_negatives(source: str) -> None:
    assert check_source(textwrap.dedent(source), select=SELECT) == []


REFUSALS = [
    ("random.choice([1, 2.5, 'a'])", "is not known to be a list or tuple of numbers"),
    ("random.shuffle(x)", "only a statement `shuffle(name)` at the top of the function body"),
    ("random.sample(x, 2)", "`x` is not bound once to a list or tuple of numbers"),
    ("random.betavariate(1, 2)", "`betavariate` has no faithful `tf.random` mapping"),
    ("random.randrange(0, 10, 2)", "`step=2`: only a step of 1"),
    ("random.randint(1)", "required argument `b` is missing"),
    ("random.uniform(0, 1, 2)", "at most 2 positional arguments"),
    ("random.gauss(*params)", "unpacked argument `*params`"),
    ("random.random(3)", "at most 0 positional arguments"),
    ("n * random.randint(0, 3)", "integer sample meets `n`, whose dtype is not known"),
    ("int(random.random() * 10)", "passed to `int(...)`"),
    ("range(random.randint(1, 3))", "passed to `range(...)`"),
    ("math.exp(random.gauss(0, 1))", "passed to `math.exp(...)`"),
    ("round(random.uniform(0, 1), 2)", "passed to `round(...)`"),
]


@pytest.mark.parametrize(("expr", "reason"), REFUSALS)
def test_refusals_say_why(expr: str, reason: str) -> None:
    source = TRACED.format(expr=expr)
    (finding,) = check_source(source, select=SELECT)
    assert finding.fix is None
    assert "runs once, at trace time" in finding.message
    assert reason in finding.message
    assert fix_source(source, select=SELECT, unsafe_fixes=True) == source


def test_seed_is_a_finding_without_fix() -> None:
    source = TRACED.format(expr="random.seed(0)")
    (finding,) = check_source(source, select=SELECT)
    assert finding.fix is None and "does not seed `tf.random`" in finding.message
    assert fix_source(source, select=SELECT) == source


def test_message() -> None:
    (finding,) = check_source(TRACED.format(expr="y_pred[random.randint(1, 6)]"), select=SELECT)
    assert finding.message.startswith(
        "`random.randint(...)` in traced code runs once, at trace time"
    )
    assert (
        finding.fix is not None
        and finding.fix.message == "Sample with `tf.random.uniform` on every call"
    )


def test_a_call_over_several_lines_keeps_its_comments() -> None:
    source = TRACED.format(expr="random.randint(\n        1,\n        6,  # a die\n    )")
    assert fix_source(source, select=SELECT, unsafe_fixes=True) == _traced_after(
        "tf.random.uniform(\n        [],\n        minval=1,\n        maxval=7,  # a die\n"
        "        dtype=tf.int32,\n    )"
    )


# -- following the sample to its uses, and seeds ------------------------------------------

USES = """\
import random
import tensorflow as tf


@tf.function
def f(x: tf.Tensor, y):
{body}
"""


def _uses(body: str) -> str:
    return USES.format(body=textwrap.indent(textwrap.dedent(body).strip("\n"), "    "))


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ("sizes = [8, 16]\nreturn x[: sizes[random.randint(0, 1)]]", "indexes `sizes`"),
        (
            "return tf.image.random_hue(x, random.uniform(0.0, 0.1))",
            "`tf.image.random_hue(...)` as `max_delta`, which it compares in Python",
        ),
        ("while random.random() < 0.9:\n    x = x * 2\nreturn x", "Python `while` loop"),
        (
            "k = random.randint(1, 3)\nreturn tf.tile(x, [k] * 2)",
            "held in `k`, is passed to `tf.tile(...)`: a host value adapts to the dtype the op "
            "needs, a tensor does not",
        ),
    ],
)
def test_uses_that_need_a_python_value_refuse_the_fix(body: str, reason: str) -> None:
    source = _uses(body)
    (finding,) = check_source(source, select=SELECT)
    if finding.fix is not None:  # a use that cannot be followed: an unsafe fix
        assert reason in finding.fix.message
        assert fix_source(source, select=SELECT) == source
        return
    assert reason in finding.message
    assert fix_source(source, select=SELECT, unsafe_fixes=True) == source


def test_python_number_returned_becomes_a_tensor_unsafely() -> None:
    """A traced function returns a Python number as it is; the rewrite returns
    a tensor: unsafe."""
    (finding,) = check_source(_uses("return random.random()"), select=SELECT)
    assert finding.fix is not None and "unsafe: the sample is returned" in finding.fix.message


def test_module_seed_without_tensorflow_seed_is_refused() -> None:
    source = (
        "import random\nimport tensorflow as tf\n\nrandom.seed(0)\n\n\n"
        "@tf.function\ndef f(x: tf.Tensor):\n    return x * random.random()\n"
    )
    (finding,) = check_source(source, select=SELECT)
    assert finding.fix is None
    assert "the draws are seeded by `random.seed(0)`" in finding.message
    assert "call `tf.random.set_seed(...)` before the function is traced" in finding.message


def test_seed_in_the_function_gives_stateless_draws() -> None:
    source = _uses("random.seed(3)\nreturn x * random.gauss(1.0, 0.1)")
    fixed = fix_source(source, select=SELECT, unsafe_fixes=True)
    assert (
        "return x * tf.random.stateless_normal([], seed=[3, 0], mean=1.0, stddev=0.1, "
        "dtype=x.dtype)" in fixed
    )
