"""Keras' dataset loaders, answered with generated arrays: verify never downloads.

Tutorial scripts build their data at import time (`(x_train, y_train), _ =
keras.datasets.mnist.load_data()`); a replayed training loop runs that set-up
code. Verification compares the original against the rewrite on the *same*
data, so real data is not needed, and a download (slow, or impossible
offline) would turn a provable rewrite into an error. Every
`keras.datasets.*.load_data` is replaced, in the worker, by a function that
returns seeded random arrays of the documented shapes and dtypes (MNIST:
`uint8` images `(60000, 28, 28)` and labels `(60000,)` in 0..9, ...), and
`keras.utils.get_file` answers from Keras' cache or raises a clear error
instead of fetching (a Keras application's ImageNet weights get seeded
stand-ins, see `pretrained`).

Text datasets (IMDB, Reuters) return object arrays of integer sequences, as
Keras does. Seeded, so the original and the rewrite see identical arrays.
"""

from __future__ import annotations

import importlib
import inspect
import os
import sys
import urllib.parse
from collections.abc import Callable
from typing import Any

import numpy as np

from tfrewrite.verify import pretrained

SEED = 2024
_installed = False


class DownloadRefused(RuntimeError):
    """Verification does not download files."""


def _images(
    train: int, test: int, shape: tuple[int, ...], classes: int, label_shape: tuple[int, ...]
) -> Callable[..., Any]:
    def load_data(*_args: Any, **kwargs: Any) -> Any:
        rng = np.random.default_rng(SEED)
        n_classes = 20 if kwargs.get("label_mode") == "coarse" else classes
        out = []
        for rows in (train, test):
            x = rng.integers(0, 256, (rows, *shape), dtype=np.uint8)
            y = rng.integers(0, n_classes, (rows, *label_shape)).astype(np.uint8)
            out.append((x, y))
        return tuple(out)

    return load_data


def _sequences(train: int, test: int, classes: int) -> Callable[..., Any]:
    def load_data(*_args: Any, num_words: int | None = None, **_kwargs: Any) -> Any:
        rng = np.random.default_rng(SEED)
        vocabulary = num_words or 10000
        out = []
        for rows in (train, test):
            x = np.empty(rows, dtype=object)
            for i in range(rows):
                x[i] = [1, *rng.integers(2, vocabulary, int(rng.integers(10, 200))).tolist()]
            y = rng.integers(0, classes, rows).astype(np.int64)
            out.append((x, y))
        return tuple(out)

    return load_data


def _table(train: int, test: int, features: int, high: float) -> Callable[..., Any]:
    def load_data(*_args: Any, **_kwargs: Any) -> Any:
        rng = np.random.default_rng(SEED)
        return tuple(
            (rng.uniform(0, high, (rows, features)), rng.uniform(5, 50, rows))
            for rows in (train, test)
        )

    return load_data


# name -> loader with the shapes and dtypes Keras documents.
LOADERS: dict[str, Callable[..., Any]] = {
    "mnist": _images(60000, 10000, (28, 28), 10, ()),
    "fashion_mnist": _images(60000, 10000, (28, 28), 10, ()),
    "cifar10": _images(50000, 10000, (32, 32, 3), 10, (1,)),
    "cifar100": _images(50000, 10000, (32, 32, 3), 100, (1,)),
    "imdb": _sequences(25000, 25000, 2),
    "reuters": _sequences(8982, 2246, 46),
    "boston_housing": _table(404, 102, 13, 100.0),
    "california_housing": _table(16512, 4128, 8, 10.0),
}


def _cached_or_refused(get_file: Callable[..., Any]) -> Callable[..., Any]:
    """`get_file` that answers from Keras' cache (`~/.keras/models/...`, the
    ImageNet weights of `VGG19(weights="imagenet")`) when the file is there,
    and otherwise refuses, naming where to put the file."""
    if getattr(get_file, "_tfrewrite_refuses", False):
        return get_file
    try:
        signature = inspect.signature(get_file)
    except (TypeError, ValueError):
        signature = None

    def cached_or_refused(*args: Any, **kwargs: Any) -> Any:
        try:
            bound = signature.bind(*args, **kwargs).arguments if signature else dict(kwargs)
        except TypeError:
            bound = dict(kwargs)
        fname, origin = bound.get("fname"), bound.get("origin")
        name = str(fname or os.path.basename(urllib.parse.urlsplit(str(origin or "")).path))
        home = bound.get("cache_dir") or os.environ.get("KERAS_HOME") or "~/.keras"
        target = os.path.join(
            os.path.expanduser(str(home)), str(bound.get("cache_subdir") or "datasets"), name
        )
        unpacks = bound.get("extract") or bound.get("untar")
        if name and not unpacks and not bound.get("force_download") and os.path.isfile(target):
            return get_file(*args, **kwargs)
        caller = sys._getframe(1)  # the code that called get_file
        stand_in = pretrained.stand_in_path(name, caller) if name and not unpacks else None
        if stand_in is not None:  # a Keras application's ImageNet weights
            return stand_in
        raise DownloadRefused(
            f"verify does not download files (keras.utils.get_file({fname!r}, {origin!r})): "
            f"download it once to `{target}` (verify then reads that copy), or build the data "
            "in a harness (verify_harness.py)"
        )

    cached_or_refused._tfrewrite_refuses = True  # type: ignore[attr-defined]
    return cached_or_refused


# Every namespace that exposes the loaders: Keras 3, and Keras 2 (TensorFlow
# before 2.16, or `tf_keras` under TF_USE_LEGACY_KERAS=1), whose
# `tf.keras.datasets` is a module of its own under `api._v2`.
_DATASET_PACKAGES = (
    "keras.datasets",
    "keras.src.datasets",
    "keras.api._v2.keras.datasets",
    "tf_keras.datasets",
    "tf_keras.src.datasets",
    "tf_keras.api._v2.keras.datasets",
)
_UTILS_MODULES = (
    "keras.utils",
    "keras.src.utils",
    "keras.src.utils.file_utils",
    "keras.src.utils.data_utils",
    "keras.api._v2.keras.utils",
    "tf_keras.utils",
    "tf_keras.src.utils.data_utils",
    "tf_keras.api._v2.keras.utils",
)


def install() -> None:
    """Replace the loaders in every Keras namespace that exposes them. Idempotent."""
    global _installed
    if _installed:
        return
    _installed = True
    for package in _DATASET_PACKAGES:
        for name, load_data in LOADERS.items():
            try:
                module = importlib.import_module(f"{package}.{name}")
            except Exception:  # not installed, or this Keras lacks the dataset
                continue
            module.load_data = load_data  # type: ignore[attr-defined]
    for module_name in _UTILS_MODULES:
        module = sys.modules.get(module_name)
        if module is None:
            try:
                module = importlib.import_module(module_name)
            except Exception:
                continue
        if callable(getattr(module, "get_file", None)):
            module.get_file = _cached_or_refused(module.get_file)  # type: ignore[attr-defined]
