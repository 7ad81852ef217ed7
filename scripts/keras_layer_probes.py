"""The probes the Keras table scripts share: how to construct each public
class of `keras.layers` with minimal arguments and call it on small inputs,
and the loop over those classes (`keras_weighted_layers.py` counts the
variables a layer creates, `keras_training_layers.py` whether `training`
changes its output). A sibling of those scripts: run them from `scripts/`.
"""

from __future__ import annotations

import inspect
import itertools
import os
import warnings
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

Measured = TypeVar("Measured")

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
# The state of a recurrent cell of `units` 2, for the batch of 2.
STATE_SHAPE = (2, 2)


def value(candidate: Any, layers: Any) -> Any:
    return candidate(layers) if callable(candidate) else candidate


def constructions(names: list[str]) -> Iterator[dict[str, Any]]:
    """The argument choices to try: every combination of the candidates."""
    for choice in itertools.product(*(ARGUMENTS[name] for name in names)):
        yield dict(zip(names, choice, strict=True))


def required(cls: type) -> list[str]:
    """The constructor's parameters without a default."""
    parameters = list(inspect.signature(cls.__init__).parameters.values())[1:]
    return [
        p.name
        for p in parameters
        if p.default is p.empty and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)
    ]


def inputs(tf: Any) -> Iterator[tuple[tuple[Any, ...], dict[str, Any]]]:
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



def each_layer_class(measure: Callable[[type, Any, Any], Measured]) -> dict[str, Measured]:
    """`measure(cls, tf, keras.layers)` of every public class of
    `keras.layers` that is a `Layer`, by each of its public names (a class
    under several names, `GlobalAvgPool2D` and `GlobalAveragePooling2D`, is
    measured once), on the installed Keras, its warnings and logs quiet."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import keras
    import tensorflow as tf

    tf.get_logger().setLevel("ERROR")
    found: dict[str, Measured] = {}
    measured: dict[int, Measured] = {}
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
            found[name] = measured[id(cls)]
    return found


def versions() -> tuple[str, str]:
    """The installed TensorFlow's and Keras's versions."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import keras
    import tensorflow as tf

    return tf.__version__, keras.__version__
