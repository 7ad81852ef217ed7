"""Keras' names, whichever package they are imported from.

Keras is imported as `keras`, `tensorflow.keras` (`tf.keras`), `tf_keras`,
and, in older code, through TensorFlow's private path
`tensorflow.python.keras`: one API under four spellings. Name resolution
(pass 1's `resolve` and `NameResolver.qualified_name`) rewrites the private
path to the public one (`canonical_names`), and every Keras question (is this base a `Layer`,
is this callee a Keras layer) asks `keras_path`, so a `Layer` subclass is
the same class under every import. Strings only, apart from LibCST: pass 1
and the pre-parse checks read it.
"""

from __future__ import annotations

from collections.abc import Iterable

from tfrewrite.facts.canonical_names import canonical_name
from tfrewrite.facts.keras_public_names import PUBLIC_NAMES
from tfrewrite.facts.keras_training_layers import (
    TRAINING_INSENSITIVE_LAYERS as MEASURED_TRAINING_INSENSITIVE_LAYERS,
)

# The packages Keras' public API is imported from.
KERAS_PACKAGES = ("keras", "tensorflow.keras", "tf_keras")
KERAS_PREFIXES = tuple(f"{package}." for package in KERAS_PACKAGES)


def keras_path(qualified: str | None) -> str | None:
    """The name under the Keras package (`layers.Dense`) of a resolved name
    from any of its spellings, None when it is no Keras name."""
    if not qualified:
        return None
    qualified = canonical_name(qualified)
    for prefix in KERAS_PREFIXES:
        if qualified.startswith(prefix):
            return qualified[len(prefix) :]
    return None


def keras_leaf(qualified: str | None) -> str | None:
    """`tensorflow.keras.losses.Loss` -> `Loss`; None if not a Keras name."""
    path = keras_path(qualified)
    return path.rsplit(".", 1)[-1] if path is not None else None


def is_loss_class(qualified: str | None) -> bool:
    """`keras.losses.BinaryCrossentropy` (any Keras spelling): a loss class
    whose objects, called on `(y_true, y_pred)`, return a tensor; not the
    base `Loss`, nor a function of the namespace (`losses.mse`)."""
    path = keras_path(qualified) or ""
    leaf = path.rsplit(".", 1)[-1]
    return path.startswith("losses.") and leaf[:1].isupper() and leaf != "Loss"


def is_keras_model_class(bases: Iterable[str]) -> bool:
    """A class whose resolved bases include `keras.Model` (or `Sequential`):
    Keras gives its instances `self.optimizer` once compiled."""
    return any(keras_leaf(base) in ("Model", "Sequential") for base in bases)


# Keras callables whose result is a model: its constructors, and what loads
# or copies one (`keras.applications.X(...)` too, by its path).
_MODEL_BUILDERS = frozenset({"Sequential", "Model", "Functional", "load_model", "clone_model"})
# The words a source that calls one spells: a pre-check before asking.
MODEL_BUILDER_WORDS = (*sorted(_MODEL_BUILDERS), "applications")
# Keyword arguments of Keras layers that take a function Keras calls with a
# weight variable (`kernel_constraint`, `bias_regularizer`, ...).
WEIGHT_CALLBACK_SUFFIXES = ("_constraint", "_regularizer")


# Keras' own layers whose output does not depend on `training` (a layer
# built with `dropout=` or `recurrent_dropout=` does): measured on the
# installed Keras (`scripts/keras_training_layers.py`), and `Input`, which
# makes a placeholder, not a layer that computes.
TRAINING_INSENSITIVE_LAYERS = MEASURED_TRAINING_INSENSITIVE_LAYERS | {"Input", "InputLayer"}


RNN_DROPOUT_KEYWORDS = frozenset({"dropout", "recurrent_dropout"})


# Keras wrappers whose output depends on `training` only through the layer
# they wrap (built in their arguments, and read there).
WRAPPER_LAYERS = frozenset({"Bidirectional", "TimeDistributed"})


def layer_reads_training(leaf: str, keywords: Iterable[str | None] = ()) -> bool:
    """Whether one of Keras' own layers (`leaf`: its class name), built with
    these keyword arguments, computes otherwise with `training=True`:
    dropout, normalization, noise, a recurrent layer built with `dropout=`.
    (A `Lambda` says so by what its function calls: `lambda_reads_training`.)"""
    return leaf not in TRAINING_INSENSITIVE_LAYERS or any(
        k in RNN_DROPOUT_KEYWORDS for k in keywords
    )


# How `training_layer_reads` marks a project function a `Lambda` layer wraps
# among a builder's parts (`Lambda(ada_in)`): run on the layer's inputs, it
# reads `training` only through what it calls.
LAMBDA_PART = "lambda:"


# What built a local model that pass 1 judged whole, in place of a project
# class (`actor = tf.keras.Sequential([Dense(64), Dense(1)])`, then
# `PPO(actor, critic)`): a Keras `Sequential` every layer of which computes
# the same with `training=True`.
KERAS_MODEL_IGNORING_TRAINING = "\0keras-model-ignoring-training"


def builds_keras_layers(calls: Iterable[str]) -> bool:
    """Whether a function's calls (resolved names) build a Keras layer
    (`Dense(8)(x)`): a block of layers, judged as a builder's model is."""
    return any(
        (path := keras_path(call.removesuffix("()"))) is not None and path.startswith("layers.")
        for call in calls
    )


def lambda_reads_training(called: Iterable[str | None]) -> bool:
    """Whether a Keras `Lambda` whose function calls `called` (resolved
    names) may read `training`: unless every call is a TensorFlow op, which
    takes no `training` (`tf.nn.dropout` drops in both modes)."""
    return not all(
        (name or "").startswith("tensorflow.") and "keras" not in (name or "") for name in called
    )


def builds_keras_model(qualified: str | None) -> bool:
    """A call of `qualified` gives a Keras model: `keras.Sequential(...)`,
    a functional `keras.Model(inputs, outputs)`, `keras.models.load_model`,
    `keras.applications.ResNet50(...)`."""
    path = keras_path(qualified)
    if path is None:
        return False
    return path.rsplit(".", 1)[-1] in _MODEL_BUILDERS or path.startswith("applications.")


# Keras callables that read a saved model back: what it computes is what the
# project saved, not something the call itself says.
_MODEL_LOADERS = frozenset({"load_model"})


def loads_saved_model(qualified: str | None) -> bool:
    """A call of `qualified` reads a saved Keras model back
    (`keras.models.load_model(path)`): its layers are those of a model the
    project built and saved, so it adds no evidence of its own about them."""
    path = keras_path(qualified)
    return path is not None and path.rsplit(".", 1)[-1] in _MODEL_LOADERS


def star_imported_names(module: str) -> frozenset[str]:
    """The names `from <module> import *` binds when `module` is a Keras
    module of the generated table (`tensorflow.keras.layers`: `Dense`,
    `LSTMCell`, ...); none for any other module."""
    path = keras_path(module)
    return PUBLIC_NAMES.get(path, frozenset()) if path is not None else frozenset()
