#!/usr/bin/env python3
"""Generate `src/tfrewrite/facts/keras_weighted_layers.py` from the installed Keras.

    .venv/bin/python scripts/keras_weighted_layers.py

Which Keras layers create variables when they are built and first called is
a fact of Keras, so it is measured rather than listed by hand: every public
class of `keras.layers` that is a `Layer` is constructed with minimal
arguments (ARGUMENTS gives a small value for each required parameter, by
its name) and called on small inputs (float tensors of rank 2 to 5, int and
string tensors, a pair of tensors) until one call succeeds. Every
`tf.Variable` created meanwhile, by the constructor or by the first call,
is counted with `tf.variable_creator_scope`: a layer that creates one,
constructed in traced code, raises "tf.function only supports singleton
tf.Variables created on the first call" (and, eagerly, starts from fresh
weights on every call).

A class that creates only the state of a random seed generator (Keras 3's
`Dropout`, `GaussianNoise`, the random augmentation layers) is recorded as
well: its variable is no weight, but tracing refuses it the same way.
Classes that no minimal construction and call succeeds on are listed with
the reason, undecided.

`check` and `fix` never import Keras: they read the generated table.
`--check` compares the committed table with what the installed Keras gives
instead of writing it.
"""

from __future__ import annotations

import inspect
import itertools
import json
import os
import re
import sys
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

TABLE = (
    Path(__file__).resolve().parent.parent
    / "src"
    / "tfrewrite"
    / "facts"
    / "keras_weighted_layers.py"
)
COMMAND = "python scripts/keras_weighted_layers.py"

# Minimal values for each required constructor parameter, by its name,
# tried in turn. A factory (called per construction, given `keras.layers`)
# where the value is a layer or a container.
ARGUMENTS: dict[str, tuple[Any, ...]] = {
    "activation": ("relu",),
    "axes": (-1,),
    "dims": ((2, 1),),
    "equation": ("ab,bc->ac",),
    "output_shape": (2,),
    "factor": (0.1, 2),
    "filters": (2,),
    "kernel_size": (2,),
    "pool_size": (2,),
    "function": (lambda layers: lambda x: x,),
    "height": (2,),
    "width": (2,),
    "height_factor": (0.1,),
    "width_factor": (0.1,),
    "input_dim": (8,),
    "output_dim": (2,),
    "key_dim": (2,),
    "head_dim": (2,),
    "num_heads": (2,),
    "num_query_heads": (2,),
    "num_key_value_heads": (1,),
    "n": (2,),
    "num_bins": (4,),
    "output_size": (2,),
    "rate": (0.5,),
    "scale": (1.0,),
    "stddev": (0.1,),
    "target_shape": ((-1,),),
    "units": (2,),
    "layers": (lambda layers: [],),
    "layer": (lambda layers: layers.Dense(2), lambda layers: layers.SimpleRNN(2)),
    "cell": (lambda layers: layers.SimpleRNNCell(2),),
    "cells": (lambda layers: [layers.SimpleRNNCell(2)],),
}
# Shapes of the float probes: ranks 2 to 6 (a batch of 2), small dimensions
# every convolution and pooling accepts, and 32 channels (the default
# number of groups of `GroupNormalization`).
SHAPES = ((2, 4), (2, 6, 3), (2, 6, 6, 3), (2, 4, 4, 4, 3), (2, 2, 4, 4, 4, 3), (2, 4, 32))
# The longest reason recorded for an undecided class (one line of the table).
REASON_LENGTH = 68
# The state of a recurrent cell of `units` 2, for the batch of 2.
STATE_SHAPE = (2, 2)


def _value(candidate: Any, layers: Any) -> Any:
    return candidate(layers) if callable(candidate) else candidate


def _constructions(required: list[str]) -> Iterator[dict[str, Any]]:
    """The argument choices to try: every combination of the candidates."""
    for choice in itertools.product(*(ARGUMENTS[name] for name in required)):
        yield dict(zip(required, choice, strict=True))


def _required(cls: type) -> list[str]:
    """The constructor's parameters without a default."""
    parameters = list(inspect.signature(cls.__init__).parameters.values())[1:]
    return [
        p.name
        for p in parameters
        if p.default is p.empty and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)
    ]


def _inputs(tf: Any) -> Iterator[tuple[tuple[Any, ...], dict[str, Any]]]:
    """(positional arguments, keyword arguments) of the probe calls."""
    for shape in SHAPES:
        tensor = tf.random.stateless_uniform(shape, seed=(1, 2))
        yield (tensor,), {}
        yield ([tensor, tensor],), {}
        yield (tensor, tensor), {}
        yield (tf.cast(tensor * 8.0, tf.int32),), {}
    inputs, state = tf.ones(SHAPES[0]), tf.zeros(STATE_SHAPE)
    yield (inputs, [state]), {}  # a recurrent cell: inputs and states
    yield (inputs, [state, state]), {}
    yield (inputs, [[state]]), {}
    yield (tf.constant([["a"], ["b"]]),), {}


def _creations(tf: Any, run: Callable[[], Any]) -> tuple[list[str], BaseException | None]:
    """The names of the `tf.Variable`s `run` creates, and what it raised."""
    made: list[str] = []

    def creator(next_creator: Callable[..., Any], **kwargs: Any) -> Any:
        variable = next_creator(**kwargs)
        made.append(variable.name)
        return variable

    with tf.variable_creator_scope(creator):
        try:
            run()
        except Exception as err:  # a probe Keras rejects tells nothing
            return made, err
    return made, None


def measure(cls: type, tf: Any, layers: Any) -> tuple[list[str] | None, str]:
    """The variables a minimal construction and first call of `cls` create
    (None when none succeeded), and why the last probe failed when none did."""
    try:
        required = _required(cls)
    except (TypeError, ValueError) as err:
        return None, f"no signature: {err}"
    missing = [name for name in required if name not in ARGUMENTS]
    if missing:
        return None, f"needs {', '.join(missing)}"
    reason = "no probe call succeeded"
    for arguments, (args, kwargs) in itertools.product(
        list(_constructions(required)), list(_inputs(tf))
    ):

        def run(
            arguments: dict[str, Any] = arguments,
            args: tuple[Any, ...] = args,
            kwargs: dict[str, Any] = kwargs,
        ) -> None:
            layer = cls(**{name: _value(value, layers) for name, value in arguments.items()})
            layer(*args, **kwargs)

        made, error = _creations(tf, run)
        if error is None:
            return made, ""
        reason = _reason(error)
    return None, reason


def _reason(error: BaseException) -> str:
    """The error's type and the first line of its message that says
    something (Keras wraps the cause in "Exception encountered when
    calling ..." and colours it), short enough for one line of the table."""
    lines = [
        re.sub(r"\x1b\[[0-9;]*m|\{\{.*?\}\}", "", line).strip() for line in str(error).splitlines()
    ]
    said = [line for line in lines if line and not line.startswith("Exception encountered")]
    text = f"{type(error).__name__}: {said[0]}" if said else type(error).__name__
    return text if len(text) <= REASON_LENGTH else text[: REASON_LENGTH - 3].rstrip() + "..."


def _is_seed_state(name: str) -> bool:
    return "seed_generator" in name


def weighted_layers() -> tuple[frozenset[str], frozenset[str], dict[str, str]]:
    """(classes that create variables, those whose only variable is a seed
    generator's state, {undecided class: reason}), measured on the installed
    Keras, each class under every public name of `keras.layers`."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import keras
    import tensorflow as tf

    tf.get_logger().setLevel("ERROR")
    weighted: set[str] = set()
    seeded: set[str] = set()
    undecided: dict[str, str] = {}
    measured: dict[int, tuple[list[str] | None, str]] = {}  # an alias is measured once
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in sorted(dir(keras.layers)):
            cls = getattr(keras.layers, name)
            if name.startswith("_") or not inspect.isclass(cls):
                continue
            if not issubclass(cls, keras.layers.Layer):
                continue
            if id(cls) not in measured:
                measured[id(cls)] = measure(cls, tf, keras.layers)
            made, reason = measured[id(cls)]
            if made is None:
                undecided[name] = reason
            elif made:
                weighted.add(name)
                if all(_is_seed_state(v) for v in made):
                    seeded.add(name)
    return frozenset(weighted), frozenset(seeded), dict(sorted(undecided.items()))


def versions() -> tuple[str, str]:
    """The installed TensorFlow's and Keras's versions."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import keras
    import tensorflow as tf

    return tf.__version__, keras.__version__


def render(
    tensorflow_version: str,
    keras_version: str,
    weighted: frozenset[str],
    seeded: frozenset[str],
    undecided: dict[str, str],
) -> str:
    """The source of the generated module."""
    lines = [
        f'"""Keras layers that create variables: generated by `{COMMAND}`',
        f"from Keras {keras_version} (TensorFlow {tensorflow_version}); do not edit.",
        "",
        "Each public `keras.layers` class was constructed with minimal arguments and",
        "called on a small input; `WEIGHTED_LAYERS` holds the names of those that",
        "created a `tf.Variable` meanwhile (weights, moving statistics or a random",
        "seed's state): constructed in traced code, such a layer makes tracing",
        'raise "tf.function only supports singleton tf.Variables created on the',
        'first call". `SEED_ONLY_LAYERS` are those whose only variable is a seed',
        "generator's state. `UNDECIDED_LAYERS` maps the classes no minimal",
        "construction and call succeeded on to the reason.",
        '"""',
        "",
        f'TENSORFLOW_VERSION = "{tensorflow_version}"',
        f'KERAS_VERSION = "{keras_version}"',
        "",
        "WEIGHTED_LAYERS = frozenset(",
        "    {",
        *(f'        "{name}",' for name in sorted(weighted)),
        "    }",
        ")",
        "",
        "SEED_ONLY_LAYERS = frozenset(",
        "    {",
        *(f'        "{name}",' for name in sorted(seeded)),
        "    }",
        ")",
        "",
        "UNDECIDED_LAYERS: dict[str, str] = {",
        *(f"    {json.dumps(name)}: {json.dumps(reason)}," for name, reason in undecided.items()),
        "}",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    from generated_tables import table_main  # a sibling script: run from scripts/

    return table_main(
        argv,
        __doc__.split("\n\n")[0],
        COMMAND,
        lambda: {TABLE: render(*versions(), *weighted_layers())},
    )


if __name__ == "__main__":
    sys.exit(main())
