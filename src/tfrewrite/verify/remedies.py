"""What the user can do when their own code fails for a reason outside the
rewrite: a folder to create, or Keras 2 code run under Keras 3.

Standard library only: this runs inside verification workers.
"""

from __future__ import annotations

import os
import re
import sys
import types

KERAS_TWO = (
    "run the workers under Keras 2 (install tf_keras and set `keras = 2` under "
    "[tool.tfrewrite.verify]: the workers then run with TF_USE_LEGACY_KERAS=1)"
)

# `Layer.add_variable() missing 1 required positional argument: 'initializer'`
_SIGNATURE = re.compile(
    r"^(?P<owner>[A-Za-z_]\w*)\.(?P<method>[A-Za-z_]\w*)\(\) "
    r"(?:missing \d+ required|got an unexpected keyword argument|takes \d+|got multiple values)"
)


def remedy(err: BaseException, path: str) -> str | None:
    """What the user can do when their own code fails for a reason outside
    the rewrite: a folder to create, or Keras 2 code under Keras 3."""
    return (
        missing_folder(err, path) or missing_file(err) or keras_two(err) or keras_two_signature(err)
    )


def keras_two(err: BaseException) -> str | None:
    """Keras 3 lacks an attribute the code asks a Keras object or module for
    (`Mean.reset_states`, renamed `reset_state`): code written for Keras 2."""
    if not isinstance(err, AttributeError) or not err.name:
        return None
    owner = getattr(err, "obj", None)
    if owner is None:
        return None
    if isinstance(owner, types.ModuleType):
        module, shown = owner.__name__, owner.__name__
    else:
        module, shown = type(owner).__module__, type(owner).__name__
    if module.split(".")[0] != "keras":
        return None
    return (
        f"Keras {_keras_version()} has no `{shown}.{err.name}`: the code was written for "
        f"Keras 2; update it, or {KERAS_TWO}"
    )


def keras_two_signature(err: BaseException) -> str | None:
    """A Keras 3 method called the Keras 2 way (`self.add_variable(name=...,
    shape=...)`, whose `initializer` Keras 3 requires): Python names the
    method (`Layer.add_variable()`) but not its object, so the method is
    looked up among the classes of the Keras 3 modules loaded."""
    if not isinstance(err, TypeError):
        return None
    found = _SIGNATURE.match(str(err))
    if found is None or _keras_version().split(".")[0] != "3":
        return None
    owner, method = found["owner"], found["method"]
    for name, module in list(sys.modules.items()):
        if name.split(".")[0] != "keras" or module is None:
            continue
        cls = getattr(module, owner, None)
        if (
            isinstance(cls, type)
            and cls.__module__.split(".")[0] == "keras"
            and callable(getattr(cls, method, None))
        ):
            return (
                f"Keras {_keras_version()} calls `{owner}.{method}` otherwise than the code "
                f"does: the code was written for Keras 2; update it, or {KERAS_TWO}"
            )
    return None


def _keras_version() -> str:
    return str(getattr(sys.modules.get("keras"), "__version__", "3"))


# Keras' `load_model` of a path that does not exist.
_NOT_FOUND = re.compile(r"No (?:such )?file or directory(?: found at|:) ['\"]?(?P<path>[^'\"\s]+)")


def missing_file(err: BaseException) -> str | None:
    """A file the code reads does not exist (`load_model` of a generator an
    earlier training phase saves): said with the path, also when the code
    caught the error and raised its own (`except: raise FileNotFoundError(
    'Pre-trained Generator model not found!')`)."""
    seen: set[int] = set()
    current: BaseException | None = err
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        path = None
        if isinstance(current, FileNotFoundError) and isinstance(current.filename, str):
            path = current.filename
        elif isinstance(current, OSError):
            found = _NOT_FOUND.search(str(current))
            path = found["path"] if found else None
        if path and not os.path.exists(path):
            return (
                f"the code reads `{path}`, which does not exist (a file another run of the "
                "project writes, such as a saved model?): create it"
            )
        current = current.__cause__ or current.__context__
    return None


def missing_folder(err: BaseException, path: str) -> str | None:
    """What to create when the code uses a relative path whose folder the
    script's folder lacks (`./result/00000.png` of a script whose author made
    `result/` by hand): verify runs the code in a copy of that folder."""
    if not isinstance(err, FileNotFoundError) or not isinstance(err.filename, str):
        return None
    folder = os.path.dirname(err.filename)
    if not folder or os.path.isabs(folder) or os.path.isdir(folder):
        return None
    script = os.path.basename(path)
    return (
        f"the code uses `{err.filename}`, but there is no folder `{os.path.normpath(folder)}` "
        f"beside {script}: create it there (verify runs the code in a temporary copy of "
        f"{script}'s folder and writes nothing into yours)"
    )
