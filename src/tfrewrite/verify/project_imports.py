"""Where the verified project's imports resolve, and what a failed import means.

Verification loads one function of a project at a time, in workers that serve
many projects in turn. So the worker's import path is the project's (its
import root, the script's folder, the folders its absolute imports need), and
a module one repository imported is forgotten before another repository's
`utils` or `core` is imported. When an import fails, the answer depends on
whose fault it is: a package neither installed where the workers run nor part
of the project is a fact about the environment (`MissingPackage`, "needs
package"), a module the project should contain but does not is the project's
error. And a message about a failure names the user's line, not a frame of
tfrewrite or an installed library.

This is a concept of its own apart from slicing a module and loading one
function of it (`loader`), which uses it. Standard library only: it runs
inside verification workers, which may live in another virtual environment.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import re
import sys
import traceback
import types

from tfrewrite.verify import distributions


class LoadError(Exception):
    """The function cannot be found or its module slice cannot be built: the
    base of `MissingPackage` and of the errors `loader` raises."""


class MissingPackage(LoadError):
    """The code imports a module that is neither installed where the
    verification workers run nor part of the project: a fact about the
    environment, not about the rewrite."""

    def __init__(
        self,
        name: str,
        imported_by: str | None = None,
        why: str | None = None,
        install: str | None = None,
        module: str | None = None,
    ) -> None:
        self.name = name
        self.imported_by = imported_by
        self.reasons = (why, install, module)  # to say it again where a stand-in is touched
        # `module` (the dotted name that failed, `google.protobuf`) picks the distribution.
        distribution = distributions.distribution(module or name)
        where = f" (imported by {imported_by})" if imported_by else ""
        why = why or (
            "which the verification workers' Python cannot import and the project does not contain"
        )
        install = install or f"install it there (pip install {distribution})"
        super().__init__(
            f"needs package `{name}`{where}, {why}: {install} or run verify with --python "
            "pointing at the project's environment"
        )


# TensorFlow modules that later releases removed: (name, release that removed it).
_REMOVED_FROM_TENSORFLOW = {"estimator": "2.16", "contrib": "2.0"}

# The folders of the project whose function is being verified (see
# `enter_project`): an import they cannot satisfy is the project's problem,
# any other missing import is a missing package.
_project_paths: list[str] = []
_baseline: set[str] | None = None  # modules loaded before the first project
# Every MissingPackage raised since the last `enter_project`, also those that
# code which catches exceptions (a replayed loop's set-up) turned into a result.
missing: list[MissingPackage] = []
# The objects methods were loaded on (`loader`), kept alive for the current
# request: a bound `tf.function` method holds its object weakly.
kept: list[object] = []


def package_of(path: str) -> tuple[str | None, str]:
    """`(package, import root)` of a source file, as Python sees it when the
    project is installed or run from its top folder: inside packages (folders
    with `__init__.py`) the dotted package and the folder above the outermost
    package (`tensorflow_addons/losses/focal_loss.py` -> `tensorflow_addons.losses`
    and the repository root); elsewhere no package and the file's own folder
    (a script's siblings import as top-level modules)."""
    folder = os.path.dirname(os.path.abspath(path))
    parts: list[str] = []
    root = folder
    while os.path.isfile(os.path.join(root, "__init__.py")):
        name = os.path.basename(root)
        if not name.isidentifier():
            break
        parts.insert(0, name)
        root = os.path.dirname(root)
    return (".".join(parts) or None), root


def import_roots(path: str, source: str, levels: int = 4) -> tuple[list[str], list[str]]:
    """Folders above a file from which its absolute imports resolve, for
    code run from its repository's top (`yolov3/yolov4.py` importing
    `yolov3.utils` beside a `yolov3/yolov3.py`; an example importing the
    package of the repository's `src/` folder): `(before, after)` the
    file's own folder on the path. A dotted import needs a folder of that
    name, so an ancestor that has one goes before the file's folder; a plain
    import the file's folder cannot satisfy is looked up after it."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return [], []
    folder = os.path.dirname(os.path.abspath(path))
    ancestors = []
    current = folder
    for _ in range(levels):
        parent = os.path.dirname(current)
        if parent == current:
            break
        ancestors.append(parent)
        current = parent
    before: list[str] = []
    after: list[str] = []

    def has(where: str, name: str, package: bool) -> bool:
        if os.path.isdir(os.path.join(where, name)):
            return True
        return not package and os.path.isfile(os.path.join(where, name + ".py"))

    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module + ".x"]  # from a.b import c: `a` must be a package
        for dotted_name in names:
            top, dot, _ = dotted_name.partition(".")
            package = bool(dot)
            if has(folder, top, package):
                continue
            for ancestor in ancestors:
                # The project's own package in a `src/` layout (`src/gnn_keras`),
                # which its examples import as if installed.
                where = next(
                    (w for w in (ancestor, os.path.join(ancestor, "src")) if has(w, top, package)),
                    None,
                )
                if where is not None:
                    target = before if package and has(folder, top, False) else after
                    if where not in before + after:
                        target.append(where)
                    break
    return before, after


def enter_project(paths: list[str]) -> None:
    """Make `paths` (import root, script folder, project root) the project
    whose imports resolve first. When they change, modules imported from the
    previous project's folders are forgotten (also when only their order
    changed: `yolov3` may then mean another file), so two repositories that
    both have a `utils` or `core` package never see each other's. Modules
    loaded before the first project (TensorFlow, tfrewrite itself) and those
    inside the new project's top folder (its first path) stay."""
    global _project_paths, _baseline
    missing.clear()
    kept.clear()
    if _baseline is None:
        _baseline = set(sys.modules)
    new = [os.path.abspath(p) for p in paths]
    if new == _project_paths:
        return
    old = _project_paths
    for entry in old:
        while entry in sys.path:
            sys.path.remove(entry)
    forget = [
        name
        for name, module in list(sys.modules.items())
        if name not in _baseline
        and not name.startswith("tfrewrite")
        and any(
            "site-packages" not in place
            and any(_inside(place, f) for f in old)
            # The new project's top keeps its modules: a package imported
            # twice registers its ops and gradients twice (an error).
            and not (new and _inside(place, new[0]))
            for place in _places(module)
        )
    ]
    for name in forget:  # decided first: a namespace path reads its parent from sys.modules
        sys.modules.pop(name, None)
    # A submodule whose package was forgotten would make the import system
    # fail on its parent (KeyError) for every later request.
    orphans = True
    while orphans:
        orphans = False
        for name in list(sys.modules):
            parent = name.rpartition(".")[0]
            if parent and parent not in sys.modules and name not in _baseline:
                del sys.modules[name]
                orphans = True
    for entry in reversed(new):
        if entry in sys.path:
            sys.path.remove(entry)
        sys.path.insert(0, entry)
    _project_paths = new


def _places(module: types.ModuleType) -> list[str]:
    """The file and package folders a module was loaded from."""
    places = [getattr(module, "__file__", None) or ""]
    try:
        places += list(getattr(module, "__path__", None) or ())
    except Exception:  # a namespace path whose parent is gone
        pass
    return [p for p in places if p]


def _inside(file: str, folder: str) -> bool:
    return os.path.abspath(file).startswith(folder.rstrip(os.sep) + os.sep)


def _in_project(name: str) -> bool:
    return any(
        os.path.isdir(os.path.join(folder, name))
        or os.path.isfile(os.path.join(folder, name + ".py"))
        for folder in _project_paths
    )


def missing_package(err: BaseException, record: bool = True) -> MissingPackage | None:
    """The missing package behind `err`, when it is an import of a module
    outside the project that cannot be found; None for anything else
    (a module the project should contain but does not is the project's error).
    `record` adds it to `missing` (not for an import a stand-in replaces:
    the package is missing only if the code touches it)."""
    if isinstance(err, MissingPackage):
        return err
    op_library = _missing_op_library(err)
    if op_library is not None:
        if record:
            missing.append(op_library)
        return op_library
    if not isinstance(err, ImportError):
        return None
    importer = None
    for frame in reversed(traceback.extract_tb(err.__traceback__)):
        if "importlib" not in frame.filename and not frame.filename.startswith("<frozen"):
            importer = f"{_shown(frame.filename)}, line {frame.lineno}"
            break
    text = str(err)
    found = None
    if "Keras version 2" in text or f"tensorflow{os.sep}python{os.sep}keras" in text:
        # Code written for Keras 2 under a TensorFlow whose tf.keras is Keras 3.
        found = MissingPackage(
            "tf_keras",
            importer,
            "Keras 2: this code imports Keras 2 APIs that the workers' TensorFlow "
            f"({text.splitlines()[0][:120]}) no longer has; with tf_keras installed, set "
            "`keras = 2` under [tool.tfrewrite.verify] (the workers then run with "
            "TF_USE_LEGACY_KERAS=1)",
        )
    elif isinstance(err, ModuleNotFoundError) and err.name:
        top = err.name.split(".")[0]
        # A package inside a namespace others share (`google.protobuf`
        # beside an installed `google.auth`) is named by its dotted name.
        shared = next(
            (
                known
                for known in distributions.DISTRIBUTIONS
                if "." in known and (err.name + ".").startswith(known + ".")
            ),
            None,
        )
        if shared is not None and not _in_project(top):
            found = MissingPackage(shared, importer, module=err.name)
        elif not _in_project(top) and top not in sys.modules:
            found = MissingPackage(top, importer, module=err.name)
    elif removed := _TENSORFLOW_NAME.match(text):
        name, module = removed.group(1), removed.group(2)
        if module == "tensorflow" and name in _REMOVED_FROM_TENSORFLOW:
            release = _REMOVED_FROM_TENSORFLOW[name]
            found = MissingPackage(
                f"tensorflow.{name}",
                importer,
                f"which TensorFlow {release} removed (the workers run TensorFlow "
                f"{_tensorflow_version()})",
                f"use TensorFlow older than {release} for the workers",
            )
        elif module in sys.modules and not hasattr(sys.modules[module], name):
            # `from tensorflow.keras.mixed_precision import experimental`: an
            # API of the TensorFlow the code was written for, gone since.
            found = MissingPackage(
                f"{module}.{name}",
                importer,
                f"which the workers' TensorFlow {_tensorflow_version()} (Keras "
                f"{_keras_version()}) no longer has",
                "use the older TensorFlow the code was written for",
            )
    elif re.match(r"cannot import name '\w+' from 'keras[.'\s]", text) and _keras_major() == 2:
        # Code written for Keras 3 (`from keras import ops`) under Keras 2.
        found = MissingPackage(
            "keras",
            importer,
            f"Keras 3: this code imports Keras 3 APIs ({text.splitlines()[0][:100]}) that the "
            f"workers' Keras {_keras_version()} lacks",
            "use TensorFlow 2.16 or later (Keras 3) for the workers",
        )
    elif "Could not import " in text:
        # A library's optional dependency, caught and re-raised with its own
        # words: Keras' `array_to_img` says "Could not import PIL.Image".
        top = text.partition("Could not import ")[2].split()[0].strip(".`'\"").split(".")[0]
        if top.isidentifier() and importlib.util.find_spec(top) is None:
            found = MissingPackage(top, importer)
    if found is not None and record:
        missing.append(found)
    return found


# `cannot import name 'experimental' from 'tensorflow.keras.mixed_precision'
# (/path/__init__.py)`: a name TensorFlow's or Keras' own modules lack.
_TENSORFLOW_NAME = re.compile(r"cannot import name '(\w+)' from '((?:tensorflow|tf_keras)[\w.]*)'")


def _missing_op_library(err: BaseException) -> MissingPackage | None:
    """`tf.load_op_library("./tf_ops/grouping/tf_grouping_so.so")` of a
    library the project compiles (custom CUDA or C++ ops) that was never
    built here: TensorFlow's NotFoundError. Like a missing package, a fact
    about the environment, not about the rewrite."""
    text = str(err)
    if type(err).__name__ != "NotFoundError" or "cannot open shared object file" not in text:
        return None
    library = text.split(":", 1)[0].strip()
    importer = None
    for frame in reversed(traceback.extract_tb(err.__traceback__)):
        if "site-packages" not in frame.filename and not frame.filename.startswith("<frozen"):
            importer = f"{_shown(frame.filename)}, line {frame.lineno}"
            break
    return MissingPackage(
        library,
        importer,
        "a TensorFlow op library the project compiles, not built where the verification "
        "workers run",
        "build it as the project says (its `tf.load_op_library` loads it)",
    )


class PackageTouched(MissingPackage, ImportError):
    """Code touched a stand-in of a package the workers lack: an ImportError
    (as the import itself would have raised) that says which line touched it."""

    def __init__(self, package: MissingPackage, where: str | None) -> None:
        super().__init__(package.name, where, *package.reasons)
        self.name = package.name  # ImportError's own initialiser cleared it


class StandIn(types.ModuleType):
    """What a failed import binds when the function under test does not
    reach it (`import cv2` for a class's plotting method): nothing
    happens until code touches it, which raises `PackageTouched` naming the
    package and the line. Looking an attribute up is no touch (it gives the
    attribute's stand-in: `data: pd.DataFrame` in a class body runs);
    calling, indexing, iterating or deriving from one is. Dunder look-ups
    (`__wrapped__`, `__path__`) stay AttributeErrors, so introspection that
    probes them works."""

    def __init__(self, dotted: str, package: MissingPackage, imported_by: str | None) -> None:
        super().__init__(dotted)
        self.__dict__["_tfrewrite_missing"] = (package, imported_by)

    def _touched(self) -> PackageTouched:
        package, imported_by = self.__dict__["_tfrewrite_missing"]
        where = imported_by
        frame = sys._getframe(2)
        own = os.path.abspath(__file__)
        while frame is not None and os.path.abspath(frame.f_code.co_filename) == own:
            frame = frame.f_back
        if frame is not None:
            touched = f"touched on {_shown(frame.f_code.co_filename)}, line {frame.f_lineno}"
            where = f"{imported_by}; {touched}" if imported_by else touched
        err = PackageTouched(package, where)
        missing.append(err)
        return err

    def __getattr__(self, attribute: str) -> object:
        if attribute.startswith("__") and attribute.endswith("__"):
            raise AttributeError(attribute)
        # `pd.DataFrame` in an annotation only names it: a stand-in for the
        # attribute, touched when used (called, indexed, iterated, derived from).
        package, imported_by = self.__dict__["_tfrewrite_missing"]
        inner = StandIn(f"{self.__name__}.{attribute}", package, imported_by)
        self.__dict__[attribute] = inner
        return inner

    def __call__(self, *args: object, **kwargs: object) -> object:
        raise self._touched()

    def _used(self, *args: object) -> object:
        """A value of the package used in arithmetic or converted
        (`cv2.INTER_AREA * 2`, `float(sp.pi)`): touched."""
        raise self._touched()

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _used
    __truediv__ = __rtruediv__ = __floordiv__ = __rfloordiv__ = __mod__ = __pow__ = _used
    __neg__ = __float__ = __int__ = __index__ = __lt__ = __le__ = __gt__ = __ge__ = _used

    def __or__(self, other: object) -> object:
        """`pd.DataFrame | None` in an annotation: still only a name."""
        return self

    __ror__ = __or__

    def __getitem__(self, key: object) -> object:
        raise self._touched()

    def __iter__(self) -> object:
        raise self._touched()

    def __mro_entries__(self, bases: tuple[object, ...]) -> tuple[type, ...]:
        raise self._touched()

    def __instancecheck__(self, instance: object) -> bool:
        raise self._touched()


def stand_in(
    err: ImportError, namespace: dict[str, object], bindings: dict[str, str], importer: str
) -> None:
    """Bind `bindings` (`name -> dotted module or attribute`) in `namespace`
    to stand-ins: the function under test does not reach them, so whatever
    made the import fail (a package the workers lack, a generated `*_pb2.py`
    the project does not commit, a name a library no longer has) matters
    only if the code touches them. A missing package is named as at load
    time; anything else by the module the import asked for."""
    found = missing_package(err, record=False)
    text = str(err).splitlines()[0] if str(err) else type(err).__name__
    for name, dotted in bindings.items():
        shown = dotted.lstrip(".")
        generated = shown.endswith(("_pb2", "_pb2_grpc"))
        namespace[name] = StandIn(
            dotted,
            found
            or MissingPackage(
                shown,
                why=f"which cannot be imported here ({text})"
                + ("; a module protoc generates" if generated else ""),
                install="generate it (protoc)" if generated else "make it importable",
            ),
            importer,
        )


def _keras_version() -> str:
    module = sys.modules.get("keras")
    return str(getattr(module, "__version__", "?"))


def _keras_major() -> int | None:
    major = _keras_version().split(".")[0]
    return int(major) if major.isdigit() else None


def _tensorflow_version() -> str:
    module = sys.modules.get("tensorflow")
    return str(getattr(module, "__version__", "?"))


def user_line(err: BaseException) -> str | None:
    """Where in the user's code `err` was raised (`train.py, line 12`): the
    innermost frame that is neither tfrewrite's nor an installed library's
    (TensorFlow, Keras), so a message can say which line of the script failed."""
    own = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    frames = [
        f
        for f in traceback.extract_tb(err.__traceback__)
        if not f.filename.startswith((own, "<"))
        and "site-packages" not in f.filename
        and "dist-packages" not in f.filename
        and f"{os.sep}lib{os.sep}python" not in f.filename
    ]
    # The project's own frames first: a library on PYTHONPATH is not the user's code.
    ours = [f for f in frames if any(_inside(f.filename, p) for p in _project_paths)]
    frames = ours or frames
    if not frames:
        return None
    return f"{os.path.basename(_shown(frames[-1].filename))}, line {frames[-1].lineno}"


def project_import_problem(err: ImportError, path: str) -> str | None:
    """What is wrong with the project's own tree, when an import of it fails."""
    text = str(err)
    if "no known parent package" in text:
        return (
            f"{text}: `{os.path.basename(path)}` uses relative imports, but its folder has no "
            "`__init__.py`; verify it inside its whole package (the folder with `__init__.py` "
            "files up to the package's top)"
        )
    if isinstance(err, ModuleNotFoundError) and err.name:
        top = err.name.split(".")[0]
        if _in_project(top):
            return (
                f"the project's own module `{err.name}` is not in its tree ({text}); verify the "
                "file inside the complete project (every module it imports)"
            )
    return None


def _shown(filename: str) -> str:
    """A file name relative to the project folder that holds it (a module
    slice's name `path (role #n)` shown as its path)."""
    head, sep, tail = filename.rpartition(" (")
    if sep and tail.endswith(")") and "#" in tail:
        filename = head
    for folder in _project_paths:
        if _inside(filename, folder):
            return os.path.relpath(filename, folder)
    return filename
