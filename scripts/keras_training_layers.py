#!/usr/bin/env python3
"""Generate `src/tfrewrite/facts/keras_training_layers.py` from the installed Keras.

    .venv/bin/python scripts/keras_training_layers.py

Which Keras layers compute the same with `training=True` as without is a
fact of Keras, so it is measured rather than listed by hand: every public
class of `keras.layers` that is a `Layer` is constructed with minimal
arguments and called on small inputs (the probes of
`keras_layer_probes.py`) until one call succeeds; then it is called on
that input in inference mode, three times in training mode, and in
inference mode again. A layer whose outputs are all equal ignores
`training` (`Dense`, `Conv2D`, `GlobalAvgPool2D`, an `LSTM` built without
`dropout`); one whose outputs differ reads it (`Dropout`, the random
augmentation layers, `BatchNormalization`, whose training call also moves
its statistics). Classes no probe runs, and classes whose construction
draws at random (a `seed` parameter, but for its dropout: an `LSTM` or a
`MultiHeadAttention` measured at `dropout=0`) or wraps other layers, are
left out:
tfrewrite then takes them to read `training`, as it does every layer it
cannot tell. (A layer built with `dropout=` reads it whatever this table
says: `keras_names.RNN_DROPOUT_KEYWORDS`.)

`check` and `fix` never import Keras: they read the generated table.
`--check` compares the committed table with what the installed Keras gives
instead of writing it.
"""

from __future__ import annotations

import inspect
import itertools
import sys
from pathlib import Path
from typing import Any

from keras_layer_probes import (  # a sibling script: run from scripts/
    ARGUMENTS,
    constructions,
    each_layer_class,
    inputs,
    required,
    value,
    versions,
)

TABLE = (
    Path(__file__).resolve().parent.parent
    / "src"
    / "tfrewrite"
    / "facts"
    / "keras_training_layers.py"
)
COMMAND = "python scripts/keras_training_layers.py"
TRAINING_CALLS = 3  # training-mode calls compared with the inference ones
# Constructor parameters that make what a minimal construction shows say
# nothing of other uses: a layer that draws (`seed`: dropout, noise,
# augmentation at whatever default strength) or wraps other layers or a
# function (`Bidirectional`, `TimeDistributed`, `RNN`, `Lambda`).
UNDECIDED_BY = frozenset({"seed", "layer", "layers", "cell", "cells", "function", "backward_layer"})


def ignores_training(cls: type, tf: Any, layers: Any) -> bool | None:
    """Whether a minimal `cls` computes the same in both modes (None when
    no probe runs it)."""
    try:
        names = required(cls)
        params = set(inspect.signature(cls.__init__).parameters)
    except (TypeError, ValueError):
        return None
    if "dropout" in params:
        params.discard("seed")  # it draws for its dropout, which a `dropout=` says
    if any(name not in ARGUMENTS for name in names) or params & UNDECIDED_BY:
        return None
    for arguments, (args, kwargs) in itertools.product(
        list(constructions(names)), list(inputs(tf))
    ):
        try:
            layer = cls(**{name: value(given, layers) for name, given in arguments.items()})
            first = layer(*args, **kwargs, training=False)
        except Exception:  # a probe Keras rejects tells nothing
            continue
        try:
            outputs = [layer(*args, **kwargs, training=True) for _ in range(TRAINING_CALLS)]
            outputs.append(layer(*args, **kwargs, training=False))
        except Exception:
            return False
        return all(_same(tf, first, output) for output in outputs)
    return None


def _same(tf: Any, a: Any, b: Any) -> bool:
    flat_a, flat_b = tf.nest.flatten(a), tf.nest.flatten(b)
    if len(flat_a) != len(flat_b):
        return False
    for x, y in zip(flat_a, flat_b, strict=True):
        x, y = tf.convert_to_tensor(x), tf.convert_to_tensor(y)
        if x.shape != y.shape or x.dtype != y.dtype:
            return False
        if not bool(tf.reduce_all(x == y)):
            return False
    return True


def training_insensitive_layers() -> frozenset[str]:
    """The public names of `keras.layers` whose classes ignore `training`."""

    def measure(cls: type, tf: Any, layers: Any) -> bool | None:
        tf.keras.utils.set_random_seed(0)
        return ignores_training(cls, tf, layers)

    classes = frozenset(name for name, ignores in each_layer_class(measure).items() if ignores)
    return classes | functional_forms(classes)


def functional_forms(classes: frozenset[str]) -> frozenset[str]:
    """The public functions of `keras.layers` that build and call one of
    `classes` (`add` builds an `Add`, `concatenate` a `Concatenate`): the
    function defined beside a layer class of its name, in any case."""
    import keras

    found = set()
    for name in dir(keras.layers):
        function = getattr(keras.layers, name)
        if name.startswith("_") or not inspect.isfunction(function):
            continue
        module = inspect.getmodule(function)
        for cls_name in classes:
            cls = getattr(keras.layers, cls_name)
            if cls_name.lower() == name.lower() and inspect.getmodule(cls) is module:
                found.add(name)
    return frozenset(found)


def render(tensorflow: str, keras: str, names: frozenset[str]) -> str:
    lines = [
        '"""Keras layers whose output does not depend on `training`: generated by',
        f"`{COMMAND}` from Keras {keras} (TensorFlow {tensorflow}); do not edit.",
        "",
        "Each class of `keras.layers` (under every public name) that a minimal",
        "construction and call computes the same with `training=True` as without,",
        "and each function of `keras.layers` that builds and calls one (`add`).",
        '"""',
        "",
        f'TENSORFLOW_VERSION = "{tensorflow}"',
        f'KERAS_VERSION = "{keras}"',
        "",
        "TRAINING_INSENSITIVE_LAYERS = frozenset(",
        "    {",
        *(f'        "{name}",' for name in sorted(names)),
        "    }",
        ")",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    from generated_tables import table_main  # a sibling script: run from scripts/

    description = __doc__.split("\n\n")[0]
    return table_main(
        argv,
        description,
        COMMAND,
        lambda: {TABLE: render(*versions(), training_insensitive_layers())},
    )


if __name__ == "__main__":
    sys.exit(main())
