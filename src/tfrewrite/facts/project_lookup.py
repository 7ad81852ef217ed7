"""Resolving a name one module writes to the project definitions it may
mean: across modules whose names differ by a leading package, through
re-exports and star imports, through objects a class holds, and to the
project class a call builds. Every cross-module fact asks this lookup.
"""

from __future__ import annotations

from functools import cache
from pathlib import PurePath

from tfrewrite.facts.call_evidence import EXTERNAL_ROOTS
from tfrewrite.facts.index_records import SOURCE_FOLDER, FunctionInfo, ModuleIndex
from tfrewrite.facts.traced_function import (
    FRAMEWORK_TRACED_METHODS,
    KERAS_CALLED_BASES,
    traced_base_leaf,
)


def suffixes(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[i:]) for i in range(len(parts))]


MAX_REEXPORT_HOPS = 4


class ProjectLookup:
    """Resolve dotted references to (module index, local qualname), tolerating
    module names that differ by a leading package (`examples.losses` vs
    `losses`): a reference finds every definition whose qualified name ends
    with it, component by component (a bare name only in a file with no
    module name).

    Definitions are grouped by their last component, and each reference is
    answered once: building every suffix of every qualified name up front
    cost most of the project facts' time on a large project."""

    def __init__(self, indexes: list[ModuleIndex]) -> None:
        # last component -> (index, local qualname, qualified name), in index order
        self.by_last: dict[str, list[tuple[ModuleIndex, str, str]]] = {}
        for index in indexes:
            for qualname in [*index.functions, *index.classes]:
                full = index.qualify(qualname)
                self.by_last.setdefault(full.rpartition(".")[2], []).append((index, qualname, full))
        self.found: dict[str, list[tuple[ModuleIndex, str]]] = {}
        # Module-level objects made by a call (`load = make_loader(cfg)`,
        # `net = Net()`): qualified name -> what made them.
        self.module_objects: dict[str, str] = {}
        for index in indexes:
            if index.module:
                for name, constructor in index.module_instances.items():
                    self.module_objects[f"{index.module}.{name}"] = constructor
        # Modules that re-export others' names (`from .helpers import *` in a
        # package's `__init__.py`): module name -> the modules it star-imports.
        self.reexports: dict[str, list[str]] = {}
        # What each module imports, by the name it binds (`from
        # ._penalty import gradient_penalty` in `pkg/losses/__init__.py`):
        # `pkg.losses.gradient_penalty`, imported elsewhere, is that function.
        self.imported: dict[str, dict[str, str]] = {}
        self.reexport_hops = 0  # re-exports followed to reach the name looked up now
        # Modules that import or re-export, by their last component; and what
        # `_modules_named` answered.
        self.modules_by_last: dict[str, list[str]] = {}
        self.modules_named: dict[str, list[str]] = {}
        for index in indexes:
            if index.reexported_stars and index.module:
                self.reexports.setdefault(index.module, []).extend(index.reexported_stars)
            if index.reexported and index.module:
                self.imported.setdefault(index.module, {}).update(index.reexported)
        for module in {*self.imported, *self.reexports}:
            self.modules_by_last.setdefault(module.rpartition(".")[2], []).append(module)
        self.indexes = indexes
        # Modules read, by name: a package whose `__init__` is not among
        # them re-exports what its modules define (`_from_unread_package`).
        self.read_modules = {index.module for index in indexes if index.module}
        # (module path, class qualname) -> its direct project subclasses,
        # built on the first `overriding_methods` question.
        self.subclasses: dict[tuple[str, str], list[tuple[ModuleIndex, str]]] | None = None

    def find(self, name: str, origin: ModuleIndex | None = None) -> list[tuple[ModuleIndex, str]]:
        """Definitions `name` may refer to. A bare name written in `origin`,
        a file with no module name (a notebook), is that file's own
        definition when it has one: two notebooks that each define `f`
        cannot import each other's. `make_loss()` (the result of a call,
        `ImportResolution.call_results`) is what `make_loss` returns. A name
        qualified with `origin`'s own
        module name is `origin`'s definition: pass 1 qualifies only a file's
        own definitions so, and two files may share a module name
        (`a/main.py`, `b/main.py`)."""
        if name.endswith("*"):
            return self._methods_named_from(name[:-1], origin)
        if name.endswith("()"):
            found: list[tuple[ModuleIndex, str]] = []
            for index, made in self.find(name[:-2], origin):
                if made in index.functions:
                    for returned in index.functions[made].returns:
                        # Its nested functions by qualname; others as its module names them.
                        if returned in index.functions:
                            found.append((index, returned))
                        elif not returned.endswith("()"):
                            found += self.find(returned, index)
                elif made in index.classes:
                    found += self.call_method(index, made)
            return found
        if origin is not None and origin.module and name.startswith(origin.module + "."):
            local = name[len(origin.module) + 1 :]
            if local in origin.functions or local in origin.classes:
                return [(origin, local)]
        known = self._find(name)
        if not known and name in self.module_objects:
            # A module-level object handed on or called (`ds.map(load)` for
            # `load = make_loader(cfg)`): what its maker returns runs.
            return self.find(self.module_objects[name] + "()", origin)
        if origin is not None and not origin.module and "." not in name:
            own = [(index, qualname) for index, qualname in known if index is origin]
            if own:
                return own
        if len(known) > 1 and origin is not None and origin.module:
            # Scripts side by side (`lab6/run.py`, `lab7/run.py`) each import
            # the `training_loop` beside them: Python looks in the script's
            # own folder first.
            folder = origin.module.rpartition(".")[0]
            beside = [(i, q) for i, q in known if i.module.rpartition(".")[0] == folder]
            if beside:
                return beside
        return known

    def _methods_named_from(
        self, name: str, origin: ModuleIndex | None
    ) -> list[tuple[ModuleIndex, str]]:
        """The methods `getattr(obj, "get" + name)` may fetch, for `name`
        "pkg.Augment.get" (`index_calls._named_by_getattr`): those of the
        class whose names start so."""
        owner, _, start = name.rpartition(".")
        found: list[tuple[ModuleIndex, str]] = []
        for index, qualname in self.find(owner, origin) if owner else []:
            if qualname not in index.classes:
                continue
            prefix = f"{qualname}.{start}"
            found += [
                (index, method)
                for method in index.functions
                if method.startswith(prefix) and method.count(".") == qualname.count(".") + 1
            ]
        return found

    def call_method(self, index: ModuleIndex, class_qualname: str) -> list[tuple[ModuleIndex, str]]:
        """What calling an object of a project class runs: its `__call__`,
        or for a Keras layer, model or loss the `call` Keras's `__call__`
        runs; the first the class or its project bases define."""
        if class_qualname not in index.classes:
            return []
        names = ["__call__"]
        if keras_base(index, class_qualname, self) in KERAS_CALLED_BASES:
            names.append("call")
        return self._defining(index, class_qualname, names)

    def _defining(
        self, index: ModuleIndex, class_qualname: str, names: list[str]
    ) -> list[tuple[ModuleIndex, str]]:
        """The first of `names` the class defines, else its project bases
        do (in order, depth first: `_bases`), as Python's attribute lookup
        finds it."""
        if class_qualname not in index.classes:
            return []
        for owner_index, owner in [(index, class_qualname), *self._bases(index, class_qualname)]:
            methods = owner_index.classes[owner].methods
            for name in names:
                if name in methods:
                    return [(owner_index, f"{owner}.{name}")]
        return []

    def defines_class_named(self, last: str) -> bool:
        """Whether the project defines a class whose name is `last` (`Net`,
        also `lstm_model`): a cheap test before resolving a callee."""
        return any(q in index.classes for index, q, _ in self.by_last.get(last, ()))

    def held_callee(self, name: str) -> list[tuple[ModuleIndex, str]]:
        """What a call through an object a class holds runs: a method of
        it (`self.memory.sample(...)`: `held_method`), else the object
        itself (`self.attention(x)`: `held_instance`), else the functions
        the class binds to that attribute (`self.loss_fn = dice`)."""
        return self.held_method(name) or self.held_instance(name) or self.held_function(name)

    def held_function(self, name: str) -> list[tuple[ModuleIndex, str]]:
        """`Trainer.loss_fn` (`self.loss_fn(...)` in a method of `Trainer`,
        or in a step nested in one): the functions `Trainer`, its project
        bases or subclasses bind there (`held_functions`)."""
        owner, _, attr = name.rpartition(".")
        found: list[tuple[ModuleIndex, str]] = []
        for index, qualname in self._find(owner) if owner else ():
            if qualname in index.classes:
                found += self.held_functions(index, qualname, attr)
        return found

    def held_attributes(
        self, index: ModuleIndex, class_qualname: str
    ) -> dict[str, tuple[str, ...]]:
        """What the class may keep in each `self.<attr>`, as `index` names
        it: what a call built (`self.net = Net()`: `Net`), or, for `self.noise
        = noise` in `__init__`, the project classes whose objects the call
        sites building the class pass there, when every site passes one
        (qualified: `ModuleIndex.param_classes` of its `__init__`)."""
        info = index.classes.get(class_qualname)
        if info is None:
            return {}
        passed = index.param_classes.get(f"{class_qualname}.__init__", {})
        held = {attr: (callee,) for attr, callee in info.held_objects.items()}
        held.update(self._absorbed(index, class_qualname, passed))
        # What the call sites pass says more than a parameter's annotation.
        held.update(
            (attr, passed[param])
            for attr, param in info.held_parameters.items()
            if passed.get(param)
        )
        return held

    @staticmethod
    def _absorbed(
        index: ModuleIndex, class_qualname: str, passed: dict[str, tuple[str, ...]]
    ) -> dict[str, tuple[str, ...]]:
        """What a class that keeps its keyword arguments as attributes
        (`ClassInfo.absorbs_keywords`) holds in each, from what its call
        sites pass (`passed`: by parameter of its `__init__`): the keywords
        no named parameter takes."""
        info = index.classes.get(class_qualname)
        init = index.functions.get(f"{class_qualname}.__init__")
        if info is None or init is None or not info.absorbs_keywords:
            return {}
        return {key: value for key, value in passed.items() if key not in init.params and value}

    def held_objects(self, index: ModuleIndex, class_qualname: str, attr: str) -> tuple[str, ...]:
        """`held_attributes` of one attribute."""
        return self.held_attributes(index, class_qualname).get(attr, ())

    def held_instance(self, name: str) -> list[tuple[ModuleIndex, str]]:
        """`Agent.net` (`self.net(x)` in a method of `Agent`): what calling
        the object `Agent` holds in `self.net` (`self.net = Net()`) runs,
        when the project defines its class (`call_method`)."""
        owner, _, attr = name.rpartition(".")
        if not owner:
            return []
        found = []
        for index, qualname in self._find(owner):
            for held in self.held_objects(index, qualname, attr):
                target = held_class(index, held, self)
                if target is not None:
                    found += self.call_method(*target)
        return found

    def held_method(self, name: str) -> list[tuple[ModuleIndex, str]]:
        """`Agent.memory.sample` (`self.memory.sample(...)` in a method of
        `Agent`): the `sample` method of the project class whose object
        `Agent` holds in `self.memory` (`self.memory = ReplayBuffer(...)`).
        Used for what call sites pass, and for tracing: a traced method's
        held objects' methods run in its trace (a step not traced yet that
        calls them is refused instead: `step_hazards`)."""
        if name.count(".") < 2:
            return []
        owner, attr, method = name.rsplit(".", 2)
        found = []
        for index, qualname in self._find(owner):
            for held in self.held_objects(index, qualname, attr):
                target = held_class(index, held, self)
                if target is not None and f"{target[1]}.{method}" in target[0].functions:
                    found.append((target[0], f"{target[1]}.{method}"))
        return found

    def _find(self, name: str) -> list[tuple[ModuleIndex, str]]:
        known = self.found.get(name)
        if known is not None:
            return known
        dotted_name = "." in name
        tail = "." + name
        known = [
            (index, qualname)
            for index, qualname, full in self.by_last.get(name.rpartition(".")[2], ())
            if (full == name or full.endswith(tail)) and (dotted_name or not index.module)
        ]
        prefix = SOURCE_FOLDER + "."
        if not known and name.startswith(prefix):
            # Module names leave a leading `src/` out (`module_name_for`); a
            # project that imports its `src` as a package (`from
            # src.dataset import load`) names the same module with it.
            known = self._find(name[len(prefix) :])
        if not known and dotted_name:
            self.found[name] = known  # a cycle of star imports ends here
            known = (
                self._reexported(name) or self._inherited(name) or self._from_unread_package(name)
            )
        self.found[name] = known
        return known

    def _from_unread_package(self, name: str) -> list[tuple[ModuleIndex, str]]:
        """`pkg.GanBasedTrainer` (`from pkg import GanBasedTrainer`) where the
        package's `__init__.py` is not among the files read (a subset of a
        project checked): the one definition of that name in a module of
        the package, which is what such an `__init__` re-exports. Nothing
        when the `__init__` was read (it re-exports what it says), or when
        several modules define the name."""
        found: list[tuple[ModuleIndex, str]] = []
        last = name.rpartition(".")[2]
        for index, qualname, _full in self.by_last.get(last, ()):
            parent = index.module.rpartition(".")[0]
            if not parent or parent in self.read_modules:
                continue
            owner = name[: len(name) - len(qualname) - 1] if name.endswith("." + qualname) else ""
            if owner and (parent == owner or parent.endswith("." + owner)):
                found.append((index, qualname))
        return found if len(found) == 1 else []

    def _inherited(self, name: str) -> list[tuple[ModuleIndex, str]]:
        """`pkg.Trainer.loss_fn` for a project class `Trainer` that does not
        define `loss_fn`: the method it inherits from its project bases
        (`self.loss_fn(...)` in a method of `Trainer`)."""
        owner, _, method = name.rpartition(".")
        found: list[tuple[ModuleIndex, str]] = []
        for index, qualname in self._find(owner) if owner else ():
            if qualname in index.classes:
                found += self._defining(index, qualname, [method])
        return found

    def self_call_targets(
        self, index: ModuleIndex, caller: FunctionInfo | None, callee: str
    ) -> list[tuple[ModuleIndex, str]]:
        """What a call `callee` (as `index` names it) in the method `caller`
        runs: a definition (`find`), and for `self.method(...)` also the
        overrides in the project's subclasses of the caller's class (an
        object of one runs the inherited caller)."""
        found = self.find(callee, index)
        owner = caller.class_name if caller is not None else None
        if owner and owner in index.classes:
            method = callee.rpartition(".")[2]
            if callee == index.qualify(f"{owner}.{method}"):
                found = found + self.overriding_methods(index, owner, method)
                if not found:
                    found = self.held_functions(index, owner, method)
        return found

    def held_functions(
        self, index: ModuleIndex, class_qualname: str, attr: str
    ) -> list[tuple[ModuleIndex, str]]:
        """The functions `self.<attr>(...)` in a method of the class may
        call: those the class, its project bases or its subclasses bind
        there (`self.attention_fn = stochastic_attention` in a subclass
        whose inherited `call` runs `self.attention_fn(q, k, v)`), or what
        the function whose result it holds returns (`held_objects`)."""
        classes = [(index, class_qualname)]
        classes += self._bases(index, class_qualname)
        classes += self._subclasses(index, class_qualname)
        found: list[tuple[ModuleIndex, str]] = []
        for owner_index, owner in classes:
            info = owner_index.classes.get(owner)
            if info is None:
                continue
            names = list(info.held_functions.get(attr, ()))
            param = info.held_parameters.get(attr)
            passed = owner_index.param_functions.get(f"{owner}.__init__", {})
            if param is not None:
                # `self.loss_fn = loss_fn` in `__init__`: what its callers pass.
                names += passed.get(param, ())
            names += self._absorbed(owner_index, owner, passed).get(attr, ())
            made_by = info.held_objects.get(attr)
            if made_by is not None and any(
                maker in maker_index.functions
                for maker_index, maker in self.find(made_by, owner_index)
            ):
                # `self.loss_fn = select_loss(name)`: what that function returns.
                names.append(f"{made_by}()")
            for name in names:
                found += [
                    (held_index, held)
                    for held_index, held in self.find(name, owner_index)
                    if held in held_index.functions and (held_index, held) not in found
                ]
        return found

    def _bases(
        self, index: ModuleIndex, class_qualname: str, depth: int = 0
    ) -> list[tuple[ModuleIndex, str]]:
        """The class's project bases, at any depth."""
        info = index.classes.get(class_qualname)
        if info is None or depth > 10:
            return []
        found: list[tuple[ModuleIndex, str]] = []
        for base in info.bases:
            for base_index, base_qualname in self.find(base, index):
                if base_qualname in base_index.classes:
                    found.append((base_index, base_qualname))
                    found += self._bases(base_index, base_qualname, depth + 1)
        return found

    def overriding_methods(
        self, index: ModuleIndex, class_qualname: str, method: str
    ) -> list[tuple[ModuleIndex, str]]:
        """The methods `method` of the project's subclasses of the class,
        at any depth: where `self.method(...)` in one of its methods lands
        when `self` is an object of a subclass (`DefaultAgent.train`
        differentiating `self.loss_fn`, which `DecoderAgent` overrides)."""
        return [
            (sub_index, f"{sub}.{method}")
            for sub_index, sub in self._subclasses(index, class_qualname)
            if f"{sub}.{method}" in sub_index.functions
        ]

    def _subclasses(self, index: ModuleIndex, class_qualname: str) -> list[tuple[ModuleIndex, str]]:
        """The project's subclasses of the class, at any depth."""
        if self.subclasses is None:
            self.subclasses = {}
            for sub_index in self.indexes:
                for qualname, info in sub_index.classes.items():
                    for base in info.bases:
                        for base_index, base_qualname in self.find(base, sub_index):
                            if base_qualname in base_index.classes:
                                key = (base_index.path, base_qualname)
                                self.subclasses.setdefault(key, []).append((sub_index, qualname))
        found: list[tuple[ModuleIndex, str]] = []
        seen = {(index.path, class_qualname)}
        pending = [(index, class_qualname)]
        while pending:
            owner_index, owner = pending.pop()
            for sub_index, sub in self.subclasses.get((owner_index.path, owner), ()):
                if (sub_index.path, sub) in seen:
                    continue
                seen.add((sub_index.path, sub))
                pending.append((sub_index, sub))
                found.append((sub_index, sub))
        return found

    def _reexported(self, name: str) -> list[tuple[ModuleIndex, str]]:
        """A name another module imports and so binds: `pkg.f` where
        `pkg/__init__.py` says `from .helpers import f` or `from .helpers
        import *`, or `pkg.Net.call` for a class `Net` it imports by name:
        the definition in `pkg.helpers` (and so on through further imports)."""
        if self.reexport_hops >= MAX_REEXPORT_HOPS:
            return []
        self.reexport_hops += 1
        try:
            return self._reexported_once(name)
        finally:
            self.reexport_hops -= 1

    def _reexported_once(self, name: str) -> list[tuple[ModuleIndex, str]]:
        parts = name.split(".")
        found: list[tuple[ModuleIndex, str]] = []
        for cut in range(len(parts) - 1, 0, -1):
            owner, first, rest = ".".join(parts[:cut]), parts[cut], parts[cut + 1 :]
            for module in self._modules_named(owner):
                target = self.imported.get(module, {}).get(first)
                if target is not None and target != name:
                    found.extend(self._find(".".join([target, *rest])))
                if rest:
                    continue  # a star import is followed for the name it exports
                for source in self.reexports.get(module, ()):
                    found.extend(self._find(f"{source}.{first}"))
            if found:
                break
        unique: dict[tuple[int, str], tuple[ModuleIndex, str]] = {}
        for index, qualname in found:
            unique.setdefault((id(index), qualname), (index, qualname))
        return list(unique.values())

    def _modules_named(self, owner: str) -> list[str]:
        """Project modules `owner` may name, tolerating a leading package
        either side (`losses` for `pkg.losses`): each ends with `owner`'s
        last component, so only those are compared."""
        known = self.modules_named.get(owner)
        if known is None:
            known = [
                module
                for module in self.modules_by_last.get(owner.rpartition(".")[2], ())
                if module == owner or module.endswith("." + owner) or owner.endswith("." + module)
            ]
            self.modules_named[owner] = known
        return known


def keras_base(
    index: ModuleIndex, class_qualname: str, lookup: ProjectLookup, depth: int = 0
) -> str | None:
    """The Keras base (`Loss`, `Layer`, ...) a class derives from, following project classes."""
    if depth > 10:
        return None
    info = index.classes.get(class_qualname)
    if info is None:
        return None
    for base in info.bases:
        leaf = traced_base_leaf(base)
        if leaf in FRAMEWORK_TRACED_METHODS:
            return leaf
        for other_index, other_qualname in lookup.find(base, index):
            if other_qualname in other_index.classes:
                found = keras_base(other_index, other_qualname, lookup, depth + 1)
                if found:
                    return found
    return None


def _module_named(name: str, by_module: dict[str, ModuleIndex]) -> ModuleIndex | None:
    """The project module `name` refers to, tolerating a package prefix
    that differs (`pkg.utils` against a module indexed as `utils`)."""
    found = by_module.get(name)
    if found is not None:
        return found
    for module, index in by_module.items():
        if module and (name.endswith("." + module) or module.endswith("." + name)):
            return index
    return None


def _exported_names(index: ModuleIndex) -> dict[str, str]:
    """What `from <index's module> import *` binds, as far as pass 1 knows:
    the module's public imports and top-level definitions."""
    names = {alias: target for alias, target in index.imports.items() if not alias.startswith("_")}
    names.update(
        (name, index.qualify(name))
        for name in (*index.functions, *index.classes)
        if "." not in name and not name.startswith("_")
    )
    return names


def record_star_names(indexes: list[ModuleIndex]) -> None:
    """What names other project modules bring mean, where pass 1 could not
    tell: `from rlzoo.common.utils import *` in a module that never imports
    NumPy itself, then `np.array(...)` (followed through that module's own
    star imports); and `from pkg import tf` where `pkg/__init__.py` does
    `import tensorflow as tf`, then `tf.numpy_function(...)`. The file is
    then indexed again with those names (`build_index`'s `star_names`)."""
    suffixes: dict[str, ModuleIndex] = {}
    for index in indexes:
        parts = index.module.split(".") if index.module else []
        for i in range(len(parts)):
            suffixes.setdefault(".".join(parts[i:]), index)
    if not suffixes:
        return
    by_module = {index.module: index for index in indexes}
    for _round in range(5):  # star imports of star imports, a few levels deep
        changed = False
        for index in indexes:
            names: dict[str, str] = {}
            unseen: list[str] = []
            for module in index.star_imports:
                source = _module_named(module, by_module)
                if source is None or source is index:
                    unseen.append(module)
                    continue
                for alias, target in {**source.star_names, **_exported_names(source)}.items():
                    names.setdefault(alias, target)
            for alias, brought in _reexported_imports(index, suffixes).items():
                names.setdefault(alias, brought)
            if names != index.star_names or unseen != index.unseen_star_imports:
                index.star_names, index.unseen_star_imports = names, unseen
                changed = True
        if not changed:
            break


def _reexported_imports(index: ModuleIndex, suffixes: dict[str, ModuleIndex]) -> dict[str, str]:
    """`tf` -> `tensorflow` for `from pkg import tf` when the project module
    `pkg` binds `tf` to an import of an outside package."""
    found: dict[str, str] = {}
    for alias, target in index.imports.items():
        module, _, name = target.rpartition(".")
        if not module or target.split(".", 1)[0] in EXTERNAL_ROOTS:
            continue
        parts = module.split(".")
        source = next(
            (s for i in range(len(parts)) if (s := suffixes.get(".".join(parts[i:]))) is not None),
            None,
        )
        if source is None or source is index:
            continue
        brought = source.star_names.get(name) or source.imports.get(name)
        if brought and brought.split(".", 1)[0] in EXTERNAL_ROOTS:
            found[alias] = brought
    return found


PLAIN_BASES = frozenset({"object", "ABC", "Generic", "NamedTuple", "Enum"})


PLAIN_BASE_MODULES = ("abc.", "typing.", "collections.", "enum.", "dataclasses.")


def is_plain_class(
    index: ModuleIndex, class_qualname: str, lookup: ProjectLookup, depth: int = 0
) -> bool:
    """Whether a project class derives only from plain Python: no base, or
    `object`, the standard library's abstract bases, and other plain
    project classes. A base the project does not define (a Keras model, a
    `tf.Module`, a package's class) makes it not plain."""
    info = index.classes.get(class_qualname)
    if info is None or depth > 10:
        return False
    for base in info.bases:
        if base in PLAIN_BASES or base.startswith(PLAIN_BASE_MODULES):
            continue
        found = [(i, q) for i, q in lookup.find(base, index) if q in i.classes]
        if not found or not all(is_plain_class(i, q, lookup, depth + 1) for i, q in found):
            return False
    return True


def held_class(
    index: ModuleIndex, callee: str, lookup: ProjectLookup
) -> tuple[ModuleIndex, str] | None:
    """The project class `callee` (as `index` names it) builds, looked up
    through `from module import *` for a bare name."""
    found = named_classes(index, callee, lookup)
    return found[0] if found else None


def named_classes(
    index: ModuleIndex, callee: str, lookup: ProjectLookup
) -> list[tuple[ModuleIndex, str]]:
    """Every project class `callee` (as `index` names it) may build: two
    modules may define a class under the name (`a/nets.py`, `b/nets.py`)."""
    return class_candidates(index, callee, lookup)[1]


def class_candidates(
    index: ModuleIndex, callee: str, lookup: ProjectLookup
) -> tuple[str, list[tuple[ModuleIndex, str]]]:
    """`named_classes`, with the name they were found under (`callee`, or
    it in a star-imported module)."""
    names = [callee]
    if "." not in callee:
        names += [f"{module}.{callee}" for module in index.star_imports]
    for name in names:
        found = [(i, target) for i, target in lookup.find(name, index) if target in i.classes]
        if found:
            return name, found
    return callee, []


def importable(
    importer: ModuleIndex, name: str, found: list[tuple[ModuleIndex, str]]
) -> list[tuple[ModuleIndex, str]]:
    """Of the classes `found` for the dotted `name` written in `importer`,
    those Python can import from where `importer` runs: the folder their
    module path (`model/net.py` for `model.net.TextNet`) hangs from holds
    `importer`'s own folder (a script's folder, or the project's root above
    it). Two scripts of a collection each import their own `networks.py`;
    the lookup, tolerant of leading packages, finds both. A class reached
    another way (a package re-exporting it) is kept."""
    folder = _folder_parts(importer.path)
    kept = []
    for target_index, qualname in found:
        module = name[: -len(qualname) - 1] if name.endswith("." + qualname) else ""
        parts = _module_parts(target_index.path)
        wanted = tuple(module.split(".")) if module else ()
        if not wanted or parts[-len(wanted) :] != wanted:
            kept.append((target_index, qualname))
            continue
        root = parts[: -len(wanted)]
        if folder[: len(root)] == root:
            kept.append((target_index, qualname))
    return kept


@cache
def _folder_parts(path: str) -> tuple[str, ...]:
    """The folders `path` (a file) hangs from; asked for every class a
    name may import, so kept per path."""
    return PurePath(path).parent.parts


@cache
def _module_parts(path: str) -> tuple[str, ...]:
    """The parts of the module path of the file `path`: `model/net.py` and
    `model/net/__init__.py` both give `model`, `net`."""
    parts = PurePath(path).with_suffix("").parts
    return parts[:-1] if parts and parts[-1] == "__init__" else parts
