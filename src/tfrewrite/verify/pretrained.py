"""Pretrained Keras applications, stood in by seeded weights when not downloaded.

A perceptual loss builds `VGG19(weights="imagenet", include_top=False)`; a
transfer-learning script starts from `MobileNetV2(weights="imagenet")`. The
application downloads its weights through `keras.utils.get_file`, which
verify refuses (see `datasets`). The weights do not matter to the proof:
verification compares the original against the rewrite on the *same*
network, as it does on generated datasets. So when an application asks for
weights that are not in Keras' cache, `get_file` answers with a stand-in
path, and the application's `model.load_weights(path)` sets every kernel from
a seeded generator instead (He-normal, so sixteen ReLU layers neither vanish
nor explode); 1-D weights (biases, batch-norm statistics) keep their constant
initial values. Both sides get identical networks whatever random draws
their code made before. A cached copy is used as is.

The hook is at `get_file` and `Model.load_weights`, which every namespace
shares (`keras.applications.VGG19`, `tf.keras.applications.vgg19.VGG19`,
`from tensorflow.keras.applications import VGG19` loaded at any time); only a
call from a module of Keras' applications is stood in, so a project's own
`get_file` of its own weights is still refused with the file to download.
Every stand-in is recorded in `STOOD_IN`, and the result says so.

Runs inside verification workers only.
"""

from __future__ import annotations

import functools
import importlib
import os
import tempfile
from collections.abc import Callable
from typing import Any

import numpy as np

SEED = 2025
STOOD_IN: list[str] = []  # applications built with stand-in weights, in order
_MARK = os.path.join(tempfile.gettempdir(), "tfrewrite-stand-in-weights")
_installed = False

# The model classes whose `load_weights` the applications call: Keras 3,
# Keras 2 (TensorFlow before 2.16) and `tf_keras`.
_MODEL_CLASSES = (
    ("keras.src.models.model", "Model"),
    ("keras.src.engine.training", "Model"),
    ("tf_keras.src.engine.training", "Model"),
)


def stand_in_path(fname: str, caller: Any) -> str | None:
    """A stand-in path for the weights file `fname` when the frame asking for
    it (`caller`, the frame that called `get_file`) is one of Keras'
    applications, else None."""
    module = str(caller.f_globals.get("__name__", ""))
    if ".applications." not in module or not module.startswith(("keras.", "tf_keras.")):
        return None
    STOOD_IN.append(caller.f_code.co_name)
    return os.path.join(_MARK, os.path.basename(fname))


def _seed_weights(model: Any) -> None:
    """Give every kernel (2-D and more) seeded He-normal values."""
    values = []
    for index, weight in enumerate(model.get_weights()):
        if weight.ndim < 2:
            values.append(weight)
            continue
        fan_in = int(np.prod(weight.shape[:-1])) or 1
        rng = np.random.default_rng(SEED + index)
        values.append(
            (rng.standard_normal(weight.shape) * np.sqrt(2.0 / fan_in)).astype(weight.dtype)
        )
    model.set_weights(values)


def _seeded_if_stand_in(load_weights: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(load_weights)
    def load_or_seed(self: Any, filepath: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(filepath, str) and os.path.dirname(filepath) == _MARK:
            return _seed_weights(self)
        return load_weights(self, filepath, *args, **kwargs)

    load_or_seed._tfrewrite_stand_in = True  # type: ignore[attr-defined]
    return load_or_seed


def install() -> None:
    """Let every Keras model class load stand-in weights. Idempotent."""
    global _installed
    if _installed:
        return
    _installed = True
    for module_name, class_name in _MODEL_CLASSES:
        try:
            model_class = getattr(importlib.import_module(module_name), class_name)
        except Exception:  # this Keras is not installed
            continue
        load_weights = model_class.load_weights
        if not getattr(load_weights, "_tfrewrite_stand_in", False):
            model_class.load_weights = _seeded_if_stand_in(load_weights)


def describe() -> str | None:
    """What the result says when stand-ins were used."""
    if not STOOD_IN:
        return None
    names = ", ".join(f"`{name}`" for name in dict.fromkeys(STOOD_IN))
    return (
        f"the ImageNet weights of {names} are not in Keras' cache: both sides used the same "
        "seeded stand-in weights (download them once to compare with the real ones)"
    )
