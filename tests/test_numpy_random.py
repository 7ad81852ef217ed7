"""TFR102: NumPy random sampling in traced code -> `tf.random`.

Before/after source tests for every mapping, dtype choice and import spelling,
the traced contexts the rule looks into, and the calls it must leave alone or
refuse with a reason."""

from __future__ import annotations

import textwrap

import pytest

from tfrewrite.api import check_source, fix_source, fix_source_with_findings
from tfrewrite.findings import Applicability

SELECT = ["TFR102"]

# `y_pred` is a tensor to the analysis (a loss parameter name); `x` and `n` are unknown.
TRACED = """\
import numpy as np
import tensorflow as tf


@tf.function
def f(x, y_pred, n):
    return {expr}
"""

NOT_TRACED = """\
import numpy as np
import tensorflow as tf


def f(x, y_pred, n):
    return {expr}
"""


def _traced_after(expr: str) -> str:
    """`TRACED` after a fix: the NumPy import goes when nothing uses it any more."""
    source = TRACED.format(expr=expr)
    return source if "np." in expr else source.replace("import numpy as np\n", "", 1)


def _fix(source: str, unsafe: bool = False) -> str:
    return fix_source(textwrap.dedent(source), select=SELECT, unsafe_fixes=unsafe)


MAPPINGS = [
    # normal
    ("np.random.normal()", "tf.random.normal([])"),
    ("np.random.normal(0.0, 1.0)", "tf.random.normal([], mean=0.0, stddev=1.0)"),
    (
        "np.random.normal(loc=1.0, scale=2.0, size=(3, 4))",
        "tf.random.normal([3, 4], mean=1.0, stddev=2.0)",
    ),
    ("np.random.normal(scale=0.5, size=5)", "tf.random.normal([5], stddev=0.5)"),
    ("np.random.normal(size=None)", "tf.random.normal([])"),
    ("np.random.normal(size=())", "tf.random.normal([])"),
    ("np.random.normal(size=[2, 3])", "tf.random.normal([2, 3])"),
    ("np.random.normal(size=x.shape)", "tf.random.normal(tf.shape(x))"),
    ("np.random.normal(size=(x.shape[0], 3))", "tf.random.normal([tf.shape(x)[0], 3])"),
    ("np.random.normal(size=x.shape[1:])", "tf.random.normal(tf.shape(x)[1:])"),
    ("np.random.normal(size=x.shape[0])", "tf.random.normal([tf.shape(x)[0]])"),
    ("np.random.normal(size=len(x))", "tf.random.normal([len(x)])"),
    ("np.random.normal(size=2 * 3)", "tf.random.normal([2 * 3])"),
    # uniform
    ("np.random.uniform()", "tf.random.uniform([])"),
    ("np.random.uniform(-1, 1, (2,))", "tf.random.uniform([2], minval=-1, maxval=1)"),
    ("np.random.uniform(high=3.0)", "tf.random.uniform([], maxval=3.0)"),
    ("np.random.uniform(low=0.5, size=4)", "tf.random.uniform([4], minval=0.5)"),
    # rand / randn
    ("np.random.rand()", "tf.random.uniform([])"),
    ("np.random.rand(3)", "tf.random.uniform([3])"),
    ("np.random.rand(2, 3)", "tf.random.uniform([2, 3])"),
    ("np.random.rand(*x.shape)", "tf.random.uniform(tf.shape(x))"),
    ("np.random.randn(2, 3)", "tf.random.normal([2, 3])"),
    ("np.random.randn(x.shape[0])", "tf.random.normal([tf.shape(x)[0]])"),
    # parameters known to be scalars without `size`: one draw, as in NumPy
    (
        "np.random.randint(0, x.shape[0] - 1)",
        "tf.random.uniform([], minval=0, maxval=x.shape[0] - 1, dtype=tf.int64)",
    ),
    (
        "np.random.uniform(-1.0, 2 * len(x))",
        "tf.random.uniform([], minval=-1.0, maxval=2 * len(x))",
    ),
    ("np.random.normal(float(n), 0.1)", "tf.random.normal([], mean=float(n), stddev=0.1)"),
    # random / random_sample / sample / ranf / standard_normal
    ("np.random.random()", "tf.random.uniform([])"),
    ("np.random.random((2, 2))", "tf.random.uniform([2, 2])"),
    ("np.random.random_sample(size=3)", "tf.random.uniform([3])"),
    ("np.random.sample(3)", "tf.random.uniform([3])"),
    ("np.random.ranf()", "tf.random.uniform([])"),
    ("np.random.standard_normal(4)", "tf.random.normal([4])"),
    ("np.random.standard_normal(size=x.shape)", "tf.random.normal(tf.shape(x))"),
    # randint: integer bounds, integer dtype (NumPy's default int64)
    ("np.random.randint(10)", "tf.random.uniform([], maxval=10, dtype=tf.int64)"),
    (
        "np.random.randint(2, 10, size=3)",
        "tf.random.uniform([3], minval=2, maxval=10, dtype=tf.int64)",
    ),
    (
        "np.random.randint(low=-3, high=3, size=(2, 2))",
        "tf.random.uniform([2, 2], minval=-3, maxval=3, dtype=tf.int64)",
    ),
    (
        "np.random.randint(0, 5, dtype=np.int32)",
        "tf.random.uniform([], minval=0, maxval=5, dtype=tf.int32)",
    ),
    (
        "np.random.randint(0, 5, dtype='int32')",
        "tf.random.uniform([], minval=0, maxval=5, dtype=tf.int32)",
    ),
    (
        "np.random.randint(0, 5, dtype=np.uint8)",
        "tf.cast(tf.random.uniform([], minval=0, maxval=5, dtype=tf.int64), tf.uint8)",
    ),
    (
        "np.random.randint(0, 5, 3).astype(np.float32)",
        "tf.cast(tf.random.uniform([3], minval=0, maxval=5, dtype=tf.int64), tf.float32)",
    ),
    # binomial with n=1 (Bernoulli)
    ("np.random.binomial(1, 0.3)", "tf.cast(tf.random.uniform([]) < 0.3, tf.int64)"),
    (
        "np.random.binomial(n=1, p=0.3, size=(2,))",
        "tf.cast(tf.random.uniform([2]) < 0.3, tf.int64)",
    ),
    ("np.random.binomial(1, 0.3, 4).astype(bool)", "tf.random.uniform([4]) < 0.3"),
    (
        "np.random.binomial(1, 0.3, 4).astype(np.float32)",
        "tf.cast(tf.random.uniform([4]) < 0.3, tf.float32)",
    ),
    (
        "np.random.binomial(1, 1 if n else 0.5)",
        "tf.cast(tf.random.uniform([]) < (1 if n else 0.5), tf.int64)",
    ),
    # permutation
    ("np.random.permutation(10)", "tf.random.shuffle(tf.range(10, dtype=tf.int64))"),
    (
        "np.random.permutation(x.shape[0])",
        "tf.random.shuffle(tf.range(tf.shape(x)[0], dtype=tf.int64))",
    ),
    (
        "np.random.permutation(8).astype(np.int32)",
        "tf.random.shuffle(tf.range(8, dtype=tf.int32))",
    ),
    (
        "np.random.permutation(8).astype(bool)",
        "tf.cast(tf.random.shuffle(tf.range(8, dtype=tf.int64)), tf.bool)",
    ),
    ("np.random.permutation(y_pred)", "tf.random.shuffle(y_pred)"),
    (
        "np.random.permutation(y_pred).astype(np.float16)",
        "tf.cast(tf.random.shuffle(y_pred), tf.float16)",
    ),
]

DTYPES = [
    # a trailing .astype folds into dtype=
    ("np.random.normal(size=3).astype(np.float32)", "tf.random.normal([3], dtype=tf.float32)"),
    ("np.random.normal(size=3).astype('float16')", "tf.random.normal([3], dtype=tf.float16)"),
    ("np.random.normal(size=3).astype(float)", "tf.random.normal([3], dtype=tf.float64)"),
    ("np.random.rand(3).astype(np.float64)", "tf.random.uniform([3], dtype=tf.float64)"),
    ("np.random.rand(3).astype(dtype=np.double)", "tf.random.uniform([3], dtype=tf.float64)"),
    ("np.random.rand(3).astype(tf.float32)", "tf.random.uniform([3], dtype=tf.float32)"),
    ("np.random.rand(3).astype(x.dtype)", "tf.random.uniform([3], dtype=x.dtype)"),
    # an integer target truncates a float64 sample, as astype does
    (
        "np.random.uniform(0, 10, 3).astype(np.int32)",
        "tf.cast(tf.random.uniform([3], minval=0, maxval=10, dtype=tf.float64), tf.int32)",
    ),
    # combined with a tensor: drawn in (or cast to) its dtype
    (
        "y_pred + np.random.normal(0, 0.1, size=y_pred.shape)",
        "y_pred + tf.random.normal(tf.shape(y_pred), mean=0, stddev=0.1, dtype=y_pred.dtype)",
    ),
    ("np.random.normal(size=3) * y_pred", "tf.random.normal([3], dtype=y_pred.dtype) * y_pred"),
    (
        "y_pred * (1 + 0.1 * np.random.randn())",
        "y_pred * (1 + 0.1 * tf.random.normal([], dtype=y_pred.dtype))",
    ),
    (
        "y_pred[:, 0] - np.random.uniform(size=3)",
        "y_pred[:, 0] - tf.random.uniform([3], dtype=y_pred.dtype)",
    ),
    (
        "2 * y_pred + np.random.uniform(size=3)",
        "2 * y_pred + tf.random.uniform([3], dtype=y_pred.dtype)",
    ),
    (
        "x + np.random.normal(size=x.shape)",
        "x + tf.random.normal(tf.shape(x), dtype=x.dtype)",
    ),
    (
        "y_pred + np.random.randint(0, 2, size=y_pred.shape)",
        "y_pred + tf.cast(tf.random.uniform(tf.shape(y_pred), minval=0, maxval=2, "
        "dtype=tf.int64), y_pred.dtype)",
    ),
    (
        "x * np.random.binomial(1, 0.5, size=x.shape)",
        "x * tf.cast(tf.random.uniform(tf.shape(x)) < 0.5, x.dtype)",
    ),
    (
        "y_pred + np.random.normal(size=3).astype(np.float32)",
        "y_pred + tf.random.normal([3], dtype=y_pred.dtype)",
    ),
    (
        "y_pred + np.random.uniform(0, 5, 3).astype(int)",
        "y_pred + tf.cast(tf.cast(tf.random.uniform([3], minval=0, maxval=5, "
        "dtype=tf.float64), tf.int64), y_pred.dtype)",
    ),
    # not combined with a tensor of known dtype: TensorFlow's float32 default (unsafe)
    ("x + np.random.normal(size=3)", "x + tf.random.normal([3])"),
    (
        "tf.reduce_sum(y_pred) + np.random.normal()",
        "tf.reduce_sum(y_pred) + tf.random.normal([], dtype=y_pred.dtype)",
    ),
    ("1.0 + np.random.normal()", "1.0 + tf.random.normal([])"),
    ("[np.random.normal()]", "[tf.random.normal([])]"),
    # integer indices stay int64
    (
        "y_pred[np.random.randint(0, 3)]",
        "y_pred[tf.random.uniform([], minval=0, maxval=3, dtype=tf.int64)]",
    ),
    (
        "y_pred[np.random.randint(0, 3) + 1]",
        "y_pred[tf.random.uniform([], minval=0, maxval=3, dtype=tf.int64) + 1]",
    ),
    # parentheses around the call are kept
    ("(np.random.normal()) * 2", "(tf.random.normal([])) * 2"),
    # consumers that take a tensor
    (
        "tf.clip_by_value(np.random.normal(size=3), -1, 1)",
        "tf.clip_by_value(tf.random.normal([3]), -1, 1)",
    ),
    ("abs(np.random.normal())", "abs(tf.random.normal([]))"),
    ("np.random.rand(3)[0]", "tf.random.uniform([3])[0]"),
    ("np.random.rand(2, 3).shape", "tf.random.uniform([2, 3]).shape"),
]


@pytest.mark.parametrize(("before", "after"), MAPPINGS + DTYPES)
def test_mapping(before: str, after: str) -> None:
    """The text of each mapping. Returned from the traced function, most
    samples keep an open dtype (NumPy's float64 before), so the fixes are
    applied as unsafe ones here; `test_fix_is_safe_only_when_every_use_is`
    checks which are safe."""
    source = TRACED.format(expr=before)
    fixed, applied, remaining = fix_source_with_findings(source, select=SELECT, unsafe_fixes=True)
    assert fixed == _traced_after(after)
    assert remaining == []
    assert applied and all(f.code == "TFR102" for f in applied)
    assert fix_source(fixed, select=SELECT, unsafe_fixes=True) == fixed  # idempotent


@pytest.mark.parametrize(("before", "after"), MAPPINGS + DTYPES)
def test_same_call_outside_traced_code_is_untouched(before: str, after: str) -> None:
    source = NOT_TRACED.format(expr=before)
    assert check_source(source, select=SELECT) == []
    assert fix_source(source, select=SELECT) == source


IMPORT_SPELLINGS = [
    ("import numpy as np", "np.random.normal(size=3)"),
    ("import numpy as onp", "onp.random.normal(size=3)"),
    ("import numpy", "numpy.random.normal(size=3)"),
    ("import numpy.random", "numpy.random.normal(size=3)"),
    ("import numpy.random as npr", "npr.normal(size=3)"),
    ("from numpy import random", "random.normal(size=3)"),
    ("from numpy import random as nr", "nr.normal(size=3)"),
    ("from numpy.random import normal", "normal(size=3)"),
    ("from numpy.random import normal as gaussian", "gaussian(size=3)"),
]


@pytest.mark.parametrize(("import_line", "call"), IMPORT_SPELLINGS)
def test_import_spellings(import_line: str, call: str) -> None:
    source = (
        f"{import_line}\nimport tensorflow as tf\n\n\n@tf.function\ndef f(x):\n    return {call}\n"
    )
    expected = (  # the fix leaves NumPy unused: its import goes
        "import tensorflow as tf\n\n\n@tf.function\ndef f(x):\n    return tf.random.normal([3])\n"
    )
    assert fix_source(source, select=SELECT, unsafe_fixes=True) == expected


@pytest.mark.parametrize(
    ("tf_import", "decorator", "expected_import", "alias"),
    [
        ("import tensorflow as tf", "tf.function", "import tensorflow as tf", "tf"),
        ("import tensorflow", "tensorflow.function", "import tensorflow", "tensorflow"),
        ("import tensorflow as tflow", "tflow.function", "import tensorflow as tflow", "tflow"),
        (
            "from tensorflow import function",
            "function",
            "from tensorflow import function\nimport tensorflow as tf",
            "tf",
        ),
    ],
)
def test_tensorflow_alias_of_the_file(
    tf_import: str, decorator: str, expected_import: str, alias: str
) -> None:
    source = (
        f"import numpy as np\n{tf_import}\n\n\n@{decorator}\n"
        "def f(x):\n    return np.random.rand(2)\n"
    )
    fixed = fix_source(source, select=SELECT, unsafe_fixes=True)
    assert fixed == (
        f"{expected_import}\n\n\n@{decorator}\ndef f(x):\n    return {alias}.random.uniform([2])\n"
    )


def test_tensorflow_import_added_once_for_several_fixes() -> None:
    source = """
    import numpy as np
    from tensorflow import keras


    def noisy(y_true, y_pred):
        a = np.random.normal(size=3)
        b = np.random.uniform(size=3)
        return a + b


    keras.Sequential().compile(loss=noisy)
    """
    fixed = _fix(source, unsafe=True)
    assert fixed.count("import tensorflow as tf") == 1
    assert "a = tf.random.normal([3])" in fixed and "b = tf.random.uniform([3])" in fixed


TRACED_CONTEXTS = {
    "tf.function decorator": """
        import numpy as np
        import tensorflow as tf

        @tf.function(jit_compile=False)
        def f(x):
            return np.random.rand(2)
        """,
    "tf.function call": """
        import numpy as np
        import tensorflow as tf

        def f(x):
            return np.random.rand(2)

        g = tf.function(f)
        """,
    "loss given to compile": """
        import numpy as np
        import keras

        def f(y_true, y_pred):
            return np.random.rand(2)

        keras.Sequential().compile(optimizer="sgd", loss=f)
        """,
    "Loss.call": """
        import numpy as np
        import keras

        class NoisyLoss(keras.losses.Loss):
            def call(self, y_true, y_pred):
                return np.random.rand(2)
        """,
    "Layer.call": """
        import numpy as np
        from tensorflow import keras

        class Noise(keras.layers.Layer):
            def call(self, inputs):
                return np.random.rand(2)
        """,
    "nested function in traced code": """
        import numpy as np
        import tensorflow as tf

        @tf.function
        def f(x):
            def inner():
                return np.random.rand(2)
            return inner()
        """,
    "lambda in traced code": """
        import numpy as np
        import tensorflow as tf

        @tf.function
        def f(x):
            g = lambda: np.random.rand(2)
            return g()
        """,
    "callee of traced code": """
        import numpy as np
        import tensorflow as tf

        def helper():
            return np.random.rand(2)

        @tf.function
        def f(x):
            return helper()
        """,
}


@pytest.mark.parametrize("source", TRACED_CONTEXTS.values(), ids=TRACED_CONTEXTS.keys())
def test_traced_contexts(source: str) -> None:
    findings = check_source(textwrap.dedent(source), select=SELECT)
    assert len(findings) == 1 and findings[0].fix is not None
    assert "random.uniform([2])" in _fix(source, unsafe=True)


NEGATIVES = {
    "default argument of a traced function (evaluated at def time)": """
        import numpy as np
        import tensorflow as tf

        @tf.function
        def f(x, scale=np.random.rand()):
            return x * scale
        """,
    "decorator argument": """
        import numpy as np
        import tensorflow as tf

        @tf.function(reduce_retracing=bool(np.random.rand() > 2))
        def f(x):
            return x
        """,
    "an attribute named random": """
        import tensorflow as tf

        @tf.function
        def f(self, x):
            return x + self.random.normal(size=3)
        """,
    "a generator passed as a parameter": """
        import numpy as np
        import tensorflow as tf

        rng = np.random.default_rng(0)

        @tf.function
        def f(x, rng):
            return x + rng.normal(size=3)
        """,
    "a local generator shadowing the module's": """
        import numpy as np
        import tensorflow as tf

        rng = np.random.default_rng(0)

        @tf.function
        def f(x):
            rng = make_tensor_rng()
            return x + rng.normal(size=3)
        """,
    "a module-level generator used outside traced code": """
        import numpy as np
        import tensorflow as tf

        rng = np.random.default_rng(0)

        def make(n):
            return rng.normal(size=(n, 3))
        """,
    "Python random is TFR106's": """
        import random
        import tensorflow as tf

        @tf.function
        def f(x):
            return x + random.random()
        """,
    "tf.random already": """
        import numpy as np
        import tensorflow as tf

        @tf.function
        def f(x):
            return x + tf.random.normal(tf.shape(x))
        """,
    "module-level data": """
        import numpy as np
        import tensorflow as tf

        DATA = np.random.normal(size=(10, 3)).astype("float32")

        @tf.function
        def f(x):
            return x + DATA
        """,
}


@pytest.mark.parametrize("source", NEGATIVES.values(), ids=NEGATIVES.keys())
def test_negatives(source: str) -> None:
    assert check_source(textwrap.dedent(source), select=SELECT) == []


REFUSALS = [
    ("np.random.normal(size=shape)", "`size=shape` is not a tuple, an integer or `x.shape`"),
    ("np.random.normal(size=n)", "`size=n` is not a tuple, an integer or `x.shape`"),
    ("np.random.normal(size=(*x.shape, 2))", "starred size element"),
    ("np.random.normal(0, 1, 3, foo=1)", "`foo=` has no `tf.random` counterpart"),
    ("np.random.normal(*args)", "unpacked argument `*args`"),
    ("np.random.normal(**kwargs)", "unpacked argument `**kwargs`"),
    ("np.random.normal(0, 1, 3, 4)", "at most 3 positional arguments"),
    ("np.random.rand(*dims)", "unpacked dimensions `*dims`"),
    ("np.random.binomial(5, 0.5)", "only `n=1`"),
    ("np.random.binomial(n, 0.5, size=3)", "only `n=1`"),
    ("np.random.binomial(1)", "required argument `p` is missing"),
    ("np.random.poisson(3.0)", "`poisson` has no faithful `tf.random` mapping"),
    ("np.random.choice(5, 7, replace=False)", "7 draws without replacement from 5 elements"),
    ("np.random.choice(5, p=[0.5, 0.6, 0.1, 0.1, 0.1])", "do not sum to 1"),
    ("np.random.default_rng(0)", "`default_rng` has no faithful `tf.random` mapping"),
    ("np.random.normal([0.0, 1.0])", "`loc=[0.0, 1.0]` may hold several values"),
    ("np.random.normal(y_pred)", "`loc=y_pred` may hold several values"),
    ("np.random.uniform(np.zeros(3), 1.0)", "`low=np.zeros(3)` may hold several values"),
    ("np.random.binomial(1, [0.1, 0.9])", "`p=[0.1, 0.9]` may hold several values"),
    # a parameter not known to be a scalar may be an array: one draw per element in NumPy
    ("np.random.normal(x, 0.1)", "`loc=x` may hold several values"),
    ("np.random.uniform(0.0, n)", "`high=n` may hold several values"),
    ("np.random.binomial(1, x)", "`p=x` may hold several values"),
    ("np.random.normal(size=3).astype(np.complex64)", "`np.complex64` has no known TensorFlow"),
    ("np.random.normal(size=3).astype(np.float32, copy=False)", "single dtype argument"),
    ("np.random.randint(0, 3, dtype=np.float32)", "not an integer dtype"),
    ("np.random.permutation(n)", "not known to be an integer or a tensor"),
    ("n * np.random.randint(3)", "integer sample meets `n`, whose dtype is not known"),
    ("x + np.random.binomial(1, 0.5, size=3)", "sample meets `x`, whose dtype is not known"),
    # what consumes the sample needs a host value
    ("int(np.random.rand() * 10)", "passed to `int(...)`"),
    ("range(np.random.randint(1, 4))", "passed to `range(...)`"),
    ("np.clip(np.random.normal(size=3), -1, 1)", "passed to `np.clip(...)`"),
    ("np.array([np.random.rand(), 1.0])", "packed into a list given to `np.array(...)`"),
    ("np.random.normal(size=(2, 3)).reshape(-1)", "`.reshape` called or read, NumPy array API"),
    ("np.random.rand(3).tolist()", "`.tolist` called or read, NumPy array API"),
    ("(2 * np.random.rand(3)).sum()", "`.sum` called or read, NumPy array API"),
]


@pytest.mark.parametrize(("expr", "reason"), REFUSALS)
def test_refusals_say_why(expr: str, reason: str) -> None:
    source = TRACED.format(expr=expr)
    findings = check_source(source, select=SELECT)
    assert len(findings) == 1
    finding = findings[0]
    assert finding.fix is None
    assert "runs once, at trace time" in finding.message
    assert "not rewritten: " in finding.message and reason in finding.message
    assert fix_source(source, select=SELECT, unsafe_fixes=True) == source


def test_seed_is_a_finding_without_fix() -> None:
    source = TRACED.format(expr="np.random.seed(42)")
    (finding,) = check_source(source, select=SELECT)
    assert finding.fix is None
    assert "does not seed `tf.random`" in finding.message
    assert "tf.random.set_seed" in finding.message
    assert fix_source(source, select=SELECT) == source


def test_finding_message_and_fix_message() -> None:
    source = TRACED.format(expr="y_pred + np.random.normal(size=3)")
    (finding,) = check_source(source, select=SELECT)
    assert finding.message == (
        "`np.random.normal(...)` in traced code runs once, at trace time: "
        "every call reuses the same sample"
    )
    assert finding.fix is not None and finding.fix.applicability is Applicability.SAFE
    assert finding.fix.message == "Sample with `tf.random.normal` on every call"
    assert (finding.start.line, finding.start.column) == (7, 21)


def test_unsafe_fix_message_says_why() -> None:
    (finding,) = check_source(TRACED.format(expr="np.random.normal(size=3)"), select=SELECT)
    assert finding.fix is not None and finding.fix.applicability is Applicability.UNSAFE
    assert finding.fix.message == (
        "Sample with `tf.random.normal` on every call (unsafe: the sample is returned, with "
        "its dtype, from the traced function, and its dtype there was the host value's own: "
        "`.astype(dtype)` would name it)"
    )


SHUFFLE = """\
import numpy as np
import tensorflow as tf


@tf.function
def f(x):
    idx = np.arange(8)
    np.random.shuffle(idx){rest}
    return tf.gather(x, idx)
"""


def test_shuffle_is_an_unsafe_rebinding() -> None:
    source = SHUFFLE.format(rest="")
    (finding,) = check_source(source, select=SELECT)
    assert finding.fix is not None and finding.fix.applicability is Applicability.UNSAFE
    assert "other references to the array are not shuffled" in finding.fix.message
    assert fix_source(source, select=SELECT) == source  # unsafe: not applied by default
    assert fix_source(source, select=SELECT, unsafe_fixes=True) == source.replace(
        "np.random.shuffle(idx)", "idx = tf.random.shuffle(idx)"
    )


def test_shuffle_keeps_a_following_statement_on_the_line() -> None:
    source = SHUFFLE.format(rest="; n = 8")
    fixed = fix_source(source, select=SELECT, unsafe_fixes=True)
    assert "    idx = tf.random.shuffle(idx); n = 8\n" in fixed


@pytest.mark.parametrize(
    "statement",
    ["np.random.shuffle(x[0])", "y = np.random.shuffle(x)", "np.random.shuffle(self.data)"],
)
def test_shuffle_not_on_a_plain_name_statement_is_refused(statement: str) -> None:
    source = (
        "import numpy as np\nimport tensorflow as tf\n\n\n"
        f"@tf.function\ndef f(x):\n    {statement}\n"
    )
    (finding,) = check_source(source, select=SELECT)
    assert finding.fix is None
    assert "shuffles in place and returns `None`" in finding.message


def test_several_calls_in_one_expression_and_nested() -> None:
    source = TRACED.format(
        expr="np.random.normal(np.random.uniform(), 1.0, size=3) + np.random.rand(3)"
    )
    fixed = fix_source(source, select=SELECT, unsafe_fixes=True)
    assert "np.random" not in fixed
    assert fix_source(fixed, select=SELECT, unsafe_fixes=True) == fixed


def test_formatting_around_the_call_is_kept() -> None:
    source = """
    import numpy as np
    import tensorflow as tf


    @tf.function
    def f(p):
        # jitter the predictions
        noisy = p + np.random.normal(0.0, 0.05, size=p.shape)  # fresh
        return noisy
    """
    assert _fix(source, unsafe=True) == textwrap.dedent(
        """
    import tensorflow as tf


    @tf.function
    def f(p):
        # jitter the predictions
        noisy = p + tf.random.normal(tf.shape(p), mean=0.0, stddev=0.05, dtype=p.dtype)  # fresh
        return noisy
    """
    )


def test_a_call_over_several_lines_keeps_its_layout_and_comments() -> None:
    source = """
    import numpy as np
    import tensorflow as tf


    @tf.function
    def f(y_pred):
        noise = np.random.normal(  # label jitter
            0.0,  # centred
            0.05,
            size=y_pred.shape,
        )
        scale = np.random.uniform(
            # own-line comment
            0.9,
            1.1)
        return y_pred * scale + noise
    """
    assert _fix(source) == textwrap.dedent(
        """
    import tensorflow as tf


    @tf.function
    def f(y_pred):
        noise = tf.random.normal(  # label jitter
            tf.shape(y_pred),
            mean=0.0,  # centred
            stddev=0.05,
            dtype=y_pred.dtype,
        )
        scale = tf.random.uniform(
            # own-line comment
            [],
            minval=0.9,
            maxval=1.1,
            dtype=y_pred.dtype)
        return y_pred * scale + noise
    """
    )


def test_a_call_over_several_lines_without_comments_is_rewritten() -> None:
    source = TRACED.format(expr="np.random.rand(2,\n                          3)")
    fixed = fix_source(source, select=SELECT, unsafe_fixes=True)
    assert fixed == _traced_after("tf.random.uniform([2, 3])")


def test_comments_that_cannot_be_kept_refuse_the_fix() -> None:
    source = TRACED.format(expr="np.random.binomial(\n        1,  # one trial\n        0.5,\n    )")
    (finding,) = check_source(source, select=SELECT)
    assert finding.fix is None
    assert "the call's comments would be lost" in finding.message


@pytest.mark.parametrize(
    "constructor", ["np.random.default_rng(0)", "np.random.RandomState(0)", "default_rng()"]
)
def test_module_level_generator_draws_get_an_unsafe_tf_generator(constructor: str) -> None:
    """A module-level NumPy generator gets a `tf.random.Generator` beside
    it; the draws use it. Unsafe: the stream is TensorFlow's, not NumPy's."""
    source = f"""\
import numpy as np
from numpy.random import default_rng
import tensorflow as tf

rng = {constructor}


@tf.function
def f(x):
    return x + rng.normal(size=3) * rng.uniform()
"""
    findings = check_source(source, select=SELECT)
    assert len(findings) == 2
    assert all(f.fix is not None and f.fix.applicability is Applicability.UNSAFE for f in findings)
    assert "draws from the NumPy generator `rng`" in findings[0].message
    assert fix_source(source, select=SELECT) == source
    fixed = fix_source(source, select=SELECT, unsafe_fixes=True)
    seeded = "(0)" in constructor
    made = "from_seed(0)" if seeded else "from_non_deterministic_state()"
    assert f"tf_rng = tf.random.Generator.{made}" in fixed
    assert "tf_rng.normal(" in fixed and "rng.normal(" not in fixed.replace("tf_rng.", "")


# -- following the sample to its uses -------------------------------------------------

USES = """\
import numpy as np
import tensorflow as tf


@tf.function
def f(x: tf.Tensor, y, n):
{body}
"""


def _without_unused_numpy(source: str) -> str:
    """A fix drops `import numpy as np` when nothing uses NumPy any more."""
    rest = source.replace("import numpy as np\n", "", 1)
    return rest if "np." not in rest else source


def _uses(body: str) -> str:
    return USES.format(body=textwrap.indent(textwrap.dedent(body).strip("\n"), "    "))


# (body, rewritten body, safe)
USE_REWRITES = [
    # a conversion right around the sample is folded into it
    (
        "return tf.constant(np.random.randn(3, 4), dtype=tf.float32)",
        "return tf.random.normal([3, 4], dtype=tf.float32)",
        True,
    ),
    # `tf.constant` of a NumPy float64 array is float64: kept
    (
        "return tf.constant(np.random.randn(3))",
        "return tf.random.normal([3], dtype=tf.float64)",
        True,
    ),
    ("return np.float32(np.random.rand())", "return tf.random.uniform([], dtype=tf.float32)", True),
    (
        "return tf.convert_to_tensor(np.random.randint(0, 3, size=4))",
        "return tf.random.uniform([4], minval=0, maxval=3, dtype=tf.int64)",
        True,
    ),
    # a conversion's name is kept
    (
        'return tf.constant(np.random.randn(3, 1), name="X")',
        'return tf.identity(tf.random.normal([3, 1], dtype=tf.float64), name="X")',
        True,
    ),
    (
        'noise = np.random.randn(3)\nreturn tf.constant(noise, dtype=tf.float32, name="n")',
        'noise = tf.random.normal([3])\nreturn tf.cast(noise, tf.float32, name="n")',
        True,
    ),
    # the conversions of a named sample become `tf.cast` (or go)
    (
        """
        noise = np.random.normal(0.0, 0.1, size=(4,))
        a = tf.constant(noise, dtype=tf.float32)
        b = noise.astype(np.float32)
        return tf.concat([a, b], 0)
        """,
        """
        noise = tf.random.normal([4], mean=0.0, stddev=0.1)
        a = tf.cast(noise, tf.float32)
        b = tf.cast(noise, tf.float32)
        return tf.concat([a, b], 0)
        """,
        False,  # `tf.concat` would have converted a NumPy `b` to the dtype of `a`
    ),
    (
        """
        noise = np.random.normal(size=(4,))
        return x + tf.constant(noise.astype(np.float32))
        """,
        """
        noise = tf.random.normal([4])
        return x + tf.cast(noise, tf.float32)
        """,
        True,
    ),
    # a named sample takes the dtype of the tensor it meets later
    (
        """
        scale = np.random.uniform(0.9, 1.1)
        return x * scale
        """,
        """
        scale = tf.random.uniform([], minval=0.9, maxval=1.1, dtype=x.dtype)
        return x * scale
        """,
        True,
    ),
    (
        """
        tag, noise = "jitter", np.random.normal(size=3)
        return x + noise
        """,
        """
        tag, noise = "jitter", tf.random.normal([3], dtype=x.dtype)
        return x + noise
        """,
        True,
    ),
    # indices of a tensor: either integer dtype works
    (
        "return tf.gather(x, np.random.permutation(4))",
        "return tf.gather(x, tf.random.shuffle(tf.range(4, dtype=tf.int64)))",
        True,
    ),
    ("return tf.zeros([np.random.randint(1, 4), 2])", None, True),
    # a compared sample is a boolean, whatever dtype it is drawn in
    (
        "keep = np.random.rand(4) < 0.8\nreturn tf.where(keep, x, tf.zeros_like(x))",
        "keep = tf.random.uniform([4]) < 0.8\nreturn tf.where(keep, x, tf.zeros_like(x))",
        True,
    ),
    # a boolean mask multiplied with a tensor is cast to its dtype
    (
        "keep = np.random.rand(4) < 0.8\nreturn x * keep / 0.8",
        "keep = tf.cast(tf.random.uniform([4]) < 0.8, x.dtype)\nreturn x * keep / 0.8",
        True,
    ),
    (
        "return x * (np.random.rand(4) < 0.8)",
        "return x * tf.cast(tf.random.uniform([4]) < 0.8, x.dtype)",
        True,
    ),
    # uses that accept a tensor but whose dtype was NumPy's own: unsafe
    ("return np.random.normal(size=3)", "return tf.random.normal([3])", False),
    (
        "return tf.nn.relu(np.random.normal(size=3))",
        "return tf.nn.relu(tf.random.normal([3]))",
        False,
    ),
    # a converted sample passed to an op next to another tensor: NumPy's array adapted
    (
        "m = np.random.rand(4).astype(np.float32)\nreturn tf.concat([x, m], 0)",
        "m = tf.random.uniform([4], dtype=tf.float32)\nreturn tf.concat([x, m], 0)",
        False,
    ),
    # meets the result of an op that keeps its argument's dtype
    (
        "s = np.random.uniform(0.5, 1.5)\nreturn tf.reduce_sum(x) * s",
        "s = tf.random.uniform([], minval=0.5, maxval=1.5, dtype=x.dtype)\n"
        "return tf.reduce_sum(x) * s",
        True,
    ),
    # the value's own name updated in place
    (
        "z = np.random.normal()\nz += 1.0\nreturn x * z",
        "z = tf.random.normal([], dtype=x.dtype)\nz += 1.0\nreturn x * z",
        True,
    ),
    # meets `y`, not known to be a tensor
    ("return y + np.random.normal(size=3)", "return y + tf.random.normal([3])", False),
    # leaves the function
    ("self_noise = np.random.rand(3)\nreturn helper(self_noise)", None, False),
    # a Python `if` on the sample needs AutoGraph (or TFR101)
    (
        """
        if np.random.rand() < 0.5:
            x = x * 2.0
        return x
        """,
        """
        if tf.random.uniform([]) < 0.5:
            x = x * 2.0
        return x
        """,
        False,
    ),
]


@pytest.mark.parametrize(("body", "after", "safe"), USE_REWRITES)
def test_fix_is_safe_only_when_every_use_is(body: str, after: str | None, safe: bool) -> None:
    source = _uses(body)
    (finding,) = check_source(source, select=SELECT)
    assert finding.fix is not None
    expected = Applicability.SAFE if safe else Applicability.UNSAFE
    assert finding.fix.applicability is expected, finding.fix.message
    fixed = fix_source(source, select=SELECT, unsafe_fixes=True)
    assert "np.random" not in fixed.split("def f", 1)[1]
    if after is not None:
        assert fixed == _without_unused_numpy(_uses(after))
    assert fix_source(fixed, select=SELECT, unsafe_fixes=True) == fixed
    if not safe:
        assert fix_source(source, select=SELECT) == source
        assert "(unsafe: the sample" in finding.fix.message


USE_REFUSALS = [
    # uses that need a Python or NumPy value
    ("k = np.random.randint(1, 4)\nreturn [1, 2, 3][k]", "held in `k`, indexes `[1, 2, 3]`"),
    (
        "k = np.random.randint(3)\nsizes = [8, 16, 32]\nreturn sizes[k]",
        "indexes `sizes`, a Python sequence",
    ),
    (
        "return tf.image.random_contrast(x, np.random.uniform(0.1, 0.3), 1.5)",
        "passed to `tf.image.random_contrast(...)` as `lower`, which it compares in Python",
    ),
    (
        "return tf.image.random_brightness(x, max_delta=np.random.rand())",
        "as `max_delta`, which it compares in Python",
    ),
    (
        "n_steps = np.random.randint(1, 4)\nfor _ in range(n_steps):\n    x = x * 2\nreturn x",
        "`range(...)`",
    ),
    (
        "while np.random.uniform() > 0.5:\n    x = x * 2\nreturn x",
        "decides a Python `while` loop",
    ),
    ("for v in np.random.rand(3):\n    x = x + v\nreturn x", "iterated by a Python `for` loop"),
    ("p = np.random.rand()\nreturn x if 0.1 < p < 0.9 else -x", "chained comparison"),
    ("return np.random.rand(3).item()", "`.item` called or read"),
    ("noise = np.random.rand(3)\nreturn x + noise.T", "held in `noise`, has `.T` called or read"),
    (
        "keep = np.random.rand(4) < 0.8\nreturn x * keep + tf.cast(keep, tf.int32)",
        "the comparison of the sample, held in `keep`, meets the tensor `x`: in arithmetic a "
        "NumPy boolean array converts to the other operand's dtype, a boolean tensor does not",
    ),
    ("return y * (np.random.rand(4) < 0.8)", "the comparison of the sample meets `y`, whose"),
    (
        "return tf.constant([np.random.rand(), 1.0])",
        "packed into a list given to `tf.constant(...)`",
    ),
    ("return int(np.random.rand() * 10)", "`int(...)`, which needs a Python value"),
    (
        "return np.clip(np.random.normal(size=3), -1, 1)",
        "`np.clip(...)`, which needs a Python or NumPy",
    ),
]


@pytest.mark.parametrize(("body", "reason"), USE_REFUSALS)
def test_uses_that_need_a_host_value_refuse_the_fix(body: str, reason: str) -> None:
    source = _uses(body)
    findings = check_source(source, select=SELECT)
    assert findings and all(f.fix is None for f in findings)
    assert any(reason in f.message for f in findings), [f.message for f in findings]
    assert "not rewritten: the " in findings[0].message
    assert fix_source(source, select=SELECT, unsafe_fixes=True) == source


def test_a_compiled_loss_if_on_a_sample_is_refused() -> None:
    """Keras 3 traces compiled losses without AutoGraph: a tensor `if` there fails."""
    source = textwrap.dedent(
        """
        import numpy as np
        import keras


        def loss(y_true, y_pred):
            if np.random.rand() < 0.1:
                return keras.ops.mean(y_pred)
            return keras.ops.mean(y_true - y_pred)


        keras.Sequential().compile(loss=loss)
        """
    )
    (finding,) = check_source(source, select=SELECT)
    assert finding.fix is None
    assert "decides a Python `if`: a tensor there needs AutoGraph, and Keras traces `loss`" in (
        finding.message
    )


def test_autograph_false_if_on_a_sample_is_refused() -> None:
    source = _uses("if np.random.rand() < 0.5:\n    x = -x\nreturn x").replace(
        "@tf.function", "@tf.function(autograph=False)"
    )
    (finding,) = check_source(source, select=SELECT)
    assert finding.fix is None and "traced with `autograph=False`" in finding.message


# -- seeded draws -----------------------------------------------------------------------


def test_draws_seeded_in_the_function_become_stateless() -> None:
    source = _uses(
        """
        np.random.seed(7)
        a = x + np.random.normal(size=x.shape)
        b = np.random.uniform(0.5, 1.0)
        return a * b
        """
    )
    findings = check_source(source, select=SELECT)
    seed, first, second = findings
    assert seed.fix is None and "does not seed `tf.random`" in seed.message
    for finding in (first, second):
        assert "`np.random.seed(7)` reseeds it on every call" in finding.message
        assert finding.fix is not None and finding.fix.applicability is Applicability.UNSAFE
        assert "the same values on every call, though not NumPy's" in finding.fix.message
    assert fix_source(source, select=SELECT) == source
    fixed = fix_source(source, select=SELECT, unsafe_fixes=True)
    assert fixed == _uses(
        """
        np.random.seed(7)
        a = x + tf.random.stateless_normal(tf.shape(x), seed=[7, 0], dtype=x.dtype)
        b = tf.random.stateless_uniform([], seed=[7, 1], minval=0.5, maxval=1.0)
        return a * b
        """
    )
    assert fix_source(fixed, select=SELECT, unsafe_fixes=True) == fixed


def test_seed_indices_continue_after_an_earlier_round() -> None:
    """A draw left for a later fix round gets an index no rewritten draw uses."""
    source = _uses(
        """
        np.random.seed(7)
        a = tf.random.stateless_normal([3], seed=[7, 0])
        return a + np.random.normal(size=3)
        """
    )
    fixed = fix_source(source, select=SELECT, unsafe_fixes=True)
    assert "tf.random.stateless_normal([3], seed=[7, 1], dtype=a.dtype)" in fixed


def test_seeded_permutation_and_shuffle_are_stateless() -> None:
    source = _uses(
        """
        np.random.seed(n)
        idx = np.arange(4)
        np.random.shuffle(idx)
        return tf.gather(x, np.random.permutation(4)), idx
        """
    )
    fixed = fix_source(source, select=SELECT, unsafe_fixes=True)
    assert "idx = tf.random.experimental.stateless_shuffle(idx, seed=[n, 0])" in fixed
    assert (
        "tf.random.experimental.stateless_shuffle(tf.range(4, dtype=tf.int64), seed=[n, 1])"
        in fixed
    )


SEED_REFUSALS = [
    (
        "import numpy as np\nimport tensorflow as tf\n\nnp.random.seed(42)\n\n\n"
        "@tf.function\ndef f(x: tf.Tensor):\n    return x + np.random.normal(size=3)\n",
        "the draws are seeded by `np.random.seed(42)`, which makes them a sequence "
        "reproducible from run to run, and unseeded `tf.random` ops would not be: call "
        "`tf.random.set_seed(...)` before the function is traced",
    ),
    (
        "import numpy as np\nimport tensorflow as tf\n\n\n@tf.function\n"
        "def f(x: tf.Tensor):\n    if x.shape[0] > 2:\n        np.random.seed(1)\n"
        "    return x + np.random.normal(size=3)\n",
        "`np.random.seed(1)` seeds the draws only on some paths through `f`",
    ),
    (
        "import numpy as np\nimport tensorflow as tf\n\n\n@tf.function\n"
        "def f(x: tf.Tensor):\n    y = x + np.random.normal(size=3)\n    np.random.seed(1)\n"
        "    return y\n",
        "`np.random.seed(1)` seeds the draws only on some paths through `f`",
    ),
    (
        "import numpy as np\nimport tensorflow as tf\n\n\n@tf.function\n"
        "def f(x: tf.Tensor):\n    np.random.seed(hash(x.name))\n"
        "    return x + np.random.normal(size=3)\n",
        "the seed `hash(x.name)` of `np.random.seed(hash(x.name))` is not a literal or a parameter",
    ),
]


@pytest.mark.parametrize(("source", "reason"), SEED_REFUSALS)
def test_seeded_draws_that_cannot_keep_their_meaning_are_refused(source: str, reason: str) -> None:
    findings = check_source(source, select=SELECT)
    draws = [f for f in findings if "normal" in f.message]
    assert len(draws) == 1 and draws[0].fix is None
    assert reason in draws[0].message
    assert fix_source(source, select=SELECT, unsafe_fixes=True) == source


def test_module_seed_with_a_tensorflow_seed_keeps_the_plain_rewrite() -> None:
    source = (
        "import numpy as np\nimport tensorflow as tf\n\n\ndef set_seeds(s):\n"
        "    np.random.seed(s)\n    tf.random.set_seed(s)\n\n\n"
        "@tf.function\ndef f(x: tf.Tensor):\n    return x + np.random.normal(size=3)\n"
    )
    (finding,) = check_source(source, select=SELECT)
    assert finding.fix is not None and finding.fix.applicability is Applicability.SAFE
    assert "x + tf.random.normal([3], dtype=x.dtype)" in fix_source(source, select=SELECT)


def test_unseeded_reseeding_is_not_a_seed() -> None:
    source = _uses("np.random.seed()\nreturn x + np.random.normal(size=3)")
    fixed = fix_source(source, select=SELECT)
    assert "x + tf.random.normal([3], dtype=x.dtype)" in fixed


ATTRIBUTE_GENERATOR = """
    import numpy as np
    import keras
    import tensorflow as tf


    class Noise(keras.layers.Layer):
        def __init__(self, seed=0):
            super().__init__()
            self.rng = np.random.RandomState(seed)

        def call(self, inputs):
            return inputs + self.rng.normal(0.0, 0.1, size=(3,))
"""

GENERATOR_DRAWS = {
    "a local generator": (
        """
        import numpy as np
        import tensorflow as tf


        @tf.function
        def f(x):
            rng = np.random.default_rng()
            return x + rng.normal(size=3)
        """,
        "`rng.normal(...)` draws from the NumPy generator `rng`",
    ),
    "a chained generator": (
        """
        import numpy as np
        import tensorflow as tf


        @tf.function
        def f(x):
            return x + np.random.default_rng(0).uniform(size=3)
        """,
        "draws from the NumPy generator `np.random.default_rng(0)`",
    ),
}


@pytest.mark.parametrize(
    ("source", "message"), GENERATOR_DRAWS.values(), ids=GENERATOR_DRAWS.keys()
)
def test_generator_object_draws_made_in_traced_code_are_findings_without_fix(
    source: str, message: str
) -> None:
    source = textwrap.dedent(source)
    findings = check_source(source, select=SELECT)
    draws = [f for f in findings if "draws from the NumPy generator" in f.message]
    assert len(draws) == 1 and draws[0].fix is None
    assert message in draws[0].message
    assert "created once, outside the traced code" in draws[0].message
    assert fix_source(source, select=SELECT, unsafe_fixes=True) == source


def test_a_generator_attribute_set_in_init_gets_a_tf_generator_beside_it() -> None:
    source = textwrap.dedent(ATTRIBUTE_GENERATOR)
    [draw] = [f for f in check_source(source, select=SELECT) if "NumPy generator" in f.message]
    assert draw.fix is not None and draw.fix.applicability is Applicability.UNSAFE
    fixed = fix_source(source, select=SELECT, unsafe_fixes=True)
    assert "self.tf_rng = tf.random.Generator.from_seed(seed)" in fixed
    assert "self.tf_rng.normal(" in fixed


def test_an_attribute_generator_drawn_outside_traced_code_is_not_reported() -> None:
    source = textwrap.dedent(
        """
        import numpy as np
        import tensorflow as tf


        class Agent:
            def __init__(self):
                self.rng = np.random.RandomState(0)

            def act(self, q):
                if self.rng.rand() < 0.1:
                    return self.rng.randint(4)
                return int(np.argmax(q))

            @tf.function
            def train(self, x):
                return x * 2.0
        """
    )
    assert check_source(source, select=SELECT) == []


def test_keras_set_random_seed_seeds_tensorflow_too() -> None:
    source = (
        "import numpy as np\nimport keras\nimport tensorflow as tf\n\n"
        "np.random.seed(1)\nkeras.utils.set_random_seed(1)\n\n\n"
        "@tf.function\ndef f(x: tf.Tensor):\n    return x + np.random.normal(size=3)\n"
    )
    (finding,) = check_source(source, select=SELECT)
    assert finding.fix is not None and finding.fix.applicability is Applicability.SAFE
