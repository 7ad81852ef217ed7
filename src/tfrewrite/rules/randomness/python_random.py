"""TFR106: Python `random` sampling in traced code, rewritten into `tf.random`."""

from __future__ import annotations

import libcst as cst

from tfrewrite.facts.import_requests import ImportRequest
from tfrewrite.findings import Applicability
from tfrewrite.rewrite.dtypes import FLOAT, INT
from tfrewrite.rewrite.fixes import CstFix, NodeEdit, Violation
from tfrewrite.rewrite.traced_calls import (
    Refusal,
    SampleSite,
    bind,
    is_integer_literal,
    is_none,
)
from tfrewrite.rules.base import Invalid, Valid
from tfrewrite.rules.randomness import list_draws
from tfrewrite.rules.randomness.choices import indices, values_text
from tfrewrite.rules.randomness.random_sampling import RandomSamplingRule, Rewrite
from tfrewrite.rules.randomness.sample_writer import SampleWriter

# A Python int becomes an int32 tensor when TensorFlow converts it.
_PYTHON_INT = "int32"


def _float_sample(w: SampleWriter, op: str, keywords: list[tuple[str, str]]) -> str:
    dtype, cast_to = w.sample_dtype(FLOAT, w.astype_dtype())
    return w.cast(w.continuous(op, "[]", keywords, dtype), cast_to)


def _random(w: SampleWriter, site: SampleSite) -> str:
    bind(site.call, ())
    return _float_sample(w, "uniform", [])


def _uniform(w: SampleWriter, site: SampleSite) -> str:
    args = bind(site.call, ("a", "b"), required=2)
    return _float_sample(
        w, "uniform", [("minval", w.code(args["a"])), ("maxval", w.code(args["b"]))]
    )


def _gauss(w: SampleWriter, site: SampleSite) -> str:
    args = bind(site.call, ("mu", "sigma"))
    keywords = [
        (tf_name, w.code(args[py_name]))
        for py_name, tf_name in (("mu", "mean"), ("sigma", "stddev"))
        if py_name in args
    ]
    return _float_sample(w, "normal", keywords)


def _integers(w: SampleWriter, minval: str | None, maxval: str) -> str:
    dtype, cast_to = w.sample_dtype(INT, None)
    return w.cast(w.integers("[]", minval, maxval, dtype, _PYTHON_INT), cast_to)


def _randint(w: SampleWriter, site: SampleSite) -> str:
    """`randint(a, b)` includes `b`; `tf.random.uniform` excludes `maxval`."""
    args = bind(site.call, ("a", "b"), required=2)
    return _integers(w, w.code(args["a"]), w.plus_one(args["b"]))


def _randrange(w: SampleWriter, site: SampleSite) -> str:
    args = bind(site.call, ("start", "stop", "step"), required=1)
    step = args.get("step")
    if step is not None and not is_integer_literal(step, 1):
        raise Refusal(f"`step={w.code(step)}`: only a step of 1 maps onto `tf.random.uniform`")
    stop = args.get("stop")
    if is_none(stop):  # randrange(stop): integers in [0, stop)
        return _integers(w, None, w.code(args["start"]))
    assert stop is not None
    return _integers(w, w.code(args["start"]), w.code(stop))


def _choice(w: SampleWriter, site: SampleSite) -> str:
    """`choice(seq)`: an equally likely element, `tf.gather(seq, i)` with a
    uniform int32 index `i` (an int for `range(n)`)."""
    args = bind(site.call, ("seq",), required=1)
    population = list_draws.population(w, site, args["seq"])
    dtype, cast_to = w.sample_dtype(population.kind, None)
    if population.values is None:
        return w.cast(w.integers("[]", None, population.length, dtype, _PYTHON_INT), cast_to)
    values = values_text(w, population, dtype, _PYTHON_INT)
    return w.cast(f"{w.tf}.gather({values}, {indices(w, population, '[]')})", cast_to)


_REWRITES: dict[str, Rewrite] = {
    "random": _random,
    "uniform": _uniform,
    "gauss": _gauss,
    "normalvariate": _gauss,
    "randint": _randint,
    "randrange": _randrange,
    "choice": _choice,
}


class PythonRandomInTracedCode(RandomSamplingRule):
    module_prefix = "random"
    rewrites = _REWRITES
    dtype_hint = "a Python number adapts to the dtype it meets, a tensor does not"
    natural_dtypes = {FLOAT: "float32", INT: _PYTHON_INT}
    code = "TFR106"
    name = "python-random-in-traced-code"
    summary = "Python `random` sampling in traced code runs once, at trace time"
    fix_applicability = Applicability.SAFE
    explanation = """
    ## What it does
    Finds calls to Python's `random` module (`random.random()`,
    `random.uniform`, `random.gauss`, `random.randint`, ...) in code that runs
    traced and rewrites them into `tf.random` ops, whether the module is
    imported (`import random`) or the function is (`from random import randint`).

    ## Why is this bad?
    Python's `random` runs on the host. Under tracing the call runs once, while
    the graph is built, and the number it returned becomes a constant: every
    later call reuses it. A `tf.random` op draws afresh on each call.

    ## The mapping
    | Python | TensorFlow |
    |---|---|
    | `random.random()` | `tf.random.uniform([])` |
    | `random.uniform(a, b)` | `tf.random.uniform([], minval=a, maxval=b)` |
    | `random.gauss(mu, sigma)`, `normalvariate` | `tf.random.normal([], mean=mu, stddev=sigma)` |
    | `random.randint(a, b)` | `tf.random.uniform([], minval=a, maxval=b + 1, dtype=tf.int32)` |
    | `random.randrange(a, b)` | `tf.random.uniform([], minval=a, maxval=b, dtype=tf.int32)` |
    | `random.choice(seq)` | `tf.gather(seq, tf.random.uniform([], maxval=len, dtype=tf.int32))` |
    | `random.choice(range(n))` | `tf.random.uniform([], maxval=n, dtype=tf.int32)` |
    | `random.sample(seq, k)` | `tf.random.shuffle(seq)[:k]` |
    | `random.shuffle(lst)` (a statement) | `lst = tf.random.shuffle(lst)` |

    `randint` includes its upper bound and `tf.random.uniform` excludes
    `maxval`, so the bound becomes `b + 1` (folded for a literal:
    `randint(1, 6)` gives `maxval=7`).

    `choice` and `sample` draw from `range(n)` or a list or tuple of numbers
    written in the code (or a name bound once to one that nothing changes in
    place: the graph keeps the elements it saw when traced); a list mixing
    ints and floats is refused (Python returns either, a tensor has one
    dtype).

    ## Lists
    `sample` returns a list and `shuffle` changes one in place; their
    rewrites make a tensor instead. A list and a tensor agree only where the
    list is converted in its natural dtype (int32 for ints, float32 for
    floats, the dtypes of the shuffled tensor): the indices of `tf.gather`,
    the first argument of `tf.reduce_*` or `tf.convert_to_tensor`. Every
    read of the result must be one of those, or the draw is refused with the
    read that needs the list (`bad + [4]` concatenates, `len(lst)` needs a
    Python list). `shuffle(lst)` is rewritten only for a statement at the top
    of the function on a name bound there, before it, to a list display of
    numbers (or `list(range(n))`) that nothing else refers to before the
    shuffle: other references to a shared list would not see a rebound
    tensor, so a module-level list is refused.

    ## Dtypes
    A Python number adapts to the dtype of the tensor it meets; a tensor does
    not. A sample that meets a tensor `x` (`x + random.random()`,
    `x * (1 + 0.1 * random.gauss(0, 1))`, also through a name: `scale =
    random.uniform(0.9, 1.1); x * scale`) is drawn with `dtype=x.dtype`
    (integers are drawn as integers and cast to it). Otherwise floats are
    float32 and integers int32, the dtypes TensorFlow gives Python numbers.

    ## Where the sample goes
    Every use of the sample is followed before it becomes a tensor (see
    TFR102). A use that needs a Python value refuses the rewrite with the
    reason: `int(...)`, `range(...)`, `round(...)`, `math.exp(...)`, indexing
    a Python list, `tf.image.random_contrast` / `random_saturation` bounds and
    `random_brightness` / `random_hue` deltas (compared in Python), a `while`
    test. A sample deciding an `if` is refused where AutoGraph is off.

    ## Seeds
    After `random.seed(S)` at the top of the traced function, every call
    draws the same values: the draws become `tf.random.stateless_*` seeded
    `[S, k]`, which keeps that (unsafe: the values are not Python's). After a
    module-wide `random.seed(S)` the draws are a reproducible sequence, which
    only `tf.random.set_seed(...)` in the file keeps: without it the rewrite is
    refused. A seed on some paths only refuses.

    ## When it is not rewritten
    Functions with no `tf.random` counterpart (`betavariate`, `choices`,
    ...), `choice`, `sample` and `shuffle` on what is not known to be numbers
    (above), `randrange` with a step, and unknown or unpacked
    arguments stay, with a finding saying why. So does an integer sample
    meeting a value of unknown dtype (a Python int adapts to a float tensor;
    an int32 tensor does not), a use that needs a Python value (above), and
    seeds that cannot be kept. `random.seed(...)` in traced code is reported
    without a fix: it runs once, at trace time, and does not seed `tf.random`.

    ## Fix safety
    The fix is safe only when every use accepts the tensor in the dtype it is
    drawn in: every call then draws afresh from the distribution Python drew
    from once. It is unsafe (applied with `--unsafe-fixes`; the fix message
    says why) when the sample meets a value not known to be a tensor, is
    returned (a traced function returns a Python number as it is, a tensor
    as a tensor) or passed to a `tf.*` op (a Python number adapts to the
    dtype the op needs, a tensor does not), leaves the function, or decides
    an `if` (a tensor condition needs AutoGraph, or TFR101's `tf.cond`).
    Draws after `random.seed(S)` at the top of the function become stateless
    draws: unsafe, the values are not Python's. `sample` and `shuffle` are
    rewritten only where every read of the list is proven to take the
    tensor (see Lists): their fixes are safe unless seeded as above. What
    "When it is not rewritten" lists is reported with no fix.
    """
    examples = (
        Invalid(
            """
            import random
            import tensorflow as tf

            @tf.function
            def augment(image: tf.Tensor):
                return image * random.uniform(0.8, 1.2)
            """,
            """
            import tensorflow as tf

            @tf.function
            def augment(image: tf.Tensor):
                return image * tf.random.uniform([], minval=0.8, maxval=1.2, dtype=image.dtype)
            """,
            note="combined with a tensor: drawn in its dtype",
        ),
        Invalid(
            """
            from random import randint
            import tensorflow as tf

            @tf.function
            def crop(x: tf.Tensor):
                k = randint(1, 6)
                return x[:k]
            """,
            """
            import tensorflow as tf

            @tf.function
            def crop(x: tf.Tensor):
                k = tf.random.uniform([], minval=1, maxval=7, dtype=tf.int32)
                return x[:k]
            """,
            note="inclusive upper bound: maxval is b + 1",
        ),
        Invalid(
            """
            import random
            from tensorflow import keras

            def jittered(y_true, y_pred):
                loss = keras.ops.square(y_true - y_pred)
                return loss * random.gauss(1.0, 0.01)

            keras.Sequential().compile(loss=jittered)
            """,
            """
            from tensorflow import keras
            import tensorflow as tf

            def jittered(y_true, y_pred):
                loss = keras.ops.square(y_true - y_pred)
                return loss * tf.random.normal([], mean=1.0, stddev=0.01, dtype=loss.dtype)

            keras.Sequential().compile(loss=jittered)
            """,
            note="a loss given to compile; TensorFlow imported once",
        ),
        Invalid(
            """
            import random as rnd
            import tensorflow as tf

            @tf.function
            def pick(x: tf.Tensor, n):
                return x[rnd.randint(0, n - 1)]
            """,
            """
            import tensorflow as tf

            @tf.function
            def pick(x: tf.Tensor, n):
                return x[tf.random.uniform([], minval=0, maxval=n, dtype=tf.int32)]
            """,
        ),
        Invalid(
            """
            import random
            import tensorflow as tf

            @tf.function
            def step(x):
                random.seed(0)
                return x + random.choice(CHOICES)
            """,
            None,
            findings=2,
            note="a seed, and a `choice` from a name not known to hold numbers: findings, no fix",
        ),
        Invalid(
            """
            import random
            import tensorflow as tf

            SIZES = (8, 16, 32)

            @tf.function
            def crop(x: tf.Tensor):
                k = random.choice(SIZES)
                return x[:k]
            """,
            """
            import tensorflow as tf

            SIZES = (8, 16, 32)

            @tf.function
            def crop(x: tf.Tensor):
                k = tf.gather(SIZES, tf.random.uniform([], maxval=len(SIZES), dtype=tf.int32))
                return x[:k]
            """,
            note="a choice from a constant tuple: `tf.gather` of a uniform index",
        ),
        Invalid(
            """
            import random
            import tensorflow as tf

            @tf.function
            def permute(x: tf.Tensor):
                order = [0, 1, 2, 3]
                random.shuffle(order)
                return tf.gather(x, order)
            """,
            """
            import tensorflow as tf

            @tf.function
            def permute(x: tf.Tensor):
                order = [0, 1, 2, 3]
                order = tf.random.shuffle(order)
                return tf.gather(x, order)
            """,
            note="an in-place shuffle of a local list read only by `tf.gather`: rebound",
        ),
        Invalid(
            """
            import random
            import tensorflow as tf

            @tf.function
            def pick(x: tf.Tensor):
                idx = random.sample(range(8), 3)
                return tf.gather(x, idx), len(idx)
            """,
            None,
            note="`len(idx)` needs the list: refused, with the reason",
        ),
        Valid(
            """
            import random
            import tensorflow as tf

            def make_batch(n):
                return [random.random() for _ in range(n)]

            @tf.function
            def step(x):
                return x + tf.random.uniform(tf.shape(x))
            """,
            note="`random` outside traced code, tf.random inside",
        ),
        Valid(
            """
            import numpy as np
            import tensorflow as tf

            @tf.function
            def step(x):
                return x + np.random.random()
            """,
            note="NumPy's `random` is TFR102's",
        ),
    )

    def special_case(
        self,
        site: SampleSite,
        writer: SampleWriter,
        message: str,
        imports: tuple[ImportRequest, ...],
    ) -> Violation | None:
        """`sample` and `shuffle` make lists (`list_draws`): rewritten when
        every read of the list takes a tensor."""
        name = site.function_name
        if name not in ("sample", "shuffle"):
            return None
        tf = writer.tf
        unsafe = "the values drawn differ from the host generator's" if writer.seed else None
        if name == "sample":
            replacement = writer.replace(list_draws.sample_text(writer, site))
            edits: tuple[NodeEdit, ...] = (NodeEdit(site.call, replacement),)
            text = f"Sample with `{tf}.random.shuffle(...)[:k]` on every call"
        else:
            statement, assign = list_draws.shuffle_statement(writer.ctx, site, writer)
            target = next(
                s for s in statement.body if isinstance(s, cst.Expr) and s.value is site.call
            )
            edits = (NodeEdit(target, assign.with_changes(semicolon=target.semicolon)),)
            text = f"Shuffle with `{tf}.random.shuffle` on every call, rebinding the list"
        if unsafe is not None:
            fix = CstFix(f"{text} (unsafe: {unsafe})", edits, imports, Applicability.UNSAFE)
        else:
            fix = CstFix(text, edits, imports)
        return Violation(site.call, message, fix)


RULES = (PythonRandomInTracedCode,)
