"""TFR102 / TFR106: draws from NumPy generator objects, choices,
`random.sample` and `random.shuffle`: before/after source tests for every
form, and the refusals with their reasons."""

from __future__ import annotations

import textwrap

import pytest

from tfrewrite.api import check_source, fix_source
from tfrewrite.findings import Applicability


def _fix(source: str, code: str, unsafe: bool = False) -> str:
    return fix_source(textwrap.dedent(source), select=[code], unsafe_fixes=unsafe)


def _one(source: str, code: str):
    (finding,) = check_source(textwrap.dedent(source), select=[code])
    return finding


# -- NumPy generator objects -----------------------------------------------------------

MODULE_GENERATOR = """\
import numpy as np
import tensorflow as tf

rng = {constructor}


@tf.function
def f(x: tf.Tensor):
    return x + {draw}
"""

GENERATOR_FORMS = [
    (
        "np.random.default_rng(0)",
        "rng.normal(0.0, 0.1, size=x.shape)",
        "tf.random.Generator.from_seed(0)",
        "tf_rng.normal(tf.shape(x), mean=0.0, stddev=0.1, dtype=x.dtype)",
    ),
    (
        "np.random.default_rng(seed=SEED)",
        "rng.uniform(size=x.shape)",
        "tf.random.Generator.from_seed(SEED)",
        "tf_rng.uniform(tf.shape(x), dtype=x.dtype)",
    ),
    (
        "np.random.default_rng()",
        "rng.standard_normal(size=x.shape)",
        "tf.random.Generator.from_non_deterministic_state()",
        "tf_rng.normal(tf.shape(x), dtype=x.dtype)",
    ),
]


@pytest.mark.parametrize(("constructor", "draw", "maker", "after"), GENERATOR_FORMS)
def test_module_generator_draws_become_tf_generator_draws(
    constructor: str, draw: str, maker: str, after: str
) -> None:
    source = MODULE_GENERATOR.format(constructor=constructor, draw=draw)
    (finding,) = check_source(source, select=["TFR102"])
    assert finding.fix is not None and finding.fix.applicability is Applicability.UNSAFE
    assert "draws its own stream, not `rng`'s values" in finding.fix.message
    assert fix_source(source, select=["TFR102"]) == source  # unsafe only
    fixed = fix_source(source, select=["TFR102"], unsafe_fixes=True)
    assert f"rng = {constructor}\ntf_rng = {maker}\n" in fixed
    assert f"return x + {after}\n" in fixed


LEGACY_MAPPINGS = [
    ("state.rand(3)", "tf_state.uniform([3])"),
    ("state.randn(2, 3)", "tf_state.normal([2, 3])"),
    ("state.randint(0, 5, size=(2,))", "tf_state.uniform([2], minval=0, maxval=5, dtype=tf.int64)"),
    ("state.randint(4)", "tf_state.uniform([], maxval=4, dtype=tf.int64)"),
    ("state.choice(5, size=3)", "tf_state.uniform([3], maxval=5, dtype=tf.int64)"),
    ("rng.integers(0, 3)", "tf_rng.uniform([], minval=0, maxval=3, dtype=tf.int64)"),
    ("rng.integers(0, 3, endpoint=True)", "tf_rng.uniform([], minval=0, maxval=4, dtype=tf.int64)"),
    ("rng.integers(5, size=(2,))", "tf_rng.uniform([2], maxval=5, dtype=tf.int64)"),
    ("rng.random(size=(2,))", "tf_rng.uniform([2])"),
]


@pytest.mark.parametrize(("draw", "after"), LEGACY_MAPPINGS)
def test_generator_method_mappings(draw: str, after: str) -> None:
    source = f"""\
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(0)
state = np.random.RandomState(1)


@tf.function
def f(x: tf.Tensor):
    v = {draw}
    return v
"""
    fixed = fix_source(source, select=["TFR102"], unsafe_fixes=True)
    assert f"    v = {after}\n" in fixed


def test_every_draw_of_one_generator_shares_one_tf_generator() -> None:
    source = MODULE_GENERATOR.format(
        constructor="np.random.default_rng(0)",
        draw="rng.normal(size=x.shape) * rng.uniform(0.5, 1.5, size=x.shape)",
    )
    fixed = fix_source(source, select=["TFR102"], unsafe_fixes=True)
    assert fixed.count("tf.random.Generator.from_seed(0)") == 1
    assert (
        "return x + tf_rng.normal(tf.shape(x), dtype=x.dtype) * "
        "tf_rng.uniform(tf.shape(x), minval=0.5, maxval=1.5, dtype=x.dtype)" in fixed
    )
    assert fix_source(fixed, select=["TFR102"], unsafe_fixes=True) == fixed


def test_the_generator_name_is_fresh() -> None:
    source = MODULE_GENERATOR.format(
        constructor="np.random.default_rng(0)", draw="rng.normal(size=x.shape) + tf_rng"
    ).replace("rng = np", "tf_rng = 1.0\nrng = np")
    fixed = fix_source(source, select=["TFR102"], unsafe_fixes=True)
    assert "tf_rng_1 = tf.random.Generator.from_seed(0)" in fixed
    assert "tf_rng_1.normal(" in fixed


def test_attribute_generator_is_made_next_to_it_in_init() -> None:
    source = """\
    import numpy as np
    import tensorflow as tf


    class Noise(tf.Module):
        def __init__(self, seed):
            self.rng = np.random.RandomState(seed)
            self.scale = 0.1

        @tf.function
        def __call__(self, x: tf.Tensor):
            return x + self.rng.normal(0.0, self.scale, size=x.shape)
    """
    fixed = _fix(source, "TFR102", unsafe=True)
    assert (
        "        self.rng = np.random.RandomState(seed)\n"
        "        self.tf_rng = tf.random.Generator.from_seed(seed)\n"
        "        self.scale = 0.1\n"
    ) in fixed
    assert "self.tf_rng.normal(tf.shape(x), mean=0.0, stddev=self.scale, dtype=x.dtype)" in fixed


GENERATOR_REFUSALS = {
    "a local generator": (
        """
        import numpy as np
        import tensorflow as tf

        @tf.function
        def f(x):
            rng = np.random.default_rng(0)
            return x + rng.normal(size=3)
        """,
        "is made in the traced code",
    ),
    "a chained generator": (
        """
        import numpy as np
        import tensorflow as tf

        @tf.function
        def f(x):
            return x + np.random.default_rng(0).normal(size=3)
        """,
        "is made in the traced code",
    ),
    "bound twice": (
        """
        import numpy as np
        import tensorflow as tf

        rng = np.random.default_rng(0)
        rng = np.random.default_rng(1)

        @tf.function
        def f(x: tf.Tensor):
            return x + rng.normal(size=3)
        """,
        "`rng` is bound more than once",
    ),
    "a bit generator": (
        """
        import numpy as np
        import tensorflow as tf

        rng = np.random.Generator(np.random.PCG64(0))

        @tf.function
        def f(x: tf.Tensor):
            return x + rng.normal(size=3)
        """,
        "takes a bit generator, whose seed cannot be read",
    ),
    "a seed sequence": (
        """
        import numpy as np
        import tensorflow as tf

        rng = np.random.default_rng([1, 2])

        @tf.function
        def f(x: tf.Tensor):
            return x + rng.normal(size=3)
        """,
        "the seed `[1, 2]` is not an integer",
    ),
    "made before TensorFlow is imported": (
        """
        import numpy as np
        rng = np.random.default_rng(0)
        import tensorflow as tf

        @tf.function
        def f(x: tf.Tensor):
            return x + rng.normal(size=3)
        """,
        "runs before TensorFlow is imported",
    ),
    "a generator's shuffle": (
        """
        import numpy as np
        import tensorflow as tf

        rng = np.random.default_rng(0)

        @tf.function
        def f(x: tf.Tensor):
            return tf.gather(x, rng.permutation(3))
        """,
        "`permutation` has no faithful `tf.random.Generator` mapping",
    ),
    "a weighted choice of a generator": (
        """
        import numpy as np
        import tensorflow as tf

        state = np.random.RandomState(0)

        @tf.function
        def f(x: tf.Tensor):
            return x[state.choice(3, p=[0.2, 0.3, 0.5])]
        """,
        "`tf.random.Generator` has no categorical draw",
    ),
    "an attribute made in a traced method": (
        """
        import numpy as np
        import tensorflow as tf

        class Noise(tf.Module):
            @tf.function
            def __call__(self, x: tf.Tensor):
                self.rng = np.random.RandomState(0)
                return x + self.rng.normal(size=3)
        """,
        "not in an `__init__` that runs eagerly",
    ),
}


@pytest.mark.parametrize("case", GENERATOR_REFUSALS, ids=str)
def test_generator_draws_refused_with_the_reason(case: str) -> None:
    source, reason = GENERATOR_REFUSALS[case]
    findings = check_source(textwrap.dedent(source), select=["TFR102"])
    draws = [f for f in findings if "draws from the NumPy generator" in f.message]
    assert draws and all(f.fix is None for f in draws)
    assert reason in draws[0].message
    assert "tf_rng" not in draws[0].message


# -- np.random.choice -----------------------------------------------------------------

TRACED = """\
import numpy as np
import tensorflow as tf


@tf.function
def f(x: tf.Tensor):
    v = {expr}
    return tf.gather(x, v)
"""

CHOICES = [
    ("np.random.choice(5, size=3)", "tf.random.uniform([3], maxval=5, dtype=tf.int64)"),
    (
        "np.random.choice(x.shape[0])",
        "tf.random.uniform([], maxval=tf.shape(x)[0], dtype=tf.int64)",
    ),
    (
        "np.random.choice(3, p=[0.2, 0.3, 0.5])",
        "tf.random.categorical(tf.math.log([[0.2, 0.3, 0.5]]), 1)[0, 0]",
    ),
    (
        "np.random.choice(4, size=6, p=[0.1, 0.2, 0.3, 0.4])",
        "tf.random.categorical(tf.math.log([[0.1, 0.2, 0.3, 0.4]]), 6)[0]",
    ),
    (
        "np.random.choice(4, size=(6,), p=weights)",
        "tf.random.categorical(tf.math.log([weights]), 6)[0]",
    ),
    (
        "np.random.choice(5, size=3, replace=False)",
        "tf.random.shuffle(tf.range(5, dtype=tf.int64))[:3]",
    ),
    (
        "np.random.choice([1, 3, 5], size=2)",
        "tf.gather(tf.constant([1, 3, 5], dtype=tf.int64), "
        "tf.random.uniform([2], maxval=3, dtype=tf.int32))",
    ),
    (
        "np.random.choice([1, 3, 5], size=2, replace=False)",
        "tf.random.shuffle(tf.constant([1, 3, 5], dtype=tf.int64))[:2]",
    ),
    (
        "np.random.choice((0, 2), size=4, p=[0.5, 0.5])",
        "tf.gather(tf.constant((0, 2), dtype=tf.int64), "
        "tf.random.categorical(tf.math.log([[0.5, 0.5]]), 4)[0])",
    ),
    ("np.random.choice(5).astype(np.int32)", "tf.random.uniform([], maxval=5, dtype=tf.int32)"),
]


@pytest.mark.parametrize(("expr", "after"), CHOICES)
def test_numpy_choice_mappings(expr: str, after: str) -> None:
    source = TRACED.format(expr=expr)
    fixed = fix_source(source, select=["TFR102"], unsafe_fixes=True)
    assert f"    v = {after}\n" in fixed


def test_numpy_choice_of_floats_meeting_a_tensor_takes_its_dtype() -> None:
    source = """\
    import numpy as np
    import tensorflow as tf

    @tf.function
    def f(x: tf.Tensor):
        return x + np.random.choice([0.5, 1.5], size=3)
    """
    fixed = _fix(source, "TFR102")
    assert (
        "return x + tf.gather(tf.constant([0.5, 1.5], dtype=x.dtype), "
        "tf.random.uniform([3], maxval=2, dtype=tf.int32))" in fixed
    )


def test_seeded_weighted_choice_is_stateless() -> None:
    source = """\
    import numpy as np
    import tensorflow as tf

    @tf.function
    def f(x: tf.Tensor):
        np.random.seed(4)
        return tf.gather(x, np.random.choice(3, size=2, p=[0.2, 0.3, 0.5]))
    """
    fixed = _fix(source, "TFR102", unsafe=True)
    assert (
        "tf.random.stateless_categorical(tf.math.log([[0.2, 0.3, 0.5]]), 2, seed=[4, 0])[0]"
        in fixed
    )


NUMPY_CHOICE_REFUSALS = [
    ("np.random.choice(3, p=[0.2, 0.3])", "`p` has 2 weights for 3 elements"),
    ("np.random.choice(2, p=[0.7, 0.7])", "do not sum to 1"),
    ("np.random.choice(3, size=(2, 2), p=[0.2, 0.3, 0.5])", "is not one integer"),
    ("np.random.choice(3, size=2, replace=False, p=[0.2, 0.3, 0.5])", "weighted draws without"),
    ("np.random.choice(3, size=5, replace=False)", "5 draws without replacement from 3"),
    ("np.random.choice(3, replace=flag)", "is not a literal `True` or `False`"),
    ("np.random.choice(items)", "`items` is not bound once to a list or tuple of numbers"),
    ("np.random.choice([1, 2.5])", "is not known to be a list or tuple of numbers"),
]


@pytest.mark.parametrize(("expr", "reason"), NUMPY_CHOICE_REFUSALS)
def test_numpy_choice_refusals_say_why(expr: str, reason: str) -> None:
    (finding,) = check_source(TRACED.format(expr=expr), select=["TFR102"])
    assert finding.fix is None
    assert reason in finding.message


# -- random.choice, random.sample, random.shuffle --------------------------------------

PY_TRACED = """\
import random
import tensorflow as tf

SIZES = (8, 16, 32)
WEIGHTS = [0.5, 1.5]


@tf.function
def f(x: tf.Tensor):
{body}
"""


def _py(body: str) -> str:
    return PY_TRACED.format(body=textwrap.indent(textwrap.dedent(body), "    "))


PY_FORMS = [
    (
        "k = random.choice(SIZES)\nreturn x[:k]",
        "k = tf.gather(SIZES, tf.random.uniform([], maxval=len(SIZES), dtype=tf.int32))",
    ),
    (
        "return x * random.choice(WEIGHTS)",
        "return x * tf.gather(tf.constant(WEIGHTS, dtype=x.dtype), "
        "tf.random.uniform([], maxval=len(WEIGHTS), dtype=tf.int32))",
    ),
    (
        "return x[random.choice([0, 2, 4])]",
        "return x[tf.gather([0, 2, 4], tf.random.uniform([], maxval=3, dtype=tf.int32))]",
    ),
    (
        "return x[random.choice(range(4))]",
        "return x[tf.random.uniform([], maxval=4, dtype=tf.int32)]",
    ),
    (
        "i = random.randint(0, 3)\nreturn x[i]",
        "i = tf.random.uniform([], minval=0, maxval=4, dtype=tf.int32)",
    ),
    (
        "idx = random.sample(range(8), 3)\nreturn tf.gather(x, idx)",
        "idx = tf.random.shuffle(tf.range(8))[:3]",
    ),
    (
        "return tf.gather(x, random.sample([0, 2, 4, 6], 2))",
        "return tf.gather(x, tf.random.shuffle([0, 2, 4, 6])[:2])",
    ),
    (
        "return tf.reduce_sum(random.sample(WEIGHTS, 1))",
        "return tf.reduce_sum(tf.random.shuffle(WEIGHTS)[:1])",
    ),
    (
        "order = [0, 1, 2, 3]\nrandom.shuffle(order)\nreturn tf.gather(x, order)",
        "order = tf.random.shuffle(order)",
    ),
    (
        "order = list(range(4))\nrandom.shuffle(order)\nreturn tf.gather(x, indices=order)",
        "order = tf.random.shuffle(order)",
    ),
]


@pytest.mark.parametrize(("body", "after"), PY_FORMS)
def test_python_choice_sample_shuffle_mappings(body: str, after: str) -> None:
    source = _py(body)
    (finding,) = check_source(source, select=["TFR106"])
    assert finding.fix is not None and finding.fix.applicability is Applicability.SAFE
    fixed = fix_source(source, select=["TFR106"])
    assert f"    {after}\n" in fixed
    host = fixed.replace("tf.random.", "")
    assert "random.choice" not in host and "random.sample" not in host
    assert "random.shuffle" not in host


PY_REFUSALS = [
    (
        "k = random.choice(SIZES)\nreturn x[:k], SIZES.index(8)",
        "`SIZES` may be changed in place",
    ),
    ("return x * random.choice([1, 2.5])", "is not known to be a list or tuple of numbers"),
    ("return x * random.choice(x)", "`x` is not bound once to a list or tuple of numbers"),
    ("return x * random.choice([])", "is empty"),
    (
        "idx = random.sample(range(8), 3)\nreturn tf.gather(x, idx), len(idx)",
        "len(idx)`, which needs a Python list",
    ),
    ("return random.sample([1, 2, 3], 2) + [4]", "which needs a Python list"),
    ("return tf.gather(x, random.sample([1, 2, 3], 4))", "4 draws without replacement from 3"),
    (
        "order = [0, 1, 2]\nrandom.shuffle(order)\nreturn len(order)",
        "`order` is read by `return len(order)`, which needs a Python list",
    ),
    (
        "random.shuffle(WEIGHTS)\nreturn x",
        "`WEIGHTS` is not a list made in this function",
    ),
    (
        "order = [0, 1, 2]\nalias = order\nrandom.shuffle(order)\nreturn tf.gather(x, alias)",
        "`order` is referred to before the shuffle (`alias = order`)",
    ),
    (
        "order = [0, 1, 2]\nif x.shape[0]:\n    random.shuffle(order)\nreturn tf.gather(x, order)",
        "only a statement `shuffle(name)` at the top of the function body",
    ),
    (
        "order = make()\nrandom.shuffle(order)\nreturn tf.gather(x, order)",
        "which is not a list display",
    ),
    ("random.shuffle(x)\nreturn x", "`x` is not a list made in this function"),
]


@pytest.mark.parametrize(("body", "reason"), PY_REFUSALS)
def test_python_list_draw_refusals_say_why(body: str, reason: str) -> None:
    findings = check_source(_py(body), select=["TFR106"])
    draws = [f for f in findings if "random.choice" in f.message or "random.s" in f.message]
    assert draws and all(f.fix is None for f in draws)
    assert reason in draws[0].message


def test_module_list_shuffled_in_place_refuses_choice_and_shuffle() -> None:
    source = _py("random.shuffle(WEIGHTS)\nreturn x * random.choice(WEIGHTS)")
    findings = check_source(source, select=["TFR106"])
    assert len(findings) == 2 and all(f.fix is None for f in findings)
    messages = " ".join(f.message for f in findings)
    assert "`WEIGHTS` may be changed in place (`random.shuffle(WEIGHTS)`)" in messages


def test_python_module_seed_without_tf_seed_refuses_list_draws() -> None:
    source = _py("idx = random.sample(range(8), 3)\nreturn tf.gather(x, idx)").replace(
        "SIZES = ", "random.seed(0)\nSIZES = "
    )
    (finding,) = check_source(source, select=["TFR106"])
    assert finding.fix is None
    assert "call `tf.random.set_seed(...)`" in finding.message


def test_a_tf_generator_with_another_seed_is_not_reused() -> None:
    source = MODULE_GENERATOR.format(
        constructor="np.random.default_rng(0)", draw="rng.normal(size=x.shape)"
    ).replace(
        "rng = np.random.default_rng(0)\n",
        "rng = np.random.default_rng(0)\ntf_rng = tf.random.Generator.from_seed(9)\n",
    )
    fixed = fix_source(source, select=["TFR102"], unsafe_fixes=True)
    assert "tf_rng_1 = tf.random.Generator.from_seed(0)\ntf_rng = " in fixed
    assert "return x + tf_rng_1.normal(tf.shape(x), dtype=x.dtype)" in fixed


def test_attribute_generator_fix_is_idempotent() -> None:
    source = textwrap.dedent(
        """\
        import numpy as np
        import tensorflow as tf


        class Noise(tf.Module):
            def __init__(self):
                self.rng = np.random.default_rng(1)

            @tf.function
            def __call__(self, x: tf.Tensor):
                return x * self.rng.uniform(0.9, 1.1) + self.rng.normal(size=x.shape)
        """
    )
    fixed = fix_source(source, select=["TFR102"], unsafe_fixes=True)
    assert fixed.count("tf.random.Generator.from_seed(1)") == 1
    assert "self.tf_rng.uniform([], minval=0.9, maxval=1.1" in fixed
    assert "self.tf_rng.normal(tf.shape(x)" in fixed
    assert fix_source(fixed, select=["TFR102"], unsafe_fixes=True) == fixed


def test_attribute_generator_bound_twice_is_refused() -> None:
    source = """\
    import numpy as np
    import tensorflow as tf


    class Noise(tf.Module):
        def __init__(self):
            self.rng = np.random.default_rng(1)

        def reset(self, seed):
            self.rng = np.random.default_rng(seed)

        @tf.function
        def __call__(self, x: tf.Tensor):
            return x + self.rng.normal(size=x.shape)
    """
    finding = _one(source, "TFR102")
    assert finding.fix is None
    assert "`self.rng` is bound more than once" in finding.message


def test_choice_from_a_local_list() -> None:
    fixed = fix_source(_py("sizes = [2, 4]\nreturn x[: random.choice(sizes)]"), select=["TFR106"])
    assert (
        "return x[: tf.gather(sizes, tf.random.uniform([], maxval=len(sizes), dtype=tf.int32))]"
        in fixed
    )


# -- check's pruned parse answers as the whole file ------------------------------------

PRUNED = """\
import random
import tensorflow as tf

SIZES = [8, 16]


def setup():
    {statement}


def other(a):
    return a + 1


@tf.function
def crop(x: tf.Tensor):
    return x[: random.choice(SIZES)]
"""


@pytest.mark.parametrize(
    ("statement", "fixable"),
    [
        ("random.shuffle(SIZES)", False),
        ("SIZES.sort()", False),
        ("keep(SIZES)", False),
        ("return len(SIZES)", True),
    ],
)
def test_a_population_changed_in_code_check_leaves_out(statement: str, fixable: bool) -> None:
    """`check` parses a pruned copy (inert functions blanked); a list
    changed in place in one of them refuses the choice there too."""
    from tfrewrite.facts.index import build_index
    from tfrewrite.facts.project import compute_facts
    from tfrewrite.pipeline.engine import InputFile, RunOptions
    from tfrewrite.pipeline.rule_pass import FileJob, process_file

    source = PRUNED.format(statement=statement)
    index = build_index(source, "m.py", "m")
    traced = compute_facts([index]).for_path("m.py")
    results = []
    for prune in (True, False):
        options = RunOptions(rule_codes=("TFR106",), root=".", prune_inert_code=prune)
        result = process_file(FileJob(InputFile("m.py", source), index, traced, options))
        results.append([(f.message, f.fix is not None) for f in result.findings])
    assert results[0] == results[1]
    assert results[0][0][1] is fixable


def test_a_population_rebound_through_global_is_refused() -> None:
    source = _py("return x[: random.choice(SIZES)]") + (
        "\n\ndef grow():\n    global SIZES\n    SIZES = (1, 2)\n"
    )
    (finding,) = check_source(source, select=["TFR106"])
    assert finding.fix is None
    assert "`SIZES` may be changed in place (`global SIZES`)" in finding.message
