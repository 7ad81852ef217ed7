"""Which Keras a module is written for, read from its source: Keras 2, Keras 3
or either.

TensorFlow 2.16 and later ship Keras 3 as `tf.keras`; code written for
Keras 2 (TensorFlow up to 2.15, or `tf_keras`) often fails there before the
rewrite is even reached ("module 'keras.layers' has no attribute
'experimental'"), and Keras 3 code fails under Keras 2. Verify runs each
module on the Keras it is written for (`legacy_keras`), so the verdict is
about the rewrite, not about the environment.

The fact rests on evidence in `KERAS_TWO` and `KERAS_THREE`: spellings that
fail on one Keras and work on the other, each with the reason, measured on
TensorFlow 2.21 (Keras 3.15) against `tf_keras` 2.21. Spellings that work on
both (`tf.compat.v1.keras`, `tensorflow.python.keras`, `K.get_value`,
`tf.keras.losses.Reduction`, `keras.src`, which Keras 2.13 to 2.15 have too)
are no evidence. A name counts whichever package it is reached through
(`tf.keras`, `tensorflow.keras`, `tf_keras`, `keras`); a method counts only
where its receiver is known to be a Keras object of the kind that lost it
(`.lr` of an optimizer the module builds or of `model.optimizer`), or where
its name is Keras' alone (`fit_generator`). Any Keras 3 evidence wins: Keras
3 code never runs on Keras 2.

Standard library only (`ast`): no TensorFlow is imported to read it.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass, replace

# Names under the Keras package (`layers.experimental` for
# `tf.keras.layers.experimental.preprocessing.Rescaling`) that Keras 3 lacks
# and Keras 2 has; a key covers the names below it.
KERAS_TWO: dict[str, str] = {
    "layers.experimental": "Keras 3 has no `layers.experimental` (its preprocessing layers "
    "moved to `layers`)",
    "optimizers.legacy": "Keras 3's `optimizers.legacy` optimizers raise ImportError when built",
    "optimizers.experimental": "Keras 3 has no `optimizers.experimental`",
    "experimental": "Keras 3 has no `keras.experimental`",
    "estimator": "Keras 3 has no `keras.estimator`",
    "layers.DenseFeatures": "Keras 3 has no `DenseFeatures` (feature columns)",
    "backend.learning_phase": "Keras 3 has no learning phase",
    "backend.set_learning_phase": "Keras 3 has no learning phase",
    "backend.placeholder": "Keras 3 has no graph-mode `backend.placeholder`",
    "backend.function": "Keras 3 has no graph-mode `backend.function`",
}

# Names Keras 3 has and Keras 2 (`tf_keras`) lacks.
KERAS_THREE: dict[str, str] = {
    "ops": "`keras.ops` is Keras 3's",
    "random": "`keras.random` is Keras 3's",
    "config": "`keras.config` is Keras 3's",
    "tree": "`keras.tree` is Keras 3's",
    "distribution": "`keras.distribution` is Keras 3's",
    "Variable": "`keras.Variable` is Keras 3's",
    "utils.PyDataset": "`PyDataset` is Keras 3's",
    "layers.TFSMLayer": "`TFSMLayer` is Keras 3's",
}

# Methods only Keras 2 objects have (Keras 3 removed them from every class).
KERAS_TWO_METHODS: dict[str, str] = {
    "fit_generator": "Keras 3 models have no `fit_generator` (use `fit`)",
    "evaluate_generator": "Keras 3 models have no `evaluate_generator` (use `evaluate`)",
    "predict_generator": "Keras 3 models have no `predict_generator` (use `predict`)",
    "state_updates": "Keras 3 models have no `state_updates`",
    "save_spec": "Keras 3 models have no `save_spec`",
    "add_update": "Keras 3 layers have no `add_update`",
    "get_scaled_loss": "Keras 3's LossScaleOptimizer has no `get_scaled_loss`",
    "get_unscaled_gradients": "Keras 3's LossScaleOptimizer has no `get_unscaled_gradients`",
}

# Keyword arguments of methods that Keras 3 rejects ("unexpected keyword
# argument"): method -> keyword -> reason.
KERAS_TWO_KEYWORDS: dict[str, dict[str, str]] = {
    "compile": {
        "experimental_run_tf_function": "Keras 3's `compile` has no `experimental_run_tf_function`",
        "experimental_steps_per_execution": "Keras 3's `compile` has no "
        "`experimental_steps_per_execution`",
    },
    "apply_gradients": {
        "experimental_aggregate_gradients": "Keras 3's `apply_gradients` has no "
        "`experimental_aggregate_gradients`",
    },
    "fit": {
        "workers": "Keras 3's `fit` has no `workers`",
        "use_multiprocessing": "Keras 3's `fit` has no `use_multiprocessing`",
    },
}

# Keyword arguments of Keras constructors that Keras 3 rejects: the Keras
# name of the constructor (a key covers the names below it) -> keyword -> reason.
KERAS_TWO_CONSTRUCTOR_KEYWORDS: dict[str, dict[str, str]] = {
    "optimizers": {"lr": "Keras 3 optimizers take `learning_rate`, not `lr`"},
    "layers.BatchNormalization": {"fused": "Keras 3's `BatchNormalization` has no `fused`"},
    "regularizers.l2": {"l": "Keras 3's `l2` takes `l2`, not `l`"},
    "regularizers.l1": {"l": "Keras 3's `l1` takes `l1`, not `l`"},
}

# Methods Keras 3 removed from one kind of object only: the kind (the Keras
# names whose calls build it) -> method -> reason. `reset_states` stays on
# Keras 3's recurrent layers, so only metrics' and models' count.
KERAS_TWO_MEMBERS: dict[tuple[str, ...], dict[str, str]] = {
    ("optimizers",): {
        "lr": "Keras 3 optimizers have no `lr` (only `learning_rate`)",
        "minimize": "Keras 3 optimizers have no `minimize`",
    },
    ("metrics",): {"reset_states": "Keras 3 metrics have no `reset_states` (now `reset_state`)"},
    ("Model", "Sequential", "models.Model", "models.Sequential"): {
        "reset_states": "Keras 3 models have no `reset_states`",
    },
}

_PACKAGES = (("tf_keras", "tf_keras"), ("tensorflow.keras", "tf.keras"), ("keras", "keras"))


@dataclass(frozen=True)
class Evidence:
    """One spelling that ties the module to one Keras."""

    keras: int  # 2 or 3
    spelling: str  # as the module reaches it: `tf.keras.optimizers.legacy`
    line: int
    reason: str
    # The file it is in, when not the module itself (a module it imports).
    place: str | None = None

    def describe(self) -> str:
        where = f"{self.place}, line {self.line}" if self.place else f"line {self.line}"
        return f"{self.spelling} ({where}: {self.reason})"


@dataclass(frozen=True)
class KerasFlavour:
    """The Keras a module is written for: 2, 3, or None when either runs it."""

    keras: int | None
    evidence: tuple[Evidence, ...] = ()

    def why(self) -> str:
        """`the module uses tf.keras.optimizers.legacy (line 4: ...)`, naming
        the first evidence for its Keras (and how many more there are)."""
        mine = [e for e in self.evidence if e.keras == self.keras]
        if not mine:
            return "the module uses no Keras name of one version only"
        more = f" and {len(mine) - 1} more" if len(mine) > 1 else ""
        who = "the module" if mine[0].place is None else "a module it imports"
        return f"{who} uses {mine[0].describe()}{more}"


NEUTRAL = KerasFlavour(None)


def flavour_of(*sources: str | None, imported: Mapping[str, str] | None = None) -> KerasFlavour:
    """The Keras the module (and the other sources it runs with, such as
    the file of its caller) is written for; `imported`: the sources of the
    project's modules it imports, by the file name a reason shows."""
    found: dict[str, Evidence] = {}  # a spelling once, from the first source using it
    named = [(None, source) for source in sources] + list((imported or {}).items())
    for place, source in named:
        if not source:
            continue
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError):
            continue
        for one in _Reader(tree).evidence():
            found.setdefault(one.spelling, replace(one, place=place))
    evidence = list(found.values())
    if any(e.keras == 3 for e in evidence):
        return KerasFlavour(3, tuple(evidence))
    if evidence:
        return KerasFlavour(2, tuple(evidence))
    return NEUTRAL


def _dotted(node: ast.AST) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


class _Reader:
    """Three walks over a module's tree: its imports; what its variables
    were built by and whether it uses Keras at all; then every name, call
    and attribute measured against the tables."""

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.imports: dict[str, str] = {}  # local name -> qualified name
        self.uses_keras = False
        # What a variable (`opt`, `self.train_loss`) was built by: its Keras name.
        self.built_by: dict[str, str] = {}
        self.found: dict[str, Evidence] = {}  # spelling -> its first use

    def evidence(self) -> list[Evidence]:
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    head = alias.name.split(".")[0]
                    self.imports[alias.asname or head] = alias.name if alias.asname else head
                    self._name(alias.name, node.lineno)
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                for alias in node.names:
                    if alias.name == "*":
                        self._name(node.module, node.lineno)
                        continue
                    qualified = f"{node.module}.{alias.name}"
                    self.imports[alias.asname or alias.name] = qualified
                    self._name(qualified, node.lineno)
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Attribute) and self._keras(node) is not None:
                self.uses_keras = True
            elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                built = self._keras(node.value.func)
                for target in node.targets if built is not None else ():
                    name = _dotted(target)
                    if name is not None:
                        self.built_by[name] = built[1]
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Attribute):
                self._attribute(node)
            elif isinstance(node, ast.Call):
                self._call(node)
        return sorted(self.found.values(), key=lambda e: (e.line, e.spelling))

    def _resolve(self, node: ast.AST) -> str | None:
        """The qualified name of a dotted expression through the imports."""
        name = _dotted(node)
        if name is None:
            return None
        head, _, rest = name.partition(".")
        if head not in self.imports:
            return None
        target = self.imports[head]
        return f"{target}.{rest}" if rest else target

    def _keras(self, node: ast.AST) -> tuple[str, str] | None:
        resolved = self._resolve(node)
        return _split(resolved) if resolved else None

    def _add(self, keras: int, spelling: str, line: int, reason: str) -> None:
        known = self.found.get(spelling)
        if known is None or line < known.line:
            self.found[spelling] = Evidence(keras, spelling, line, reason)

    def _name(self, qualified: str, line: int) -> None:
        """Evidence in a Keras name the module imports or reaches."""
        split = _split(qualified)
        if split is None:
            return
        self.uses_keras = True
        package, path = split
        if package == "tf_keras":
            self._add(2, "tf_keras", line, "tf_keras is Keras 2, as a package of its own")
            return
        for keras, table in ((3, KERAS_THREE), (2, KERAS_TWO)):
            key = _entry(table, path)
            if key is not None:
                self._add(keras, f"{package}.{key}", line, table[key])
                return

    def _attribute(self, node: ast.Attribute) -> None:
        resolved = self._resolve(node)
        if resolved is not None and _split(resolved) is not None:
            self._name(resolved, node.lineno)
            return
        if not self.uses_keras:
            return
        if node.attr in KERAS_TWO_METHODS:
            self._add(2, f".{node.attr}", node.lineno, KERAS_TWO_METHODS[node.attr])
            return
        receiver = _dotted(node.value)
        kind = self._kind(node.value, receiver)
        members = _MEMBERS.get(_entry(_MEMBERS, kind) or "", {}) if kind else {}
        if node.attr in members:
            self._add(2, f"{receiver or '...'}.{node.attr}", node.lineno, members[node.attr])

    def _kind(self, value: ast.AST, receiver: str | None) -> str | None:
        """The Keras name that built the object `value` is: the call a
        variable was assigned from, or `optimizers` for `model.optimizer`."""
        if receiver is not None and receiver in self.built_by:
            return self.built_by[receiver]
        if isinstance(value, ast.Attribute) and value.attr == "optimizer":
            return "optimizers"
        return None

    def _call(self, node: ast.Call) -> None:
        keywords = [k.arg for k in node.keywords if k.arg]
        if self.uses_keras:
            self._auto_reduction(node)
        built = self._keras(node.func)
        if built is not None:
            key = _entry(KERAS_TWO_CONSTRUCTOR_KEYWORDS, built[1])
            entries = KERAS_TWO_CONSTRUCTOR_KEYWORDS.get(key or "", {})
            leaf = built[1].rsplit(".", 1)[-1]
            for keyword in keywords:
                if keyword in entries:
                    self._add(2, f"{leaf}({keyword}=...)", node.lineno, entries[keyword])
            return
        if not isinstance(node.func, ast.Attribute) or not self.uses_keras:
            return
        method = node.func.attr
        for keyword in keywords:
            reason = KERAS_TWO_KEYWORDS.get(method, {}).get(keyword)
            if reason is not None:
                self._add(2, f".{method}({keyword}=...)", node.lineno, reason)
        if method in ("add_weight", "add_variable") and _dotted(node.func.value) == "self":
            self._weight(node, method)

    def _auto_reduction(self, node: ast.Call) -> None:
        """`reduction=Reduction.AUTO` (or `"auto"`) given to a loss: Keras
        3's losses refuse it when built ("Invalid value for argument
        `reduction`"), though Keras 3 still names `Reduction.AUTO`."""
        for keyword in node.keywords:
            value = keyword.value
            if keyword.arg != "reduction":
                continue
            if (isinstance(value, ast.Attribute) and value.attr == "AUTO") or (
                isinstance(value, ast.Constant) and value.value == "auto"
            ):
                reason = "Keras 3's losses refuse the `auto` reduction when built"
                self._add(2, f"reduction={ast.unparse(value)}", node.lineno, reason)

    def _weight(self, node: ast.Call, method: str) -> None:
        """`self.add_weight("kernel", shape)`: Keras 2 takes the name first,
        Keras 3 the shape (and refuses a positional name); Keras 3's
        `add_variable` requires the initializer Keras 2's did not."""
        first = node.args[0] if node.args else None
        line = node.lineno
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            reason = f"Keras 3's `{method}` takes the shape first and the name by keyword"
            self._add(2, f"self.{method}({first.value!r}, ...)", line, reason)
        elif isinstance(first, (ast.Tuple, ast.List)) and method == "add_weight":
            reason = "Keras 2's `add_weight` takes the name first, Keras 3's the shape"
            self._add(3, "self.add_weight(<shape>, ...)", line, reason)
        elif (
            method == "add_variable"
            and len(node.args) < 2
            and not any(k.arg == "initializer" for k in node.keywords)
        ):
            reason = "Keras 3's `add_variable` requires an initializer"
            self._add(2, "self.add_variable(...)", line, reason)


# KERAS_TWO_MEMBERS by each Keras name of a kind.
_MEMBERS = {name: members for kinds, members in KERAS_TWO_MEMBERS.items() for name in kinds}


def _split(qualified: str) -> tuple[str, str] | None:
    """`(package as shown, path under it)` of a Keras name
    (`tensorflow.keras.layers.Dense` -> `("tf.keras", "layers.Dense")`)."""
    for package, shown in _PACKAGES:
        if qualified == package:
            return shown, ""
        if qualified.startswith(package + "."):
            return shown, qualified[len(package) + 1 :]
    return None


def _entry(table: Mapping[str, object], path: str) -> str | None:
    """The key of `table` that `path` is or lies under."""
    for key in table:
        if path == key or path.startswith(key + "."):
            return key
    return None


def imported_modules(source: str) -> list[tuple[int, str]]:
    """The modules `source` imports, as `(level, dotted name)`: `from .scale
    import SCALE` is `(1, "scale")`, `from pkg import util` gives both
    `pkg` and `pkg.util` (either may be the module)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(0, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if base:
                found.append((node.level, base))
            for alias in node.names:
                if alias.name != "*":
                    found.append((node.level, f"{base}.{alias.name}" if base else alias.name))
    return list(dict.fromkeys(found))
