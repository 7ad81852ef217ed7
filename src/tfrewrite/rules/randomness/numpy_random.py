"""TFR102: NumPy random sampling in traced code, rewritten into `tf.random`."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import libcst as cst

from tfrewrite.facts.context import RuleContext
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
from tfrewrite.rules.randomness.choices import literal_flag, numpy_choice
from tfrewrite.rules.randomness.generators import generator_draws
from tfrewrite.rules.randomness.random_sampling import RandomSamplingRule, Rewrite
from tfrewrite.rules.randomness.sample_writer import SampleWriter

# NumPy's legacy integer default (`int`) is int64 on 64-bit platforms (all of them since NumPy 2).
_NUMPY_INT = "int64"
# Dtypes `tf.range` produces directly (others: an int64 range, cast).
_RANGE_DTYPES = frozenset({"int32", "int64", "float32", "float64"})


def _float_sample(w: SampleWriter, op: str, shape: str, keywords: list[tuple[str, str]]) -> str:
    dtype, cast_to = w.sample_dtype(FLOAT, w.astype_dtype())
    return w.cast(w.continuous(op, shape, keywords, dtype), cast_to)


def _two_parameters(op: str, first: tuple[str, str], second: tuple[str, str]) -> Rewrite:
    """`normal(loc, scale, size)` / `uniform(low, high, size)`: two scalar
    parameters, each `(NumPy name, tf.random keyword)`, then a size."""
    renames = (first, second)

    def rewrite(w: SampleWriter, site: SampleSite) -> str:
        args = bind(site.call, (first[0], second[0], "size"))
        size = args.get("size")
        w.require_scalar_parameters(size, **{np_name: args.get(np_name) for np_name, _ in renames})
        keywords = [
            (tf_name, w.code(args[np_name])) for np_name, tf_name in renames if np_name in args
        ]
        return _float_sample(w, op, w.shape(size), keywords)

    return rewrite


def _dims(op: str) -> Rewrite:
    """`rand(d0, d1, ...)` / `randn(d0, d1, ...)`: dimensions as arguments."""

    def rewrite(w: SampleWriter, site: SampleSite) -> str:
        shape = w.integer_shape_of_dims(site.call.args)
        return _float_sample(w, op, shape, [])

    return rewrite


def _size_only(op: str) -> Rewrite:
    """`random_sample(size)` / `standard_normal(size)`: only a size."""

    def rewrite(w: SampleWriter, site: SampleSite) -> str:
        args = bind(site.call, ("size",))
        return _float_sample(w, op, w.shape(args.get("size")), [])

    return rewrite


def _randint(w: SampleWriter, site: SampleSite) -> str:
    args = bind(site.call, ("low", "high", "size", "dtype"), required=1)
    return _integer_draw(w, args, endpoint=False)


def _generator_integers(w: SampleWriter, site: SampleSite) -> str:
    """`Generator.integers(low, high, size, dtype, endpoint)`: `randint`,
    with `endpoint=True` including the upper bound."""
    args = bind(site.call, ("low", "high", "size", "dtype", "endpoint"), required=1)
    return _integer_draw(w, args, endpoint=literal_flag(w, args.get("endpoint"), False))


def _integer_draw(w: SampleWriter, args: dict[str, cst.BaseExpression], endpoint: bool) -> str:
    size, low, high = args.get("size"), args["low"], args.get("high")
    w.require_scalar_parameters(size, low=low, high=high)
    explicit = w.astype_dtype()
    if explicit is None and not is_none(args.get("dtype")):
        explicit = w.dtype(args["dtype"])
        if explicit.kind != INT:
            raise Refusal(f"`dtype={w.code(args['dtype'])}` is not an integer dtype")
    dtype, cast_to = w.sample_dtype(INT, explicit)
    shape = w.shape(size)
    bound = w.plus_one if endpoint else w.code
    if is_none(high):  # randint(high): integers in [0, high)
        return w.cast(w.integers(shape, None, bound(low), dtype, _NUMPY_INT), cast_to)
    assert high is not None
    return w.cast(w.integers(shape, w.code(low), bound(high), dtype, _NUMPY_INT), cast_to)


def _binomial(w: SampleWriter, site: SampleSite) -> str:
    args = bind(site.call, ("n", "p", "size"), required=2)
    n, p, size = args["n"], args["p"], args.get("size")
    if not is_integer_literal(n, 1):
        raise Refusal(
            f"`n={w.code(n)}`: only `n=1` (one Bernoulli trial) has an exact `tf.random` form"
        )
    w.require_scalar_parameters(size, p=p)
    draw = f"{w.random_call('uniform', w.shape(size), [], None)} < {w.operand(p)}"
    dtype, cast_to = w.sample_dtype(INT, w.astype_dtype())
    if dtype is not None and dtype.tf_name == "bool":
        return w.cast(draw, cast_to)
    mask = f"{w.tf}.cast({draw}, {dtype.code if dtype else f'{w.tf}.{_NUMPY_INT}'})"
    return w.cast(mask, cast_to)


def _permutation(w: SampleWriter, site: SampleSite) -> str:
    args = bind(site.call, ("x",), required=1)
    x = args["x"]
    dtype = w.astype_dtype()
    if w.is_integer(x):
        direct = dtype is not None and dtype.tf_name in _RANGE_DTYPES
        range_dtype = dtype.code if direct and dtype else f"{w.tf}.{_NUMPY_INT}"
        permuted = w.shuffle(f"{w.tf}.range({w.dimension_expression(x)}, dtype={range_dtype})")
        return permuted if direct or dtype is None else w.cast(permuted, dtype)
    if w.site.facts.is_tensor(x):
        shuffled = w.shuffle(w.code(x))
        return shuffled if dtype is None else f"{w.tf}.cast({shuffled}, {dtype.code})"
    raise Refusal(
        f"`{w.code(x)}` is not known to be an integer or a tensor: "
        "NumPy permutes `range(n)` for an integer and the first axis of an array"
    )


_REWRITES: dict[str, Rewrite] = {
    "normal": _two_parameters("normal", ("loc", "mean"), ("scale", "stddev")),
    "uniform": _two_parameters("uniform", ("low", "minval"), ("high", "maxval")),
    "rand": _dims("uniform"),
    "randn": _dims("normal"),
    "randint": _randint,
    "random": _size_only("uniform"),
    "random_sample": _size_only("uniform"),
    "sample": _size_only("uniform"),
    "ranf": _size_only("uniform"),
    "standard_normal": _size_only("normal"),
    "binomial": _binomial,
    "permutation": _permutation,
    "choice": numpy_choice,
}

# Methods of a `np.random.default_rng` generator (`RandomState` has `_REWRITES`'s).
_GENERATOR_REWRITES: dict[str, Rewrite] = {
    "normal": _REWRITES["normal"],
    "uniform": _REWRITES["uniform"],
    "random": _size_only("uniform"),
    "standard_normal": _size_only("normal"),
    "integers": _generator_integers,
    "binomial": _binomial,
    "choice": numpy_choice,
}


class NumpyRandomInTracedCode(RandomSamplingRule):
    module_prefix = "numpy.random"
    rewrites = _REWRITES
    dtype_hint = "`.astype(dtype)` would name it"
    natural_dtypes = {FLOAT: "float64", INT: _NUMPY_INT}
    code = "TFR102"
    name = "numpy-random-in-traced-code"
    summary = "NumPy random sampling in traced code runs once, at trace time"
    fix_applicability = Applicability.SAFE
    explanation = """
    ## What it does
    Finds `np.random` calls in code that runs traced (a `@tf.function`, a loss
    given to `compile`, a Keras `Loss.call`, ...) and rewrites them into
    `tf.random` ops, in any import spelling: `np.random.normal`,
    `import numpy.random as npr` then `npr.normal`, `from numpy.random import normal`.

    ## Why is this bad?
    NumPy samples on the host. Under tracing the call runs once, while the
    graph is built, and its result becomes a constant of the graph: every
    later call (every batch) reuses the same "random" noise. `tf.random` ops
    draw afresh on each call.

    ## The mapping
    | NumPy | TensorFlow |
    |---|---|
    | `normal(loc, scale, size)` | `tf.random.normal(shape, mean=loc, stddev=scale)` |
    | `uniform(low, high, size)` | `tf.random.uniform(shape, minval=low, maxval=high)` |
    | `rand(d0, d1)` | `tf.random.uniform([d0, d1])` |
    | `randn(d0, d1)` | `tf.random.normal([d0, d1])` |
    | `random(size)`, `random_sample`, `sample`, `ranf` | `tf.random.uniform(shape)` |
    | `standard_normal(size)` | `tf.random.normal(shape)` |
    | `randint(lo, hi, size)` | `tf.random.uniform(shape, minval=lo, maxval=hi, dtype=tf.int64)` |
    | `randint(high)` | `tf.random.uniform(shape, maxval=high, dtype=tf.int64)` |
    | `binomial(1, p, size)` | `tf.cast(tf.random.uniform(shape) < p, tf.int64)` |
    | `permutation(n)` (an integer) | `tf.random.shuffle(tf.range(n, dtype=tf.int64))` |
    | `permutation(x)` (a tensor) | `tf.random.shuffle(x)` |
    | `shuffle(x)` (a statement) | `x = tf.random.shuffle(x)` (unsafe fix, see below) |
    | `choice(n, size)` | `tf.random.uniform(shape, maxval=n, dtype=tf.int64)` |
    | `choice(seq, size)` | `tf.gather(seq, tf.random.uniform(shape, maxval=len, dtype=tf.int32))` |
    | `choice(n, size=k, p=p)` | `tf.random.categorical(tf.math.log([p]), k)[0]` |
    | `choice(n, size=k, replace=False)` | `tf.random.shuffle(tf.range(n, dtype=tf.int64))[:k]` |

    `choice` draws from an integer `n` or a list or tuple of numbers written
    in the code (or a name bound once to one that nothing changes in place:
    the graph keeps the elements it saw when traced). A literal `p` must be
    what NumPy accepts (one weight per element, none negative, summing to
    1): `tf.random.categorical` would normalise weights NumPy refuses.
    Without `size`, the categorical draw is read at `[0, 0]` (a scalar).
    `choice(n)` without `size` returns a Python int, which `tf.constant`
    makes int32; with `size`, an int64 array.

    `size` becomes `shape`: absent or `None` is a scalar (`[]`), an integer `n`
    is `[n]`, a tuple keeps its elements, `x.shape` becomes `tf.shape(x)` and
    `x.shape[i]` becomes `tf.shape(x)[i]` (a traced dimension can be `None`
    statically but is always known to `tf.shape`).

    ## Where the sample goes
    A rewrite turns a NumPy array into a tensor, so every use of the sample
    is followed, through arithmetic, indexing and local names
    (`noise = ...; y + noise`), before it is rewritten:
    - a conversion right around the call is folded into it:
      `tf.constant(np.random.randn(3, 4), dtype=tf.float32)` becomes
      `tf.random.normal([3, 4], dtype=tf.float32)` (`tf.constant` of a tensor
      raises `TypeError` under tracing), as are `np.asarray(...)`,
      `np.float32(...)` and a trailing `.astype(dtype)`;
    - conversions of a named sample are rewritten with it:
      `tf.constant(noise)` and `np.asarray(noise)` become `noise`,
      `noise.astype(d)` and `tf.constant(noise, dtype=d)` become
      `tf.cast(noise, d)` (a tensor has no `.astype`);
    - a use that needs a host value refuses the rewrite, with the reason:
      `int(...)`, `range(...)`, `np.clip(...)`, `.item()`, `.tolist()`,
      `.reshape`, indexing a Python list, `tf.image.random_contrast` /
      `random_saturation` bounds and `random_brightness` / `random_hue`
      deltas (TensorFlow compares them in Python), a `while` test, a `for`
      loop over the sample, a chained comparison;
    - a compared sample (a mask) is cast where NumPy gave its boolean array
      a number's dtype. Multiplied with a tensor `x` (`keep =
      np.random.rand(n) < p; x * keep`, also after `keep * 1.0`) the array
      took `x`'s dtype: `tf.cast(tf.random.uniform([n]) < p, x.dtype)`; with
      Python numbers only (`return (np.random.rand(n) < p) * 1.0`) NumPy's
      float64 (int64 for an integer). A conversion of the comparison is the
      cast: `(np.random.rand(n) < p).astype("float32")` becomes
      `tf.cast(tf.random.uniform([n]) < p, tf.float32)`, and
      `tf.cast(..., x.dtype)` when the converted mask then meets a tensor
      `x` in arithmetic (NumPy's float32 array took `x`'s dtype there; a
      float32 tensor would not). A boolean tensor in arithmetic fails or
      stays boolean (`keep * 0.5` is all `False`), so a mask in arithmetic
      that also has other uses (`tf.where(keep, ...)`) is refused;
    - a sample deciding an `if` (`if np.random.rand() < eps:`) becomes a
      tensor condition that needs AutoGraph (or TFR101's `tf.cond`): an unsafe
      fix, refused where AutoGraph is off (`autograph=False`, a loss given to
      Keras `compile`).

    ## Dtypes
    NumPy samples float64 (and `int64` integers); TensorFlow defaults to
    float32. A NumPy array adapts to the tensor it meets; a tensor does not.
    The rewrite picks the dtype the computation around the sample needs:
    - a trailing `.astype(dtype)`, `randint(..., dtype=)` or a conversion
      around the call is folded into `dtype=` (`np.float32` → `tf.float32`,
      `"float32"`, `float` → `tf.float64`; `tf.constant(<sample>)` keeps
      NumPy's float64); an integer target of a float sample becomes `tf.cast`
      of a float64 sample, which truncates toward zero as `astype` does;
    - a sample that meets a tensor `x` (`x + noise`, `x + 0.1 * noise`,
      `x * mask`, also through a name: `scale = ...; x * scale`) is drawn
      with `dtype=x.dtype`, the dtype NumPy's array was converted to there
      (integer samples are cast to it);
    - a named sample converted later (`b = noise.astype(np.float32)`,
      `np.asarray(noise, np.float32)`, `np.float32(noise)`) is still a NumPy
      array after the conversion, and eager converts it to the dtype of the
      tensor `x` it then meets: where every use of the converted sample
      meets `x` in arithmetic, the sample is drawn in `x.dtype` and the
      conversion goes (`b = noise`); where the converted sample's dtype
      matters otherwise (returned, given to an op) the conversion stays
      `tf.cast(noise, tf.float32)`. A converted sample that does both, meets
      a value of unknown dtype, or is converted to an integer or float16
      (which truncates or rounds it first) is an unsafe fix, with the reason;
    - otherwise TensorFlow's float32 (int64 for integers).

    ## Seeds
    - `np.random.seed(S)` at the top of the traced function reseeds on every
      call, so NumPy draws the same values on every call. The draws after it
      become `tf.random.stateless_normal(shape, seed=[S, k], ...)` (`k`
      numbers the function's draws; `stateless_uniform`,
      `tf.random.experimental.stateless_shuffle`), which keeps exactly that:
      the same values on every call and from run to run. The values are not
      NumPy's, so the fix is unsafe.
    - `np.random.seed(S)` elsewhere (module level, a setup function) makes
      the draws a sequence, fresh on every call and reproducible from run to
      run. Unseeded `tf.random` is fresh but not reproducible, stateless
      draws reproducible but not fresh: the rewrite is refused unless the
      file also calls `tf.random.set_seed(...)` (TensorFlow reads the global
      seed when it traces a function, then its ops draw a reproducible
      sequence).
    - a seed only on some paths (in a branch, after the draw) refuses.

    ## NumPy generator objects
    A generator made once, outside the traced code (`rng =
    np.random.default_rng(0)` at module level, `self.rng =
    np.random.RandomState(seed)` in `__init__`), is a seeded stream: every
    eager call draws its next values. Its draws in traced code become draws
    of a `tf.random.Generator` made in the same place, `tf_rng =
    tf.random.Generator.from_seed(0)` next to `rng` (`self.tf_rng = ...` in
    `__init__`; `from_non_deterministic_state()` for an unseeded generator),
    with the same mapping as above: `rng.normal(size=x.shape)` becomes
    `tf_rng.normal(tf.shape(x))`, `rng.integers(lo, hi, endpoint=True)`
    includes `hi`. The NumPy generator stays for the code that is not traced.
    `tf.random.Generator` has no shuffle and no categorical draw, so
    `permutation`, `shuffle` and `choice` with `p` are refused there. A
    generator made in the traced code itself (a local `rng`,
    `np.random.default_rng(0).normal()`) would be a new TensorFlow variable
    on every trace, one bound more than once has no one place to copy, and
    `np.random.Generator(bit_generator)` no seed to read: those draws are
    reported without a fix, with the reason.

    ## When it is not rewritten
    The call stays, with a finding saying why, when the mapping would not be
    faithful: an argument `tf.random` has no counterpart, `*args`/`**kwargs`,
    a `size` that is not a tuple, an integer or `x.shape` (a name could hold
    either), no `size` while a parameter is not known to be a scalar (a Python
    number, `float(...)`, a scalar tensor): `np.random.normal(x, 0.1)` draws one
    value per element of `x`, `tf.random` with shape `[]` one value for all,
    `binomial` with `n` other than 1, a dtype with no TensorFlow counterpart,
    `permutation` of something not known to be an integer or a tensor, an
    integer sample meeting a value of unknown dtype, a use that needs a host
    value (above), distributions with no mapping (`poisson`, `default_rng`,
    ...), a `choice` from a population not known where the code is traced,
    weighted draws without replacement, and the generator draws listed
    above. `np.random.seed(...)` in traced code is reported without a fix: it runs
    once, at trace time, and does not seed `tf.random`.

    `np.random.shuffle(x)` shuffles `x` in place and returns `None`, while
    `tf.random.shuffle` returns a new tensor. The fix `x = tf.random.shuffle(x)`
    is offered only for a statement on a plain name, and is unsafe: other
    references to the same array do not see the shuffle, and `x` becomes a
    tensor.

    ## Fix safety
    The fix is safe only when every use of the sample is known to accept the
    tensor in the dtype it is drawn in: then every call draws afresh from the
    distribution and shape NumPy drew from once, and the code around the
    sample computes as before. Indices
    (`x[i]`, `tf.gather(x, i)`), shapes (`tf.zeros([n, 2])`), `tf.cast` and a
    compared sample (a boolean) are safe uses whatever the dtype.

    It is unsafe (applied with `--unsafe-fixes`; the fix message says why)
    when the sample meets a value not known to be a tensor (`x` may be a
    NumPy array), is returned with no dtype named (NumPy's float64 decided
    the result's dtype), is passed to a `tf.*` op (which converts a NumPy
    argument to the dtype it needs, while a tensor must have it:
    `tf.concat([x, m], 0)`), is a converted mask that meets a tensor `x`
    while another use reads the conversion's own dtype (`m =
    (...).astype("float32")` in `tf.reduce_sum(x * m) / tf.reduce_sum(m)`:
    NumPy's array took `x`'s dtype in the product only), is a converted
    sample that meets a tensor in the conversion's dtype (above), leaves the
    function (passed to a function of the project, stored on an attribute,
    returned from a callee), meets tensors whose dtypes may differ, or
    decides an `if` (it then needs AutoGraph or TFR101's `tf.cond`). Draws
    seeded by `np.random.seed(S)` at the top of the function (stateless
    draws: not NumPy's values) and the in-place `shuffle` are unsafe too,
    as is every draw of a NumPy generator object: the `tf.random.Generator`
    draws a stream of its own, not the NumPy generator's values (like any
    seeded rewrite), and it is a TensorFlow variable made where the NumPy
    generator is made.
    What "When it is not rewritten" lists is reported with no fix.
    """
    examples = (
        Invalid(
            """
            import numpy as np
            import tensorflow as tf

            @tf.function
            def noisy(x: tf.Tensor):
                return x + np.random.normal(0, 0.1, size=x.shape)
            """,
            """
            import tensorflow as tf

            @tf.function
            def noisy(x: tf.Tensor):
                return x + tf.random.normal(tf.shape(x), mean=0, stddev=0.1, dtype=x.dtype)
            """,
            note="meets a tensor: drawn in its dtype",
        ),
        Invalid(
            """
            import numpy.random as npr
            import tensorflow as tf

            @tf.function
            def jitter(x):
                scale = npr.uniform(0.9, 1.1)
                return x * scale
            """,
            """
            import tensorflow as tf

            @tf.function
            def jitter(x):
                scale = tf.random.uniform([], minval=0.9, maxval=1.1)
                return x * scale
            """,
            unsafe=True,
            note="no size: a scalar; `x` is not known to be a tensor, so its dtype is not "
            "known either: an unsafe fix, float32 by default",
        ),
        Invalid(
            """
            from numpy.random import rand
            from tensorflow import keras

            def smoothed(y_true, y_pred):
                loss = keras.ops.square(y_true - y_pred)
                return loss + rand(4, 3).astype("float32")

            model = keras.Sequential([keras.layers.Dense(3)])
            model.compile(loss=smoothed)
            """,
            """
            from tensorflow import keras
            import tensorflow as tf

            def smoothed(y_true, y_pred):
                loss = keras.ops.square(y_true - y_pred)
                return loss + tf.random.uniform([4, 3], dtype=loss.dtype)

            model = keras.Sequential([keras.layers.Dense(3)])
            model.compile(loss=smoothed)
            """,
            note="a loss given to compile; meets the tensor `loss`: drawn in its dtype; "
            "TensorFlow imported once",
        ),
        Invalid(
            """
            import numpy as np
            import tensorflow as tf

            @tf.function
            def dropout(x: tf.Tensor):
                return x * np.random.binomial(1, 0.8, size=x.shape)
            """,
            """
            import tensorflow as tf

            @tf.function
            def dropout(x: tf.Tensor):
                return x * tf.cast(tf.random.uniform(tf.shape(x)) < 0.8, x.dtype)
            """,
        ),
        Invalid(
            """
            import numpy as np
            import tensorflow as tf

            @tf.function
            def masked_mse(y_true, y_pred):
                mask = (np.random.rand(3) > 0.5).astype("float32")
                return tf.reduce_mean(tf.square(y_true - y_pred) * mask)
            """,
            """
            import tensorflow as tf

            @tf.function
            def masked_mse(y_true, y_pred):
                mask = tf.cast(tf.random.uniform([3]) > 0.5, y_true.dtype)
                return tf.reduce_mean(tf.square(y_true - y_pred) * mask)
            """,
            note="a converted mask meets a tensor: NumPy's float32 array took the tensor's "
            "dtype there, so the comparison is cast to it",
        ),
        Invalid(
            """
            import numpy as np
            import tensorflow as tf

            @tf.function
            def noisy(x: tf.Tensor):
                noise = np.random.normal(size=(3,))
                b = noise.astype(np.float32)
                return x + b
            """,
            """
            import tensorflow as tf

            @tf.function
            def noisy(x: tf.Tensor):
                noise = tf.random.normal([3], dtype=x.dtype)
                b = noise
                return x + b
            """,
            note="a converted sample meets a tensor: NumPy's float32 array took the tensor's "
            "dtype there, so the sample is drawn in it and the conversion goes",
        ),
        Invalid(
            """
            import numpy as np
            import tensorflow as tf

            @tf.function
            def pick(x: tf.Tensor):
                i = np.random.randint(0, 4)
                return x[i]
            """,
            """
            import tensorflow as tf

            @tf.function
            def pick(x: tf.Tensor):
                i = tf.random.uniform([], minval=0, maxval=4, dtype=tf.int64)
                return x[i]
            """,
        ),
        Invalid(
            """
            import numpy as np
            import tensorflow as tf

            @tf.function
            def pick(x: tf.Tensor):
                return x[np.random.choice(3, p=[0.2, 0.3, 0.5])]
            """,
            """
            import tensorflow as tf

            @tf.function
            def pick(x: tf.Tensor):
                return x[tf.random.categorical(tf.math.log([[0.2, 0.3, 0.5]]), 1)[0, 0]]
            """,
            note="a weighted choice: a categorical draw",
        ),
        Invalid(
            """
            import numpy as np
            import tensorflow as tf

            rng = np.random.default_rng(0)

            @tf.function
            def noisy(x: tf.Tensor):
                return x + rng.normal(0.0, 0.1, size=x.shape)
            """,
            """
            import numpy as np
            import tensorflow as tf

            rng = np.random.default_rng(0)
            tf_rng = tf.random.Generator.from_seed(0)

            @tf.function
            def noisy(x: tf.Tensor):
                return x + tf_rng.normal(tf.shape(x), mean=0.0, stddev=0.1, dtype=x.dtype)
            """,
            unsafe=True,
            note="a NumPy generator's draws: a `tf.random.Generator` made next to it (unsafe: "
            "its own stream, and a TensorFlow variable)",
        ),
        Invalid(
            """
            import numpy as np
            import tensorflow as tf

            @tf.function
            def noisy(x):
                np.random.seed(0)
                return x + np.random.normal(size=shape)
            """,
            None,
            findings=2,
            note="a seed, and a size that is not a tuple, an integer or `x.shape`: no fix",
        ),
        Invalid(
            """
            import numpy as np
            import tensorflow as tf

            @tf.function
            def order(x):
                idx = np.arange(8)
                np.random.shuffle(idx)
                return tf.gather(x, idx)
            """,
            """
            import numpy as np
            import tensorflow as tf

            @tf.function
            def order(x):
                idx = np.arange(8)
                idx = tf.random.shuffle(idx)
                return tf.gather(x, idx)
            """,
            unsafe=True,
            note="in-place shuffle: an unsafe fix",
        ),
        Invalid(
            """
            import numpy as np
            import tensorflow as tf

            @tf.function
            def init(y_pred):
                return y_pred + tf.constant(np.random.randn(8, 3), dtype=tf.float32)
            """,
            """
            import tensorflow as tf

            @tf.function
            def init(y_pred):
                return y_pred + tf.random.normal([8, 3], dtype=tf.float32)
            """,
            note="the conversion around the sample is folded into it",
        ),
        Invalid(
            """
            import numpy as np
            import tensorflow as tf

            @tf.function
            def augment(image):
                return tf.image.random_contrast(image, np.random.uniform(0.2, 0.5), 1.5)
            """,
            None,
            note="`random_contrast` compares its bounds in Python: refused, with the reason",
        ),
        Invalid(
            """
            import numpy as np
            import tensorflow as tf

            @tf.function
            def noisy(x: tf.Tensor):
                np.random.seed(0)
                return x + np.random.normal(size=x.shape)
            """,
            """
            import numpy as np
            import tensorflow as tf

            @tf.function
            def noisy(x: tf.Tensor):
                np.random.seed(0)
                return x + tf.random.stateless_normal(tf.shape(x), seed=[0, 0], dtype=x.dtype)
            """,
            findings=2,
            unsafe=True,
            note="reseeded on every call: the same values on every call, kept by a stateless "
            "draw (unsafe: not NumPy's values); the seed itself is reported",
        ),
        Valid(
            """
            import numpy as np
            import tensorflow as tf

            def make_data(n):
                return np.random.normal(size=(n, 4)).astype("float32")

            @tf.function
            def step(x):
                return x + tf.random.normal(tf.shape(x))
            """,
            note="NumPy outside traced code, tf.random inside",
        ),
        Valid(
            """
            import numpy as np

            def augment(x):
                return x + np.random.uniform(-1, 1, size=x.shape)
            """,
            note="not traced",
        ),
    )

    def check(self, ctx: RuleContext) -> Iterator[Violation]:
        yield from super().check(ctx)
        tf, imports = ctx.tensorflow()
        for draw in generator_draws(ctx):
            yield self.violation(ctx, draw.site, tf, imports, generator=draw)

    def generator_rewrites(self, legacy: bool) -> Mapping[str, Rewrite]:
        return _REWRITES if legacy else _GENERATOR_REWRITES

    def special_case(
        self,
        site: SampleSite,
        writer: SampleWriter,
        message: str,
        imports: tuple[ImportRequest, ...],
    ) -> Violation | None:
        """`np.random.shuffle(x)` shuffles in place: only a statement on a
        plain name can be rebound, and only as an unsafe fix."""
        if site.function_name != "shuffle":
            return None
        args = bind(site.call, ("x",), required=1)
        x = args["x"]
        statement = site.ancestors[-1] if site.ancestors else None
        if not (
            isinstance(statement, cst.Expr)
            and statement.value is site.call
            and isinstance(x, cst.Name)
        ):
            raise Refusal(
                "`shuffle` shuffles in place and returns `None`; only a statement "
                "`shuffle(name)` can become `name = tf.random.shuffle(name)`"
            )
        assign = cst.parse_statement(f"{x.value} = {writer.shuffle(x.value)}").body[0]
        assert isinstance(assign, cst.Assign)
        fix = CstFix(
            f"Rebind `{x.value}` to `{writer.tf}.random.shuffle({x.value})` (unsafe: other "
            f"references to the array are not shuffled, and `{x.value}` becomes a tensor)",
            (NodeEdit(statement, assign.with_changes(semicolon=statement.semicolon)),),
            imports,
            Applicability.UNSAFE,
        )
        return Violation(site.call, message, fix)


RULES = (NumpyRandomInTracedCode,)
