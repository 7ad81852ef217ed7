"""TFR102 / TFR106 under TensorFlow: draws from NumPy generator objects,
choices, `random.sample` and `random.shuffle`.

Each original runs eagerly and its rewrite traced (and traced with
`autograph=False`: the rewrites need no AutoGraph): the rewrite draws afresh
on every call, keeps the shape and dtype the original had eagerly, and draws
from the same values (the same support over many calls: an inclusive or
exclusive bound shows) with the same moments. Categorical draws are checked
by their frequencies. Seeds are fixed (NumPy's, Python's and TensorFlow's
global seed), so nothing here can flake; the bounds are wide enough that a
correct rewrite fails them with a probability below 1e-4 for any seed.
"""

from __future__ import annotations

import random
import tempfile
import textwrap
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

from tfrewrite.api import fix_source

from .equivalence import load_file_module, python_function, run_eagerly

pytestmark = pytest.mark.tensorflow

CALLS = 200
X = np.arange(8, dtype=np.float32) * 10.0


@dataclass(frozen=True)
class Case:
    name: str
    source: str
    code: str
    unsafe: bool
    discrete: bool  # compare supports (every value reached) rather than moments

    def __str__(self) -> str:
        return self.name


CASES = [
    Case(
        "module_generator_normal",
        """
        import numpy as np
        import tensorflow as tf

        rng = np.random.default_rng(0)


        @tf.function
        def f(x: tf.Tensor):
            return x + rng.normal(0.0, 2.0, size=x.shape)
        """,
        "TFR102",
        unsafe=True,
        discrete=False,
    ),
    Case(
        "module_random_state_uniform",
        """
        import numpy as np
        import tensorflow as tf

        SEED = 3
        state = np.random.RandomState(SEED)


        @tf.function
        def f(x: tf.Tensor):
            return x * state.uniform(0.5, 1.5, size=x.shape)
        """,
        "TFR102",
        unsafe=True,
        discrete=False,
    ),
    Case(
        "generator_integers_endpoint",
        """
        import numpy as np
        import tensorflow as tf

        rng = np.random.default_rng(5)


        @tf.function
        def f(x: tf.Tensor):
            return tf.gather(x, rng.integers(1, 3, size=(6,), endpoint=True))
        """,
        "TFR102",
        unsafe=True,
        discrete=True,
    ),
    Case(
        "legacy_randint_high_only",
        """
        import numpy as np
        import tensorflow as tf

        state = np.random.RandomState(7)


        @tf.function
        def f(x: tf.Tensor):
            return tf.gather(x, state.randint(3, size=(4,)))
        """,
        "TFR102",
        unsafe=True,
        discrete=True,
    ),
    Case(
        "numpy_choice_range",
        """
        import numpy as np
        import tensorflow as tf


        @tf.function
        def f(x: tf.Tensor):
            return tf.gather(x, np.random.choice(5, size=3))
        """,
        "TFR102",
        unsafe=False,
        discrete=True,
    ),
    Case(
        "numpy_choice_numbers",
        """
        import numpy as np
        import tensorflow as tf


        @tf.function
        def f(x: tf.Tensor):
            return x + np.random.choice([0.5, 1.5, 2.5], size=8)
        """,
        "TFR102",
        unsafe=False,
        discrete=True,
    ),
    Case(
        "numpy_choice_without_replacement",
        """
        import numpy as np
        import tensorflow as tf


        @tf.function
        def f(x: tf.Tensor):
            return tf.gather(x, np.random.choice(6, size=4, replace=False))
        """,
        "TFR102",
        unsafe=False,
        discrete=True,
    ),
    Case(
        "python_choice_constant",
        """
        import random
        import tensorflow as tf

        SCALES = (0.5, 1.0, 2.0)


        @tf.function
        def f(x: tf.Tensor):
            return x * random.choice(SCALES)
        """,
        "TFR106",
        unsafe=False,
        discrete=True,
    ),
    Case(
        "python_choice_range_index",
        """
        import random
        import tensorflow as tf


        @tf.function
        def f(x: tf.Tensor):
            return x[random.choice(range(4))]
        """,
        "TFR106",
        unsafe=False,
        discrete=True,
    ),
    Case(
        "python_randint_inclusive",
        """
        import random
        import tensorflow as tf


        @tf.function
        def f(x: tf.Tensor):
            return x[random.randint(2, 4)]
        """,
        "TFR106",
        unsafe=False,
        discrete=True,
    ),
    Case(
        "python_sample_gather",
        """
        import random
        import tensorflow as tf


        @tf.function
        def f(x: tf.Tensor):
            idx = random.sample(range(8), 3)
            return tf.gather(x, idx)
        """,
        "TFR106",
        unsafe=False,
        discrete=True,
    ),
    Case(
        "python_shuffle_gather",
        """
        import random
        import tensorflow as tf


        @tf.function
        def f(x: tf.Tensor):
            order = [0, 1, 2, 3, 4, 5, 6, 7]
            random.shuffle(order)
            return tf.gather(x, order)
        """,
        "TFR106",
        unsafe=False,
        discrete=True,
    ),
    Case(
        "python_random_condition",
        """
        import random
        import tensorflow as tf


        @tf.function
        def f(x: tf.Tensor):
            return tf.where(random.random() < 0.3, x, -x)
        """,
        "TFR106",
        unsafe=False,
        discrete=True,
    ),
    Case(
        "python_random_bool_product",
        """
        import random
        import tensorflow as tf


        @tf.function
        def f(x: tf.Tensor):
            return x * (random.random() < 0.5)
        """,
        "TFR106",
        unsafe=False,
        discrete=True,
    ),
    Case(
        "numpy_bernoulli",
        """
        import numpy as np
        import tensorflow as tf


        @tf.function
        def f(x: tf.Tensor):
            return x * np.random.binomial(1, 0.3, size=x.shape)
        """,
        "TFR102",
        unsafe=False,
        discrete=True,
    ),
    Case(
        "numpy_randint_exclusive",
        """
        import numpy as np
        import tensorflow as tf


        @tf.function
        def f(x: tf.Tensor):
            return x[np.random.randint(2, 5)]
        """,
        "TFR102",
        unsafe=False,
        discrete=True,
    ),
    Case(
        "numpy_rand_mask",
        """
        import numpy as np
        import tensorflow as tf


        @tf.function
        def f(x: tf.Tensor):
            return x * (np.random.rand(8) < 0.25)
        """,
        "TFR102",
        unsafe=False,
        discrete=True,
    ),
]


def _seed_all() -> None:
    np.random.seed(1)
    random.seed(1)
    tf.random.set_seed(1)


@pytest.fixture(scope="module")
def workdir():
    with tempfile.TemporaryDirectory() as path:
        yield Path(path)


def _modules(case: Case, workdir: Path):
    _seed_all()
    source = textwrap.dedent(case.source)
    original = load_file_module(source, workdir, "original")
    fixed = fix_source(source, select=[case.code], unsafe_fixes=case.unsafe)
    assert fixed != source
    if case.unsafe:
        assert fix_source(source, select=[case.code]) == source
    rewritten = load_file_module(fixed, workdir, "rewritten")
    return original, rewritten, fixed


def _eager(module, calls: int) -> list[np.ndarray]:
    x = tf.constant(X)
    return [np.asarray(run_eagerly(module.f, x)) for _ in range(calls)]


def _traced(module, calls: int, autograph: bool) -> list[np.ndarray]:
    x = tf.constant(X)
    function = tf.function(python_function(module.f), autograph=autograph)
    return [function(x).numpy() for _ in range(calls)]


@pytest.mark.parametrize("autograph", [True, False], ids=["autograph", "no-autograph"])
@pytest.mark.parametrize("case", CASES, ids=str)
def test_rewrite_traced_draws_like_the_original_eagerly(
    case: Case, autograph: bool, workdir: Path
) -> None:
    original, rewritten, fixed = _modules(case, workdir)
    host_calls = ("np.random.", "random.choice", "random.sample", "random.shuffle(order)")
    body = "\n".join(line for line in fixed.splitlines() if line.startswith(" "))
    assert not any(call in body.replace("tf.random.", "") for call in host_calls), fixed
    # The original traced is frozen: one sample for every call.
    frozen = tf.function(python_function(original.f))
    x = tf.constant(X)
    assert np.array_equal(frozen(x).numpy(), frozen(x).numpy())
    eager = _eager(original, CALLS)
    traced = _traced(rewritten, CALLS, autograph)
    # Shape and dtype of the original run eagerly.
    assert traced[0].shape == eager[0].shape
    assert traced[0].dtype == eager[0].dtype
    # Fresh on every call (a choice among a few values repeats, but not always).
    assert len({t.tobytes() for t in traced}) > (1 if case.discrete else CALLS // 4)
    if case.discrete:
        # The same values, every one of them reached (bounds kept).
        assert {v.item() for t in eager for v in t.ravel()} == {
            v.item() for t in traced for v in t.ravel()
        }
    else:
        e, t = np.stack(eager), np.stack(traced)
        # Per-element means within 5 standard errors of each other, spreads within 25%.
        standard_error = np.sqrt(e.var(0) / CALLS + t.var(0) / CALLS)
        assert np.all(np.abs(e.mean(0) - t.mean(0)) < 5 * standard_error + 1e-6)
        assert np.all(t.std(0) <= 1.25 * e.std(0) + 1e-6)
        assert np.all(e.std(0) <= 1.25 * t.std(0) + 1e-6)


def test_choice_without_replacement_draws_distinct_elements(workdir: Path) -> None:
    case = next(c for c in CASES if c.name == "numpy_choice_without_replacement")
    _, rewritten, _ = _modules(case, workdir)
    for drawn in _traced(rewritten, 50, autograph=False):
        assert len(set(drawn.tolist())) == 4


def test_shuffle_is_a_permutation(workdir: Path) -> None:
    case = next(c for c in CASES if c.name == "python_shuffle_gather")
    _, rewritten, _ = _modules(case, workdir)
    for drawn in _traced(rewritten, 50, autograph=False):
        assert sorted(drawn.tolist()) == sorted(X.tolist())


WEIGHTED = """
import numpy as np
import tensorflow as tf


@tf.function
def f(x: tf.Tensor):
    return np.random.choice(4, size=500, p=[0.1, 0.2, 0.3, 0.4])
"""


def test_weighted_choice_keeps_the_weights(workdir: Path) -> None:
    """`tf.random.categorical(tf.math.log([p]), k)`: over 20 x 500 draws each
    frequency is within 5 standard errors of `p`, as NumPy's is."""
    _seed_all()
    original = load_file_module(WEIGHTED, workdir, "original")
    fixed = fix_source(WEIGHTED, select=["TFR102"], unsafe_fixes=True)
    assert "tf.random.categorical(tf.math.log([[0.1, 0.2, 0.3, 0.4]]), 500)[0]" in fixed
    rewritten = load_file_module(fixed, workdir, "rewritten")
    p = np.array([0.1, 0.2, 0.3, 0.4])
    n = 20 * 500
    limit = 5 * np.sqrt(p * (1 - p) / n)
    for draws in (_eager(original, 20), _traced(rewritten, 20, autograph=False)):
        values = np.concatenate(draws)
        assert values.dtype == np.int64
        frequencies = np.bincount(values, minlength=4) / n
        assert np.all(np.abs(frequencies - p) < limit), frequencies


SCALAR_WEIGHTED = """
import numpy as np
import tensorflow as tf


@tf.function
def f(x: tf.Tensor):
    return x[np.random.choice(3, p=[0.2, 0.3, 0.5])]
"""


def test_scalar_weighted_choice_is_a_scalar_index(workdir: Path) -> None:
    _seed_all()
    fixed = fix_source(SCALAR_WEIGHTED, select=["TFR102"])
    assert "tf.random.categorical(tf.math.log([[0.2, 0.3, 0.5]]), 1)[0, 0]" in fixed
    rewritten = load_file_module(fixed, workdir, "rewritten")
    values = [float(v) for v in _traced(rewritten, 400, autograph=False)]
    frequencies = np.array([values.count(v) for v in (0.0, 10.0, 20.0)]) / 400
    p = np.array([0.2, 0.3, 0.5])
    assert np.all(np.abs(frequencies - p) < 5 * np.sqrt(p * (1 - p) / 400)), frequencies


CLASS_GENERATOR = """
import numpy as np
import tensorflow as tf


class Noise(tf.Module):
    def __init__(self, seed):
        super().__init__()
        self.rng = np.random.RandomState(seed)

    @tf.function
    def __call__(self, x: tf.Tensor):
        return x + self.rng.normal(0.0, 0.1, size=x.shape)
"""


def test_attribute_generator_is_made_in_init_and_draws_fresh(workdir: Path) -> None:
    _seed_all()
    fixed = fix_source(CLASS_GENERATOR, select=["TFR102"], unsafe_fixes=True)
    assert "self.tf_rng = tf.random.Generator.from_seed(seed)" in fixed
    module = load_file_module(fixed, workdir, "rewritten")
    noise = module.Noise(0)
    x = tf.constant(X)
    first, second = noise(x).numpy(), noise(x).numpy()
    assert first.dtype == np.float32 and first.shape == X.shape
    assert not np.array_equal(first, second)
    # Reproducible from the seed, as the NumPy generator's stream is.
    again = module.Noise(0)
    assert np.array_equal(again(x).numpy(), first)


KERAS_LAYER = """
import keras
import numpy as np
import tensorflow as tf


class Noise(keras.layers.Layer):
    def __init__(self, seed=0):
        super().__init__()
        self.rng = np.random.RandomState(seed)

    def call(self, inputs):
        return inputs + self.rng.normal(0.0, 0.1, size=(3,))
"""


def test_keras_layer_generator_draws_fresh_in_predict_and_fit(workdir: Path) -> None:
    """A layer's NumPy generator set in `__init__`: the `tf.random.Generator`
    made next to it draws afresh in every `predict` and trains, and adds no
    weight to the model."""
    import keras

    fixed = fix_source(KERAS_LAYER, select=["TFR102"], unsafe_fixes=True)
    assert "self.tf_rng = tf.random.Generator.from_seed(seed)" in fixed
    module = load_file_module(fixed, workdir, "rewritten")
    model = keras.Sequential([keras.Input(shape=(3,)), module.Noise()])
    model.compile(loss="mse", optimizer="sgd")
    x = np.zeros((4, 3), np.float32)
    first, second = model.predict(x, verbose=0), model.predict(x, verbose=0)
    assert first.dtype == np.float32 and first.shape == (4, 3)
    assert not np.array_equal(first, second)
    assert 0.03 < float(np.std(np.concatenate([first, second]))) < 0.3
    assert len(model.weights) == 0
    model.fit(x, x, epochs=1, verbose=0)
