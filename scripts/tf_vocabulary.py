#!/usr/bin/env python3
"""Generate `src/tfrewrite/facts/tf_scalar_results.py`,
`src/tfrewrite/facts/tf_dtype_positions.py` and
`src/tfrewrite/facts/tf_shape_arguments.py` from the installed TensorFlow.

    .venv/bin/python scripts/tf_vocabulary.py

Which TensorFlow functions return a scalar is a fact of the library, so it
is measured rather than listed by hand: every public function of `tf`,
`tf.math`, `tf.linalg` and `tf.nn` is called eagerly with only its required
arguments, each a float32 tensor (or a list of two, for functions such as
`tf.linalg.global_norm` that take a list) of rank 0 to 3 (square and
non-square shapes). A function enters the table when every call that
succeeds returns a rank-0 tensor and calls succeed on at least two of the
ranks 1 to 3: an element-wise op or `tf.linalg.det` (scalar for a matrix,
rank 1 for a stack of them) is therefore left out.

The table is about calls with only the required arguments; an optional
argument such as `axis` may change the rank. For each function it also
records the optional parameters a call may pass and still get a scalar:
`name`, and a dtype parameter (`dtype`, `out_type`, `output_type`) when
every dtype it accepts keeps the result a scalar. A function all of whose
parameters are of that kind (`tf.size`, `tf.rank`) returns a scalar from
every call.

Functions whose names say they draw random numbers, keep state, print,
assert, read or write files, or take callables are not called at all.

Where a function takes its `dtype` positionally (`tf.zeros(shape, dtype)`,
`tf.random.uniform(shape, minval, maxval, dtype)`) is read from its
signature (no call), for every public function of DTYPE_NAMESPACES: a call
that passes the dtype without the keyword says the result's dtype as
surely as one that names it.

Which arguments take a shape to build (`tf.reshape(x, shape)`,
`tf.nn.conv2d_transpose(x, filters, output_shape, ...)`) is measured too:
each public function of SHAPE_NAMESPACES with a required parameter named
for a shape (SHAPE_PARAMETERS) is called with that argument holding `None`
for its first dimension (what a static shape holds for a dimension the trace
does not know), on probe tensors of ranks 2 to 5. It enters the table when
TensorFlow refuses to convert the `None`; a function that accepts it
(`tf.ensure_shape` checks a partial shape) or that no probe reaches is left
out.
`check` and `fix` never import TensorFlow: they read the generated table.
`--check` compares the committed table with what the installed TensorFlow
gives instead of writing it.
"""

from __future__ import annotations

import inspect
import os
import sys
import warnings
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

TABLE = (
    Path(__file__).resolve().parent.parent / "src" / "tfrewrite" / "facts" / "tf_scalar_results.py"
)
DTYPE_TABLE = TABLE.with_name("tf_dtype_positions.py")
SHAPE_TABLE = TABLE.with_name("tf_shape_arguments.py")
COMMAND = "python scripts/tf_vocabulary.py"

# The namespaces whose functions are called, as tfrewrite spells them.
# (`tf.losses` is Keras's `keras.losses`.)
NAMESPACES = (
    "tensorflow",
    "tensorflow.math",
    "tensorflow.linalg",
    "tensorflow.nn",
    "tensorflow.losses",
)
# Where `dtype` positions are read (signatures only, nothing is called).
DTYPE_NAMESPACES = (*NAMESPACES, "tensorflow.random", "tensorflow.dtypes")
# Where shape arguments are measured, and the parameter names that say a shape.
SHAPE_NAMESPACES = (*DTYPE_NAMESPACES, "tensorflow.image", "tensorflow.sparse")
SHAPE_PARAMETERS = ("shape", "dims", "output_shape", "size")
# Probe values of the other parameters a shape-taking call requires.
_SHAPE_PROBE_SETTINGS = {"strides": 1, "rate": 1, "padding": "SAME"}
# Parts of a name that say a call draws random numbers, has an effect, keeps
# state or takes a callable: such functions are not called.
UNSAFE_WORDS = (
    "random",
    "shuffle",
    "dropout",
    "seed",
    "sample",  # candidate samplers, sampled losses, Sobol samples
    "nce_loss",
    "fractional",  # pseudo-random pooling
    "timestamp",
    "import",  # graph definitions
    "serialize",  # the Keras registry
    "get",
    "print",
    "assert",
    "debug",
    "check",
    "save",
    "load",
    "write",
    "read",
    "file",
    "set_",
    "enable",
    "disable",
    "variable",
    "function",
    "gradient",
    "hessian",
    "while",
    "cond",
    "case",
    "map",
    "scan",
    "fold",
    "summary",
    "device",
    "scope",
    "control",
    "group",
    "no_op",
    "init",
    "eager",
    "logger",
    "collective",
    "replica",
    "strategy",
)
# Shapes of the probes: ranks 0 to 3, square and non-square, no dimension of
# 1 (so `tf.squeeze` keeps the rank). A rank-1 probe comes first: it is where
# an element-wise op shows it is not a reduction, and probing stops.
SHAPES = ((4,), (3, 3), (2, 3, 4), (), (2, 3), (3, 3, 3))
DTYPE_PARAMETERS = ("dtype", "out_type", "output_type")

Entry = tuple[tuple[str, ...], tuple[str, ...], bool]


def _probes(tf: Any) -> list[tuple[int, Any, list[Any]]]:
    """(rank, tensor, list of two tensors) for every probe shape: positive,
    distinct float32 values."""
    import numpy as np

    probes = []
    for shape in SHAPES:
        size = int(np.prod(shape)) if shape else 1
        values = (np.arange(1, size + 1, dtype="float32") / size + 0.5).reshape(shape)
        tensor = tf.constant(values)
        probes.append((len(shape), tensor, [tensor, tensor * 2.0]))
    return probes


def _candidates(tf: Any) -> Iterator[tuple[str, Callable[..., Any]]]:
    """(qualified name, function) for every public function of NAMESPACES."""
    for namespace in NAMESPACES:
        module = tf
        for part in namespace.split(".")[1:]:
            module = getattr(module, part)
        for leaf in sorted(dir(module)):
            if leaf.startswith("_") or not leaf[:1].islower():
                continue
            if any(word in leaf.lower() for word in UNSAFE_WORDS):
                continue
            value = getattr(module, leaf, None)
            if callable(value) and not inspect.isclass(value) and not inspect.ismodule(value):
                yield f"{namespace}.{leaf}", value


def public_signatures(namespaces: Iterable[str]) -> Iterator[tuple[str, list[inspect.Parameter]]]:
    """(qualified name, parameters) of every public function of the
    installed TensorFlow's `namespaces` whose signature can be read."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf

    for namespace in namespaces:
        module = tf
        for part in namespace.split(".")[1:]:
            module = getattr(module, part)
        for leaf in sorted(dir(module)):
            value = getattr(module, leaf, None)
            if leaf.startswith("_") or not callable(value) or inspect.isclass(value):
                continue
            try:
                parameters = list(inspect.signature(value).parameters.values())
            except (TypeError, ValueError):
                continue
            yield f"{namespace}.{leaf}", parameters


def positional_names(parameters: list[inspect.Parameter]) -> list[str]:
    """The parameters a positional argument can bind, in order."""
    return [p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def dtype_positions() -> dict[str, int]:
    """{qualified name: index of the positional parameter `dtype`}, read from
    the signatures of the installed TensorFlow's public functions."""
    positions = {}
    for name, parameters in public_signatures(DTYPE_NAMESPACES):
        positional = positional_names(parameters)
        if "dtype" in positional:
            positions[name] = positional.index("dtype")
    return dict(sorted(positions.items()))


def render_dtype_positions(tensorflow_version: str, positions: dict[str, int]) -> str:
    """The source of the generated dtype-position module."""
    lines = [
        '"""Where TensorFlow functions take `dtype` positionally: generated by',
        f"`{COMMAND}` from TensorFlow {tensorflow_version}'s signatures; do not edit.",
        "",
        "`DTYPE_POSITIONS` maps a function's qualified name to the index of its",
        "`dtype` parameter among those a positional argument binds: `tf.zeros(shape,",
        "tf.int32)` makes an int32 tensor as `tf.zeros(shape, dtype=tf.int32)` does.",
        '"""',
        "",
        f'TENSORFLOW_VERSION = "{tensorflow_version}"',
        "",
        "DTYPE_POSITIONS: dict[str, int] = {",
        *(f'    "{name}": {index},' for name, index in positions.items()),
        "}",
    ]
    return "\n".join(lines) + "\n"


def shape_arguments() -> dict[str, tuple[int, str]]:
    """{qualified name: (position, keyword)} of the parameter through which
    each function builds a shape, measured on the installed TensorFlow."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf

    tf.get_logger().setLevel("ERROR")
    table = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, parameters in public_signatures(SHAPE_NAMESPACES):
            required = [
                p.name
                for p in parameters
                if p.default is inspect.Parameter.empty
                and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
            ]
            function = _resolve(tf, name)
            for parameter in (n for n in required if n in SHAPE_PARAMETERS):
                if _refuses_unknown_dimension(tf, function, required, parameter):
                    table[name] = (positional_names(parameters).index(parameter), parameter)
                    break
    return dict(sorted(table.items()))


def _resolve(tf: Any, qualified: str) -> Callable[..., Any]:
    value = tf
    for part in qualified.split(".")[1:]:
        value = getattr(value, part)
    return value


def _refuses_unknown_dimension(
    tf: Any, function: Callable[..., Any], required: list[str], parameter: str
) -> bool:
    """Whether a call with `parameter` holding `None` for its first
    dimension fails to convert it, or fails where the same call with a
    number there runs: for a
    shape as long as the tensors' rank, or a size of some of their
    dimensions (`tf.image.resize(images, [h, w])`, which refuses `None`
    with a message of its own). False when a call accepts the `None`, or
    no probe runs with the number either."""
    probes = [(rank, rank) for rank in (2, 3, 4, 5)]
    probes += [(rank, length) for rank in (3, 4, 5) for length in (1, 2, 3) if length < rank]
    for rank, length in probes:
        spatial = [4] * (rank - 2)
        sized = [4] * (length - 1) if length < rank else [*spatial, 2]
        arguments: dict[str, Any] = {}
        for name in required:
            if name == parameter:
                arguments[name] = [None, *sized]
            elif name in _SHAPE_PROBE_SETTINGS:
                arguments[name] = _SHAPE_PROBE_SETTINGS[name]
            elif name == "filters":
                arguments[name] = tf.ones([3] * (rank - 2) + [2, 2])
            else:
                arguments[name] = tf.ones([1, *spatial, 2])
        refusal = _refusal(function, arguments)
        if refusal is None:
            return False  # a partial shape is accepted
        if "(None)" in refusal:
            return True  # the conversion of the `None` failed
        if _refusal(function, {**arguments, parameter: [1, *sized]}) is None:
            return True  # only the `None` was refused
    return False


def _refusal(function: Callable[..., Any], arguments: dict[str, Any]) -> str | None:
    """The error a call raises, None when it runs."""
    try:
        function(**arguments)
    except Exception as err:  # noqa: BLE001 - any refusal is measured
        return str(err)
    return None


def render_shape_arguments(tensorflow_version: str, table: dict[str, tuple[int, str]]) -> str:
    """The source of the generated shape-argument module."""
    from generated_tables import render_places  # a sibling script: run from scripts/

    doc = [
        "TensorFlow functions that build a shape from an argument: generated by",
        f"`{COMMAND}` from TensorFlow {tensorflow_version}; do not edit.",
        "",
        "`SHAPE_ARGUMENTS` maps a function's qualified name to the position and",
        "keyword of the parameter a call passes a shape in. Called with `None` for",
        "a dimension there (a static shape's value for a dimension the trace does",
        "not know), each refused to convert it.",
    ]
    return render_places(doc, ("TENSORFLOW_VERSION", tensorflow_version), "SHAPE_ARGUMENTS", table)


def _is_scalar(tf: Any, result: Any) -> bool:
    return tf.is_tensor(result) and result.shape.rank == 0


def _call(function: Callable[..., Any], names: list[str], value: Any, **extra: Any) -> Any:
    """`function` with `value` for every required parameter; raises what it raises."""
    return function(**dict.fromkeys(names, value), **extra)


def _scalar_calls(
    tf: Any, function: Callable[..., Any], names: list[str], probes: list, **extra: Any
) -> list[tuple[int, Any]] | None:
    """The probes a call succeeds on, as (rank, argument), when every
    successful call returns a scalar; None when one returns something else."""
    succeeded = []
    for rank, tensor, tensors in probes:
        for value in (tensor, tensors):
            try:
                result = _call(function, names, value, **extra)
            except Exception:  # a probe TensorFlow rejects tells nothing
                continue
            if not _is_scalar(tf, result):
                return None
            succeeded.append((rank, value))
    return succeeded


def _entry(tf: Any, function: Callable[..., Any], probes: list) -> Entry | None:
    """(positional parameters, parameters a scalar call may pass, every call
    scalar) when `function` returns a scalar for its required arguments."""
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return None
    parameters = list(signature.parameters.values())
    if any(p.kind is p.VAR_POSITIONAL for p in parameters):
        return None
    required = [p.name for p in parameters if p.default is p.empty and p.kind is not p.VAR_KEYWORD]
    if not required:
        return None
    calls = _scalar_calls(tf, function, required, probes)
    if calls is None or len({rank for rank, _ in calls if rank > 0}) < 2:
        return None
    allowed = set(required)
    succeeded = [p for p in probes if any(p[0] == rank for rank, _ in calls)]
    for parameter in parameters:
        if parameter.name == "name":
            extra_values: tuple[Any, ...] = ("probe",)
        elif parameter.name in DTYPE_PARAMETERS:
            extra_values = (tf.int32, tf.int64, tf.float32, tf.float64)
        else:
            continue
        results = [
            _scalar_calls(tf, function, required, succeeded, **{parameter.name: v})
            for v in extra_values
        ]
        if all(r is not None for r in results) and any(results):
            allowed.add(parameter.name)
    positional = tuple(
        p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    )
    every_call = all(p.name in allowed for p in parameters)
    return positional, tuple(sorted(allowed)), every_call


def versions() -> tuple[str, str]:
    """The installed TensorFlow's and Keras's versions (Keras answers for `tf.losses`)."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import keras
    import tensorflow as tf

    return tf.__version__, keras.__version__


def scalar_results() -> dict[str, Entry]:
    """{qualified name: entry}, measured on the installed TensorFlow."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf

    tf.get_logger().setLevel("ERROR")
    probes = _probes(tf)
    table = {}
    measured: dict[int, Entry | None] = {}  # an alias is measured once
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, function in _candidates(tf):
            if id(function) not in measured:
                measured[id(function)] = _entry(tf, function, probes)
            entry = measured[id(function)]
            if entry is not None:
                table[name] = entry
    return dict(sorted(table.items()))


def render(tensorflow_version: str, keras_version: str, table: dict[str, Entry]) -> str:
    """The source of the generated module."""
    lines = [
        f'"""TensorFlow functions whose result is a scalar: generated by `{COMMAND}`',
        f"from TensorFlow {tensorflow_version} (Keras {keras_version}); do not edit.",
        "",
        "Each function was called with only its required arguments, float32",
        "tensors (or lists of them) of several ranks, and returned a rank-0 tensor",
        "every time. `SCALAR_RESULTS` maps its qualified name to the parameters a",
        "positional argument binds (in order), the parameters a call may pass and",
        "still return a scalar (the required ones, `name`, and dtype parameters",
        "that keep it a scalar), and whether every call returns a scalar.",
        '"""',
        "",
        f'TENSORFLOW_VERSION = "{tensorflow_version}"',
        f'KERAS_VERSION = "{keras_version}"',
        "",
        "SCALAR_RESULTS: dict[str, tuple[tuple[str, ...], tuple[str, ...], bool]] = {",
    ]
    for name, (positional, allowed, every_call) in table.items():
        lines.append(f'    "{name}": (')
        lines.append(f"        {_tuple(positional)},")
        lines.append(f"        {_tuple(allowed)},")
        lines.append(f"        {every_call},")
        lines.append("    ),")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _tuple(names: tuple[str, ...]) -> str:
    inner = ", ".join(f'"{n}"' for n in names)
    return f"({inner},)" if len(names) == 1 else f"({inner})"


def main(argv: list[str] | None = None) -> int:
    from generated_tables import table_main  # a sibling script: run from scripts/

    def tables() -> dict[Path, str]:
        installed = versions()
        return {
            TABLE: render(*installed, scalar_results()),
            DTYPE_TABLE: render_dtype_positions(installed[0], dtype_positions()),
            SHAPE_TABLE: render_shape_arguments(installed[0], shape_arguments()),
        }

    return table_main(argv, __doc__.split("\n\n")[0], COMMAND, tables)


if __name__ == "__main__":
    sys.exit(main())
