"""Run each module on the Keras it is written for: Keras 2 code on `tf_keras`.

TensorFlow reads `TF_USE_LEGACY_KERAS` once, when it is imported, to choose
what `tf.keras` is (Keras 3, or `tf_keras` when the variable is `1`); a
worker imports TensorFlow once and then verifies many functions, so a worker
runs on one Keras for its whole life. The pool gives each request a worker
of the Keras its module is written for (`keras_flavour`, or the project's
`[tool.tfrewrite.verify] keras = 2` / `3`): a worker started with the
variable set for Keras 2 code, without it for Keras 3 code, and as the
user's environment has it for code either Keras runs.

In a Keras 2 worker `import keras` means `tf_keras` too (`install_alias`):
Keras 2 code written before TensorFlow 2.16 imported Keras 2 as `keras`,
and Keras 3, still installed as `keras`, would break it.

Without `tf_keras` where the workers run, Keras 2 code is "needs package",
with the evidence, before any worker runs it. Either way the result says
which Keras ran it and why. Standard library only: this runs in the workers
(`install_alias`, `ready_info`) and in the process that drives them.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
from collections.abc import MutableMapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from tfrewrite.verify import keras_flavour

FLAG = "TF_USE_LEGACY_KERAS"
_ON = ("true", "True", "1")


def flag_set(env: MutableMapping[str, str] | None = None) -> bool:
    """Whether TensorFlow reads `env` (the process's by default) as asking for
    Keras 2, as it does itself."""
    return (os.environ if env is None else env).get(FLAG) in _ON


def set_environment(env: MutableMapping[str, str], legacy: bool | None) -> None:
    """Make `env` ask TensorFlow for Keras 2 (`legacy`), for Keras 3 (`False`:
    a flag the user exported is removed), or leave it as it is (`None`)."""
    if legacy:
        env[FLAG] = "1"
    elif legacy is False:
        env.pop(FLAG, None)


# -- in a worker ---------------------------------------------------------------


class _KerasIsTfKeras(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """`keras` and `keras.X` import as `tf_keras` and `tf_keras.X`: the same
    module objects, so `keras.layers.Dense is tf.keras.layers.Dense`."""

    def find_spec(
        self, fullname: str, path: Any = None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != "keras" and not fullname.startswith("keras."):
            return None
        if importlib.util.find_spec("tf_keras" + fullname[len("keras") :]) is None:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        module = importlib.import_module("tf_keras" + spec.name[len("keras") :])
        spec.loader_state = module.__spec__  # the import system sets `__spec__` to ours
        return module

    def exec_module(self, module: ModuleType) -> None:
        """The module is `tf_keras`'s, already run: it keeps its own spec."""
        alias = module.__spec__
        if alias is not None and alias.loader_state is not None:
            module.__spec__ = alias.loader_state


def install_alias() -> bool:
    """In a Keras 2 worker (the flag set, `tf_keras` importable), make
    `import keras` give `tf_keras`, unless Keras 3 is imported already."""
    if not flag_set() or "keras" in sys.modules or importlib.util.find_spec("tf_keras") is None:
        return False
    if not any(isinstance(f, _KerasIsTfKeras) for f in sys.meta_path):
        sys.meta_path.insert(0, _KerasIsTfKeras())
    return True


def ready_info(tensorflow_version: str) -> dict[str, Any]:
    """What the process that drives the workers needs to know to place a
    request: the Keras `tf.keras` is in this worker, whether TensorFlow
    ships Keras 3 at all (2.16 and later), and whether `tf_keras` is there."""
    major_minor = tuple(int(p) for p in tensorflow_version.split(".")[:2] if p.isdigit())
    keras_three = major_minor >= (2, 16)
    has_tf_keras = importlib.util.find_spec("tf_keras") is not None
    legacy = flag_set() and has_tf_keras
    return {
        "keras": 3 if keras_three and not legacy else 2,
        "keras_three": keras_three,
        "tf_keras": has_tf_keras,
        "legacy_keras": legacy,
    }


# -- in the process that drives the workers ------------------------------------


@dataclass(frozen=True)
class Placement:
    """Where one request runs: a worker started with TF_USE_LEGACY_KERAS
    (`legacy`) or without it, and what its result says about it (`note`);
    or, when the Keras it needs is missing, its whole `result`."""

    legacy: bool = False
    note: dict[str, Any] | None = None
    result: dict[str, Any] | None = None

    def annotate(self, result: dict[str, Any]) -> dict[str, Any]:
        """The worker's result, saying which Keras ran it and why."""
        if self.note is None:
            return result
        text = self.note["why"]
        return {
            **result,
            "keras": self.note,
            "warnings": [*(result.get("warnings") or []), text],
        }


def requested(payload: dict[str, Any]) -> keras_flavour.KerasFlavour | int:
    """The Keras a request's code is written for: the project's setting
    (2 or 3) or what its source says, with its caller's file and the
    project's modules it imports (`from model import build`, whose
    `model.py` builds a Keras 2 layer)."""
    setting = (payload.get("options") or {}).get("keras", "auto")
    if setting in (2, 3):
        return int(setting)
    original = payload.get("original_source") or ""
    sources = [original, payload.get("rewrite_source")]
    caller = payload.get("caller") or {}
    if caller.get("path") and caller.get("path") != payload.get("path"):
        sources.append(_read(caller["path"]))
    path = payload.get("path") or ""
    here = os.path.dirname(os.path.abspath(path)) if not path.startswith("<") else os.getcwd()
    imported = {
        os.path.relpath(file, here): _read(file)
        for file in project_files(original, path, payload.get("sys_path"))
    }
    return keras_flavour.flavour_of(*sources, imported=imported)


# Project modules read for one request, at most: their imports are not followed.
IMPORTED_FILES = 32


def project_files(source: str, path: str, folders: list[str] | None) -> list[str]:
    """The files of the project's own modules `source` (the file at `path`)
    imports, found in the request's import folders (`sys_path`) or, for a
    relative import, beside `path`."""
    here = os.path.dirname(os.path.abspath(path)) if path and not path.startswith("<") else ""
    files: list[str] = []
    for level, name in keras_flavour.imported_modules(source):
        if level:
            roots = [here] if here else []
            for _ in range(level - 1):
                roots = [os.path.dirname(r) for r in roots]
        else:
            roots = list(folders or [])
        parts = name.split(".") if name else []
        for root in roots:
            base = os.path.join(root, *parts)
            for candidate in (base + ".py", os.path.join(base, "__init__.py")):
                if os.path.isfile(candidate) and os.path.abspath(candidate) != os.path.abspath(
                    path
                ):
                    files.append(candidate)
                    break
            else:
                continue
            break
    return list(dict.fromkeys(files))[:IMPORTED_FILES]


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except (OSError, UnicodeDecodeError):
        return None


def place(payload: dict[str, Any], info: dict[str, Any]) -> Placement:
    """Where `payload` runs, given what a worker said when it started (`info`,
    from `ready_info`; any worker of the same interpreter says the same, and
    before any has started `tf_keras` is assumed to be there)."""
    wanted = requested(payload)
    if isinstance(wanted, int):
        version = wanted
        why = f"the project sets `[tool.tfrewrite.verify] keras = {wanted}`"
    else:
        version = wanted.keras
        why = wanted.why()
    if version == 3:
        return Placement(legacy=False)
    if version != 2 or not info.get("keras_three", True):
        # Either Keras runs it, or TensorFlow's own tf.keras is Keras 2.
        return Placement(legacy=flag_set())
    if not info.get("tf_keras", True):
        return Placement(result=needs_tf_keras(payload, why, str(info.get("tensorflow") or "")))
    note = {"version": 2, "package": "tf_keras", "why": f"ran on Keras 2 (tf_keras): {why}"}
    return Placement(legacy=True, note=note)


def needs_tf_keras(payload: dict[str, Any], why: str, tensorflow: str) -> dict[str, Any]:
    """The "needs package" result of Keras 2 code where `tf_keras` is missing."""
    release = ".".join(tensorflow.split(".")[:2])
    pin = f"=={release}.*" if release else ""
    where = f"TensorFlow {tensorflow}" if tensorflow else "TensorFlow"
    text = (
        f"needs package `tf_keras`, Keras 2: {why}, and the workers' {where} has Keras 3 "
        f"as tf.keras: install tf_keras there (pip install 'tf-keras{pin}') and verify runs "
        "this code on it, or run verify with --python pointing at the project's environment"
    )
    return {
        "function": payload.get("qualname", "?"),
        "verdict": "needs package",
        "checks": [],
        "branches": [],
        "divergences": [],
        "warnings": [],
        "needs_package": text,
        "keras": {"version": 2, "package": "tf_keras", "why": why},
    }
