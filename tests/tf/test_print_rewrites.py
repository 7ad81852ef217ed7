"""TFR103 under TensorFlow: a traced `print` prints once, at trace time, and
shows `Tensor(...)`; its `tf.print` rewrite prints on every call, with the
values the original printed when run eagerly.

Output is captured at the file-descriptor level (`tf.print` writes through
the C++ runtime, not `sys.stdout`). Values are compared, not formatting: the
eager original shows `tf.Tensor(0.25, shape=(), dtype=float32)` where
`tf.print` shows `0.25`.
"""

from __future__ import annotations

import re
import sys
import textwrap

import numpy as np
import pytest
import tensorflow as tf

from tfrewrite.api import check_source, fix_source

from .equivalence import load_module, python_function, run_eagerly
from .fdcapture import capture_fds

NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:nan|inf)")
# How an eager tensor shows in `print` (str) and in `repr` / f"{x=}".
EAGER_STR = re.compile(r"tf\.Tensor\((.*?), shape=\([^)]*\), dtype=\w+\)", re.S)
EAGER_REPR = re.compile(r"<tf\.Tensor: shape=\([^)]*\), dtype=\w+, numpy=(.*?)>", re.S)
NUMPY_ARRAY = re.compile(r"array\((.*?)(?:, dtype=\w+)?\)", re.S)
NUMPY_SCALAR = re.compile(r"np\.\w+\((.*?)\)")


def shown(line: str) -> tuple[str, list[float]]:
    """(the text with every number replaced by `#`, the numbers), after
    removing the decoration eager tensors print with."""
    line = EAGER_REPR.sub(r"\1", line)
    line = NUMPY_ARRAY.sub(r"\1", line)
    line = NUMPY_SCALAR.sub(r"\1", line)
    line = EAGER_STR.sub(r"\1", line)
    values = [float(v) for v in NUMBER.findall(line)]
    template = NUMBER.sub("#", line)
    template = re.sub(r"\s+", " ", template.replace(",", " ")).strip()
    template = re.sub(r"\[ ", "[", re.sub(r" \]", "]", template))  # NumPy pads inside brackets
    return template, values


def assert_same_printed(expected: list[str], actual: list[str]) -> None:
    """Line by line: the same text around the numbers, the same numbers (as float32)."""
    assert len(actual) == len(expected), (expected, actual)
    for want, got in zip(expected, actual, strict=True):
        want_template, want_values = shown(want)
        got_template, got_values = shown(got)
        assert got_template == want_template, (want, got)
        np.testing.assert_allclose(
            np.float32(got_values),
            np.float32(want_values),
            rtol=1e-6,
            err_msg=f"{want!r} vs {got!r}",
        )


def rewrite(source: str, unsafe: bool = False) -> str:
    """TFR103's rewrite (with TFR105's of host reads in `tf.print`)."""
    source = textwrap.dedent(source)
    fixed = fix_source(source, select=["TFR103", "TFR105"], unsafe_fixes=unsafe)
    assert fixed != source, "TFR103 did not rewrite the example"
    assert check_source(fixed, select=["TFR103", "TFR105"]) == []
    return fixed


def printed(fn, calls, stream: str = "stdout") -> list[str]:
    """The lines `fn` prints on `stream` over the calls (each a tuple of arguments)."""
    with capture_fds() as out:
        for args in calls:
            fn(*args)
    lines = out.stdout_lines() if stream == "stdout" else out.stderr_lines()
    return [line for line in lines if line.strip()]


def eager_lines(original, calls, stream: str = "stdout") -> list[str]:
    return printed(lambda *a: run_eagerly(original, *a), calls, stream)


CALLS = [
    (tf.constant([1.0, 2.0, 3.0]), tf.constant([1.5, 2.0, 2.0])),
    (tf.constant([0.0, 0.0, 0.0]), tf.constant([0.1, -0.2, 0.3])),
    (tf.constant([4.0, -1.0, 2.5]), tf.constant([3.0, 1.0, 2.0])),
]

DECORATED_LOSS = """\
import tensorflow as tf

@tf.function
def loss_fn(y_true, y_pred):
    loss = tf.reduce_mean(tf.square(y_true - y_pred))
    print("loss:", loss)
    return loss
"""


def test_decorated_loss_prints_once_per_call_with_values() -> None:
    original = load_module(DECORATED_LOSS).loss_fn
    rewritten_source = rewrite(DECORATED_LOSS)
    assert 'tf.print("loss:", loss, output_stream=sys.stdout)' in rewritten_source
    rewritten = load_module(rewritten_source).loss_fn

    traced_original = printed(original, CALLS)
    assert len(traced_original) == 1, traced_original  # at trace time only
    assert "Tensor(" in traced_original[0]

    traced_rewrite = printed(rewritten, CALLS)
    assert len(traced_rewrite) == len(CALLS)  # once per call
    assert "Tensor(" not in "".join(traced_rewrite)
    assert_same_printed(eager_lines(original, CALLS), traced_rewrite)


def test_decorated_loss_rewrite_needs_no_autograph() -> None:
    original = load_module(DECORATED_LOSS).loss_fn
    rewritten = load_module(rewrite(DECORATED_LOSS)).loss_fn
    no_autograph = tf.function(python_function(rewritten), autograph=False)
    lines = printed(no_autograph, CALLS)
    assert_same_printed(eager_lines(original, CALLS), lines)
    # The return value is untouched by the rewrite.
    for args in CALLS:
        np.testing.assert_allclose(no_autograph(*args), run_eagerly(original, *args), rtol=1e-6)


COMPILED_LOSS = """\
import tensorflow as tf

def mse(y_true, y_pred):
    loss = tf.reduce_mean(tf.square(y_true - y_pred))
    print(f"batch loss={loss}")
    return loss

def build(jit_compile=False, run_eagerly=False):
    tf.keras.utils.set_random_seed(0)
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss=mse, jit_compile=jit_compile, run_eagerly=run_eagerly)
    return model
"""


def test_compiled_loss_wrapped_in_tf_function() -> None:
    """What `compile` does with a loss: it runs inside a `tf.function`."""
    source = textwrap.dedent(COMPILED_LOSS)
    assert fix_source(source, select=["TFR103"]) == source, "Keras context: the fix is unsafe"
    rewritten_source = rewrite(source, unsafe=True)
    assert 'tf.print("batch loss=", loss, sep="", output_stream=sys.stdout)' in rewritten_source
    original = load_module(source).mse
    rewritten = load_module(rewritten_source).mse

    traced_original = printed(tf.function(original), CALLS)
    assert len(traced_original) == 1 and "Tensor(" in traced_original[0]
    expected = eager_lines(original, CALLS)
    assert_same_printed(expected, printed(tf.function(rewritten), CALLS))
    assert_same_printed(expected, printed(tf.function(rewritten, autograph=False), CALLS))


def test_compiled_loss_in_fit_prints_every_step() -> None:
    """`model.fit` without XLA: one line per training step, with the losses
    the original prints when the model runs eagerly."""
    source = textwrap.dedent(COMPILED_LOSS)
    original = load_module(source)
    rewritten = load_module(rewrite(source, unsafe=True))
    rng = np.random.default_rng(0)
    x = rng.normal(size=(12, 3)).astype("float32")
    y = rng.normal(size=(12, 1)).astype("float32")

    def fit(module, run_eagerly):
        model = module.build(run_eagerly=run_eagerly)
        return printed(
            lambda: model.fit(x, y, batch_size=4, epochs=1, verbose=0, shuffle=False), [()]
        )

    traced_original = fit(original, run_eagerly=False)
    assert len(traced_original) <= 2 and all("Tensor(" in line for line in traced_original)
    expected = fit(original, run_eagerly=True)
    assert len(expected) == 3  # one per batch
    assert_same_printed(expected, fit(rewritten, run_eagerly=False))


def test_xla_caveat_tf_print_has_no_xla_kernel() -> None:
    """Why the fix is unsafe where Keras may compile with XLA: `tf.print`
    fails under `jit_compile=True`, while the original `print` (trace time
    only) does not."""
    source = textwrap.dedent(COMPILED_LOSS)
    original = load_module(source).mse
    rewritten = load_module(rewrite(source, unsafe=True)).mse
    args = CALLS[0]
    with capture_fds():
        tf.function(original, jit_compile=True)(*args)
        with pytest.raises(
            (tf.errors.InvalidArgumentError, tf.errors.UnimplementedError)
        ) as raised:
            tf.function(rewritten, jit_compile=True)(*args)
    assert "StringFormat" in str(raised.value) or "PrintV2" in str(raised.value)


FORMATTED = """\
import sys
import tensorflow as tf

@tf.function
def step(y_true, y_pred, epoch):
    loss = tf.reduce_mean(tf.square(y_true - y_pred))
    print(f"epoch {epoch}: loss={loss:.4f} sci={loss:.2e} raw={loss}")
    peak = tf.reduce_max(y_pred)
    print("pred", y_pred, "max %.3f" % peak, sep=" | ", end=" <\\n", file=sys.stderr)
    print("{0} / {1}".format(loss, epoch), f"{loss=}", flush=True)
    return loss
"""


def test_formatted_prints_read_the_same() -> None:
    source = textwrap.dedent(FORMATTED)
    rewritten_source = rewrite(source, unsafe=True)
    original = load_module(source).step
    rewritten = load_module(rewritten_source).step
    calls = [(*args, 3) for args in CALLS]

    eager_out = eager_lines(original, calls)
    eager_err = [line for line in eager_lines(original, calls, "stderr") if line.startswith("pred")]
    with capture_fds() as out:
        for args in calls:
            rewritten(*args)
    traced_out = [line for line in out.stdout_lines() if line.strip()]
    traced_err = [line for line in out.stderr_lines() if line.startswith("pred")]

    assert len(traced_out) == 2 * len(calls) and len(traced_err) == len(calls)
    assert_same_printed(eager_out, traced_out)
    assert_same_printed(eager_err, traced_err)
    # Format specs are honoured digit for digit: the f-string line is identical
    # up to the unformatted tensor at its end.
    for want, got in zip(eager_out[::2], traced_out[::2], strict=True):
        assert want.split(" raw=")[0] == got.split(" raw=")[0]
    assert all(line.endswith(" <") for line in traced_err)
    # stdout stays stdout: nothing of the first and third prints leaked to stderr.
    assert not any("epoch" in line for line in out.stderr_lines())


def test_rewritten_print_on_stderr_leaves_stdout_empty() -> None:
    source = textwrap.dedent(
        """\
        import sys
        import tensorflow as tf

        @tf.function
        def f(x):
            print("sum", tf.reduce_sum(x), file=sys.stderr)
            return x
        """
    )
    rewritten = load_module(rewrite(source)).f
    with capture_fds() as out:
        rewritten(tf.constant([1.0, 2.0]))
        rewritten(tf.constant([3.0, 4.0]))
    assert [line for line in out.stdout_lines() if line.strip()] == []
    assert [line for line in out.stderr_lines() if line.startswith("sum")] == ["sum 3", "sum 7"]


def test_fd_capture_sees_python_and_runtime_output() -> None:
    with capture_fds() as out:
        print("python out")
        print("python err", file=sys.stderr)
        tf.print("runtime out", tf.constant(1), output_stream=sys.stdout)
        tf.print("runtime err", tf.constant(2))
    assert out.stdout_lines() == ["python out", "runtime out 1"]
    assert [line for line in out.stderr_lines() if line.startswith(("python", "runtime"))] == [
        "python err",
        "runtime err 2",
    ]


def test_precision_format_fails_loudly_on_integer_tensors() -> None:
    """Why a format-spec rewrite is unsafe: `{n:.2f}` formats an integer
    tensor in Python, but `tf.strings.as_string` refuses a precision for it
    (at trace time, with an error, never a wrong number)."""
    source = textwrap.dedent(
        """\
        import tensorflow as tf

        @tf.function
        def count(x):
            n = tf.reduce_sum(x)
            print(f"n={n:.2f}")
            return n
        """
    )
    original = load_module(source).count
    rewritten = load_module(rewrite(source, unsafe=True)).count
    floats = tf.constant([1.5, 2.25])
    assert_same_printed(eager_lines(original, [(floats,)]), printed(rewritten, [(floats,)]))
    assert printed(rewritten, [(floats,)]) == ["n=3.75"]
    assert eager_lines(original, [(tf.constant([1, 2]),)]) == ["n=3.00"]
    with capture_fds(), pytest.raises(tf.errors.InvalidArgumentError, match="precision"):
        rewritten(tf.constant([1, 2]))


@pytest.mark.parametrize(
    "statement", ['print(f"{total}" + " done")', 'print("total: " + "%s" % total)']
)
def test_string_formatting_inside_an_expression_is_not_rewritten(statement: str) -> None:
    """The string is built from the symbolic tensor at trace time: passed to
    `tf.print`, it would print `Tensor("Sum:0", ...)` on every call instead of
    the value the eager original prints. So the call is reported, not fixed."""
    source = textwrap.dedent(
        f"""\
        import tensorflow as tf

        @tf.function
        def f(x):
            total = tf.reduce_sum(x)
            {statement}
            return total
        """
    )
    assert fix_source(source, select=["TFR103"], unsafe_fixes=True) == source
    [finding] = check_source(source, select=["TFR103"])
    assert finding.fix is None and "formats a tensor into a Python string" in finding.message
    original = load_module(source).f
    calls = [(tf.constant([1.0, 2.0]),), (tf.constant([3.0, 4.0]),)]
    assert [shown(line)[1][-1] for line in eager_lines(original, calls)] == [3.0, 7.0]

    # What `tf.print` of that expression would show, on every call:
    @tf.function
    def frozen(x):
        tf.print(f"{tf.reduce_sum(x)}" + " done", output_stream=sys.stdout)

    with capture_fds() as out:
        frozen(*calls[0])
        frozen(*calls[1])
    lines = [line for line in out.stdout_lines() if line.strip()]
    assert len(lines) == 2 and all('Tensor("Sum' in line for line in lines)


# -- what a traced print must show instead: host reads, abbreviation, dimensions ------------
HOST_READS = """\
import tensorflow as tf

@tf.function
def step(x):
    loss = tf.reduce_mean(x)
    y = tf.abs(x)
    print("loss", float(loss), "n", int(tf.size(x)), "t", int(loss * 10.0))
    print(f"scaled {(y * 2.0).numpy()} mean {loss.numpy():.3f}")
    return loss
"""

VARIED_CALLS = [
    (tf.constant([0.1, 0.2, 0.3]),),
    (tf.constant([-0.27, -0.5, 0.1, 0.2]),),
    (tf.constant([2.5, 1.25]),),
]


def _same_per_call(
    source: str, calls, stream: str = "stdout", unsafe: bool = False, joined: bool = False
) -> str:
    """The rewrite prints, on every call, traced and traced without AutoGraph,
    what the original printed eagerly (`joined`: compared as one text, where
    NumPy and `tf.print` break the rows of a matrix differently)."""
    rewritten_source = rewrite(source, unsafe=unsafe)
    original = python_function(load_module(textwrap.dedent(source)).step)
    rewritten = python_function(load_module(rewritten_source).step)
    expected = eager_lines(original, calls, stream)
    assert expected and not any('Tensor("' in line for line in expected)
    for traced in (tf.function(rewritten), tf.function(rewritten, autograph=False)):
        lines = printed(traced, calls, stream)
        if stream == "stderr":
            lines = [line for line in lines if not line.startswith(("WARNING", "I0000", "W0000"))]
        if joined:
            assert_same_printed([" ".join(expected)], [" ".join(lines)])
        else:
            assert_same_printed(expected, lines)
    return rewritten_source


def test_host_reads_print_the_tensor_on_every_call() -> None:
    rewritten = _same_per_call(HOST_READS, VARIED_CALLS, unsafe=True)
    assert "tf.cast(loss * 10.0, tf.int64)" in rewritten  # int() truncates toward zero
    traced_original = tf.function(python_function(load_module(HOST_READS).step))
    with capture_fds(), pytest.raises((TypeError, AttributeError)):
        traced_original(*VARIED_CALLS[0])  # AutoGraph casts `float(...)`; `.numpy()` fails


SUMMARIZED = """\
import tensorflow as tf

@tf.function
def step(x):
    loss = tf.reduce_mean(x)
    print("x", tf.abs(x), "loss", loss)
    return loss
"""


def test_every_element_is_printed_as_print_showed() -> None:
    calls = [(tf.range(10, dtype=tf.float32),), (tf.reshape(tf.range(12.0), [3, 4]) - 5.0,)]
    rewritten = _same_per_call(SUMMARIZED, calls, joined=True)
    assert "summarize=-1" in rewritten
    # Without it, `tf.print` abbreviates past three elements per dimension.
    with capture_fds() as out:
        tf.print(tf.range(10), output_stream=sys.stdout)
    assert out.stdout_lines() == ["[0 1 2 ... 7 8 9]"]


SIGNATURE = """\
import tensorflow as tf

@tf.function(input_signature=[tf.TensorSpec([None, 3])])
def step(x):
    loss = tf.reduce_mean(x)
    print("batch", x.shape[0], "loss", loss)
    return loss
"""


def test_unknown_dimensions_print_their_run_time_value() -> None:
    calls = [(tf.ones([4, 3]),), (tf.zeros([2, 3]),), (tf.ones([1, 3]) * 3.0,)]
    rewritten = _same_per_call(SIGNATURE, calls)
    assert "tf.shape(x)[0]" in rewritten
    traced_original = printed(load_module(SIGNATURE).step, calls)
    assert traced_original == ['batch None loss Tensor("Mean:0", shape=(), dtype=float32)']


TF_PRINT_FORMATTED = """\
import tensorflow as tf

@tf.function(reduce_retracing=True)
def step(x):
    loss = tf.reduce_mean(x)
    tf.print("batch %d loss %.3f" % (x.shape[0], loss))
    tf.print(f"peak {tf.reduce_max(x)} of {x.shape[0]}", "mean: {}".format(loss))
    tf.print("loss", loss.numpy())
    return loss
"""


def test_python_formatting_inside_tf_print_becomes_arguments() -> None:
    calls = [(tf.constant([0.5, 1.5]),), (tf.constant([2.0, 4.0, 6.0]),), (tf.constant([1.0]),)]
    traced_original = tf.function(python_function(load_module(TF_PRINT_FORMATTED).step))
    with capture_fds(), pytest.raises((TypeError, AttributeError)):
        traced_original(*calls[0])  # `%.3f` and `.numpy()` of a symbolic tensor
    rewritten = _same_per_call(TF_PRINT_FORMATTED, calls, stream="stderr", unsafe=True)
    assert '"%' not in rewritten and "Tensor(" not in rewritten


def test_python_formatting_inside_tf_print_is_frozen_at_trace_time() -> None:
    """The hazard itself: traced, the formatted text holds `Tensor(...)`."""

    @tf.function
    def frozen(x):
        tf.print("loss %s" % tf.reduce_mean(x), output_stream=sys.stdout)  # noqa: UP031

    with capture_fds() as out:
        frozen(tf.constant([1.0]))
        frozen(tf.constant([3.0]))
    assert out.stdout_lines() == ['loss Tensor("Mean:0", shape=(), dtype=float32)'] * 2


YOLO_STEP = """\
import tensorflow as tf

optimizer = tf.keras.optimizers.SGD(learning_rate=0.125)
global_steps = tf.Variable(1, trainable=False, dtype=tf.int64)

@tf.function
def step(x):
    total_loss = tf.reduce_sum(x, axis=0)
    giou_loss = tf.reduce_mean(x)
    tf.print("=> STEP %4d   lr: %.6f   giou_loss: %4.2f   total_loss: %4.2f"
             % (global_steps, optimizer.learning_rate.numpy(), giou_loss, total_loss))
    global_steps.assign_add(7)
    return giou_loss
"""


def test_a_training_log_line_prints_its_values_on_every_call() -> None:
    """The log line of a real YOLO train step: a variable with `%4d`, a
    learning rate read with `.numpy()`, a loss not known to be a scalar with `%4.2f`.
    Traced, Python formatting raises; the rewrite prints what the eager
    original printed, digit for digit."""
    calls = [(tf.constant([0.5, 1.25]),), (tf.constant([-2.0, 4.0, 6.0]),), (tf.constant([9.0]),)]
    rewritten_source = rewrite(YOLO_STEP, unsafe=True)
    assert "tf.strings.as_string(global_steps, width=4)" in rewritten_source
    original = load_module(YOLO_STEP)
    with capture_fds(), pytest.raises((TypeError, AttributeError, NotImplementedError)):
        original.step(*calls[0])
    expected = printed(lambda *a: run_eagerly(original.step, *a), calls, "stderr")
    for autograph in (True, False):
        module = load_module(rewritten_source)
        traced = tf.function(python_function(module.step), autograph=autograph)
        lines = [line for line in printed(traced, calls, "stderr") if line.startswith("=>")]
        assert lines == [line for line in expected if line.startswith("=>")]


LIKELY = """\
import tensorflow as tf

@tf.function
def step(x):
    print("x", x)
    return x
"""


def test_a_likely_tensor_parameter_prints_its_values_on_every_call() -> None:
    """A parameter with no evidence either way, called with tensors: the
    (unsafe) rewrite prints every call what the eager original printed."""
    assert fix_source(LIKELY, select=["TFR103"]) == LIKELY, "the fix is unsafe"
    calls = [(tf.constant([1.0, 2.0, 3.0, 4.0, 5.0]),), (tf.constant([[1, 2], [3, 4]]),)]
    rewritten = _same_per_call(LIKELY, calls, unsafe=True, joined=True)
    assert 'tf.print("x", x, summarize=-1, output_stream=sys.stdout)' in rewritten


HOST_VALUE_PRINTED = """\
import tensorflow as tf

@tf.function
def step(y_true, y_pred):
    loss = tf.reduce_mean(tf.square(y_true - y_pred))
    loss_value = loss.numpy()
    print("loss", loss_value)
    worst = float(tf.reduce_max(y_pred))
    print("worst %.3f" % worst)
    return loss
"""


def test_a_host_value_held_in_a_name_and_printed_becomes_the_tensor() -> None:
    """`loss_value = loss.numpy(); print("loss", loss_value)`: TFR105 keeps
    the tensor and TFR103 prints it, in one run; traced, every call prints
    the values an eager run prints."""
    source = textwrap.dedent(HOST_VALUE_PRINTED)
    safe_only = fix_source(source, select=["TFR103", "TFR105"])
    # Safe fixes: the plain print becomes `tf.print`, then the host read it
    # shows can be the tensor; the formatted one is rewritten only with
    # `--unsafe-fixes`, so its host read stays.
    assert "loss.numpy()" not in safe_only and "float(tf.reduce_max(y_pred))" in safe_only
    rewritten_source = rewrite(source, unsafe=True)
    assert "loss_value = tf.stop_gradient(loss)" in rewritten_source
    assert ".numpy()" not in rewritten_source and "float(" not in rewritten_source
    original = load_module(source).step
    rewritten = load_module(rewritten_source).step
    with pytest.raises(AttributeError):
        original(*CALLS[0])
    traced = printed(tf.function(python_function(rewritten), autograph=False), CALLS)
    assert len(traced) == 2 * len(CALLS)
    assert_same_printed(eager_lines(original, CALLS), traced)


@pytest.mark.parametrize(
    "binding",
    ["loss_value: float = loss.numpy()", "loss_value = shown = loss.numpy()"],
    ids=["annotated", "chained"],
)
def test_a_host_value_bound_by_any_plain_assignment_prints_the_tensor(binding: str) -> None:
    """An annotated or chained assignment binds the host value as `name =
    value` does: the print shows the tensor it becomes, every call."""
    source = textwrap.dedent(HOST_VALUE_PRINTED).replace("loss_value = loss.numpy()", binding)
    rewritten_source = rewrite(source, unsafe=True)
    assert ".numpy()" not in rewritten_source and 'print("loss", loss_value' in rewritten_source
    original = load_module(source).step
    rewritten = load_module(rewritten_source).step
    traced = printed(tf.function(python_function(rewritten), autograph=False), CALLS)
    assert len(traced) == 2 * len(CALLS)
    assert_same_printed(eager_lines(original, CALLS), traced)
